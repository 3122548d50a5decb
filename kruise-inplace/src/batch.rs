//! Writing an update spec into a pod, one batch of containers at a time (upstream's
//! `defaultPatchUpdateSpecToPod`).
//!
//! 1. The `next*` maps of the state are cleared, and `metaDataPatch` is applied to the pod's metadata.
//! 2. The candidates are the pod's containers named in the spec's images, env metadata or resources. Those
//!    without a launch priority ([`crate::launch_priority::barrier_priority`]) are in this batch, and so are
//!    those with the highest priority among the rest.
//! 3. Any other candidate whose env metadata shares a label or annotation key with a container in the batch
//!    joins it, repeated until nothing changes (their env vars read the same key, which is written now).
//! 4. Batch containers get their new image (and, with vertical scaling, their new cpu/memory); the others'
//!    images, resources and env metadata go to `nextContainerImages`, `nextContainerResources`,
//!    `nextContainerRefMetadata`.
//! 5. For every container whose image changes now and that has a status, `lastContainerStatuses` records its
//!    current `imageID` — **only when the container has no record yet** (the first record wins: upstream's
//!    "else" branch updates a copy and has no effect).
//! 6. The env metadata of batch containers is written into the pod's labels and annotations.
//! 7. `preCheckBeforeNext` lists the batch (sorted) when something is left for later, and a
//!    `containerBatchesRecord` entry with `now` and the batch is appended. The state annotation is written.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, Pod, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::inplace::{
    ContainerRefMetadata, InPlaceUpdateContainerBatch, InPlaceUpdateContainerStatus,
    InPlaceUpdatePreCheckBeforeNext, InPlaceUpdateState,
};
use serde_json::Value;

use crate::error::{Error, pod_key};
use crate::launch_priority::barrier_priority;
use crate::options::FeatureGates;
use crate::state;
use crate::strategic_merge;
use crate::update_spec::UpdateSpec;

/// The resources upstream resizes in place.
const RESIZABLE: [&str; 2] = ["cpu", "memory"];

/// Writes the next batch of `spec` into `pod` and records it in `state` (which is also written to the pod's
/// state annotation).
///
/// # Errors
/// [`Error::MetadataPatch`] when `metaDataPatch` cannot be applied.
pub fn patch_spec_to_pod(
    pod: &mut Pod,
    spec: &UpdateSpec,
    state: &mut InPlaceUpdateState,
    now: Timestamp,
    gates: &FeatureGates,
) -> Result<(), Error> {
    state.next_container_images.clear();
    state.next_container_ref_metadata.clear();
    state.next_container_resources.clear();

    if let Some(patch) = &spec.meta_data_patch {
        apply_metadata_patch(pod, patch)?;
    }
    pod.metadata.labels.get_or_insert_with(BTreeMap::new);
    pod.metadata.annotations.get_or_insert_with(BTreeMap::new);

    let containers: &mut [Container] = match pod.spec.as_mut() {
        Some(pod_spec) => &mut pod_spec.containers,
        None => &mut [],
    };
    let batch = choose_batch(containers, spec);

    let mut image_changed = BTreeSet::new();
    for container in containers.iter_mut() {
        let Some(image) = spec.container_images.get(&container.name) else {
            continue;
        };
        if batch.contains(&container.name) {
            container.image = Some(image.clone());
            image_changed.insert(container.name.clone());
        } else {
            state
                .next_container_images
                .insert(container.name.clone(), image.clone());
        }
    }
    if gates.in_place_workload_vertical_scaling {
        for container in containers.iter_mut() {
            let Some(resources) = spec.container_resources.get(&container.name) else {
                continue;
            };
            if batch.contains(&container.name) {
                resize(container, resources);
            } else {
                state
                    .next_container_resources
                    .insert(container.name.clone(), resources.clone());
            }
        }
    }
    let statuses = pod
        .status
        .as_ref()
        .and_then(|status| status.container_statuses.as_ref());
    for status in statuses.into_iter().flatten() {
        if image_changed.contains(&status.name) {
            state
                .last_container_statuses
                .get_or_insert_with(BTreeMap::new)
                .entry(status.name.clone())
                .or_insert_with(|| InPlaceUpdateContainerStatus {
                    image_id: status.image_id.clone(),
                });
        }
    }

    for (name, metadata) in &spec.container_ref_metadata {
        if batch.contains(name) {
            let labels = pod.metadata.labels.get_or_insert_with(BTreeMap::new);
            labels.extend(metadata.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
            let annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
            annotations.extend(
                metadata
                    .annotations
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone())),
            );
        } else {
            state
                .next_container_ref_metadata
                .insert(name.clone(), metadata.clone());
        }
    }

    let batch: Vec<String> = batch.into_iter().collect();
    let more = !state.next_container_images.is_empty()
        || !state.next_container_ref_metadata.is_empty()
        || !state.next_container_resources.is_empty();
    state.pre_check_before_next = more.then(|| InPlaceUpdatePreCheckBeforeNext {
        containers_required_ready: batch.clone(),
    });
    state
        .container_batches_record
        .push(InPlaceUpdateContainerBatch {
            timestamp: Time(now),
            containers: batch,
        });
    state::write_state(pod, state);
    Ok(())
}

fn apply_metadata_patch(pod: &mut Pod, patch: &[u8]) -> Result<(), Error> {
    let error = |pod: &Pod, source| Error::MetadataPatch {
        pod: pod_key(pod),
        source,
    };
    let fields =
        strategic_merge::parse_metadata_patch(patch).map_err(|source| error(pod, source))?;
    if fields.is_empty() || merge_string_maps(&mut pod.metadata, &fields) {
        return Ok(());
    }
    let only_maps = fields.keys().all(|key| {
        let field = key
            .strip_prefix("$setElementOrder/")
            .or_else(|| key.strip_prefix("$deleteFromPrimitiveList/"))
            .unwrap_or(key);
        matches!(field, "labels" | "annotations" | "finalizers")
    });
    let metadata = &mut pod.metadata;
    let mut meta = serde_json::Map::new();
    if only_maps {
        // What calculate produces for pod templates: merge the three fields alone.
        let mut put = |key: &str, value: Option<Value>| {
            if let Some(value) = value {
                meta.insert(key.to_owned(), value);
            }
        };
        put("labels", metadata.labels.as_ref().map(to_value));
        put("annotations", metadata.annotations.as_ref().map(to_value));
        put("finalizers", metadata.finalizers.as_ref().map(to_value));
    } else if let Ok(Value::Object(whole)) = serde_json::to_value(&*metadata) {
        meta = whole;
    }
    strategic_merge::merge_object_meta(&mut meta, fields).map_err(|source| error(pod, source))?;
    let invalid =
        |json: serde_json::Error| strategic_merge::MergeError::Unsupported(json.to_string());
    if only_maps {
        fn take<T: serde::de::DeserializeOwned>(
            meta: &mut serde_json::Map<String, Value>,
            key: &str,
        ) -> Result<Option<T>, serde_json::Error> {
            meta.remove(key).map(serde_json::from_value).transpose()
        }
        let labels = take(&mut meta, "labels").map_err(invalid);
        let annotations = take(&mut meta, "annotations").map_err(invalid);
        let finalizers = take(&mut meta, "finalizers").map_err(invalid);
        match (labels, annotations, finalizers) {
            (Ok(labels), Ok(annotations), Ok(finalizers)) => {
                pod.metadata.labels = labels;
                pod.metadata.annotations = annotations;
                pod.metadata.finalizers = finalizers;
            }
            (Err(source), _, _) | (_, Err(source), _) | (_, _, Err(source)) => {
                return Err(error(pod, source));
            }
        }
    } else {
        match serde_json::from_value(Value::Object(meta)) {
            Ok(merged) => pod.metadata = merged,
            Err(json) => return Err(error(pod, invalid(json))),
        }
    }
    Ok(())
}

/// The common case, merged without JSON round trips: only `labels` and `annotations`, each `null` or an object
/// of strings and `null`s. Returns `false` (changing nothing) for any other patch.
fn merge_string_maps(
    metadata: &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    fields: &serde_json::Map<String, Value>,
) -> bool {
    let simple = fields.iter().all(|(key, value)| {
        (key == "labels" || key == "annotations")
            && match value {
                Value::Null => true,
                Value::Object(entries) => entries.values().all(|v| v.is_string() || v.is_null()),
                _ => false,
            }
    });
    if !simple {
        return false;
    }
    for (key, value) in fields {
        let target = if key == "labels" {
            &mut metadata.labels
        } else {
            &mut metadata.annotations
        };
        let Value::Object(entries) = value else {
            *target = None;
            continue;
        };
        let map = target.get_or_insert_with(BTreeMap::new);
        for (entry, entry_value) in entries {
            match entry_value {
                Value::String(text) => {
                    map.insert(entry.clone(), text.clone());
                }
                _ => {
                    map.remove(entry);
                }
            }
        }
    }
    true
}

fn to_value<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// Steps 2 and 3: the containers updated in this batch.
fn choose_batch(containers: &[Container], spec: &UpdateSpec) -> BTreeSet<String> {
    let mut batch = BTreeSet::new();
    let mut highest: Option<i64> = None;
    let mut with_highest: Vec<&str> = Vec::new();
    for container in containers {
        let name = container.name.as_str();
        if !spec.container_images.contains_key(name)
            && !spec.container_ref_metadata.contains_key(name)
            && !spec.container_resources.contains_key(name)
        {
            continue;
        }
        match barrier_priority(container) {
            None => {
                batch.insert(name.to_owned());
            }
            Some(priority) if highest.is_none_or(|top| top < priority) => {
                highest = Some(priority);
                with_highest = vec![name];
            }
            Some(priority) if highest == Some(priority) => with_highest.push(name),
            Some(_) => {}
        }
    }
    batch.extend(with_highest.into_iter().map(str::to_owned));
    add_metadata_sharing_containers(&mut batch, &spec.container_ref_metadata);
    batch
}

/// Step 3: containers whose env metadata shares a key with the batch join it, to a fixed point.
fn add_metadata_sharing_containers(
    batch: &mut BTreeSet<String>,
    metadata: &BTreeMap<String, ContainerRefMetadata>,
) {
    let mut labels: BTreeSet<&str> = BTreeSet::new();
    let mut annotations: BTreeSet<&str> = BTreeSet::new();
    let mut newly_added: Vec<String> = batch.iter().cloned().collect();
    while !newly_added.is_empty() {
        for name in &newly_added {
            if let Some(meta) = metadata.get(name) {
                labels.extend(meta.labels.keys().map(String::as_str));
                annotations.extend(meta.annotations.keys().map(String::as_str));
            }
        }
        newly_added.clear();
        for (name, meta) in metadata {
            if batch.contains(name) {
                continue;
            }
            let shares = meta.labels.keys().any(|key| labels.contains(key.as_str()))
                || meta
                    .annotations
                    .keys()
                    .any(|key| annotations.contains(key.as_str()));
            if shares {
                batch.insert(name.clone());
                newly_added.push(name.clone());
            }
        }
    }
}

/// Writes the new cpu/memory requests and limits of a container (other resources are not resized).
fn resize(container: &mut Container, resources: &ResourceRequirements) {
    let target = container
        .resources
        .get_or_insert_with(ResourceRequirements::default);
    for (source, destination) in [
        (resources.limits.as_ref(), &mut target.limits),
        (resources.requests.as_ref(), &mut target.requests),
    ] {
        for (name, quantity) in source.into_iter().flatten() {
            if RESIZABLE.contains(&name.as_str()) {
                destination
                    .get_or_insert_with(BTreeMap::new)
                    .insert(name.clone(), quantity.clone());
            }
        }
    }
}
