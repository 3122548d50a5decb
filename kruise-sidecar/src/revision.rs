//! SidecarSet ControllerRevisions (upstream `registerLatestRevision`): their data and names, restoring a history
//! SidecarSet from one, and the controller's bookkeeping (reuse, roll back or create the latest; truncate the
//! history).
//!
//! The data is a strategic-merge patch `{"spec":{"$patch":"replace","containers":…,"imagePullSecrets":…,
//! "initContainers":…,"patchPodMetadata":…,"volumes":…}}` with every key sorted and absent lists as `null`,
//! byte for byte as Go writes it; the name is `<sidecarset>-<FNV-1 hash of the data and collision count>`.
//! Revisions live in the kruise-manager namespace and carry the label `kruise.io/sidecarset-name`.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{LocalObjectReference, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use kruise_api::apps::v1beta1::{SidecarContainer, SidecarSet, SidecarSetPatchPodMetadata};
use kruise_api::keys;
use kruise_inplace::go_json::{self, GoJsonError};
use serde_json::{Map, Value};

use crate::encoding::sidecar_container_value;
use crate::error::Error;
use crate::hash::{self, name_of};
use crate::pod_view::PodView;
use crate::records;

/// The default `revisionHistoryLimit`.
pub const DEFAULT_HISTORY_LIMIT: i32 = 10;

fn list_value<T>(
    items: &[T],
    field: &str,
    encode: impl Fn(&T) -> Result<Value, GoJsonError>,
) -> Result<Value, GoJsonError> {
    if items.is_empty() {
        return Ok(Value::Null);
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            encode(item).map_err(|error| GoJsonError {
                path: format!("/{field}/{index}{}", error.path),
                source: error.source,
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
}

fn secret_value(secret: &LocalObjectReference) -> Result<Value, GoJsonError> {
    let mut map = Map::new();
    if !secret.name.is_empty() {
        map.insert("name".to_owned(), Value::String(secret.name.clone()));
    }
    Ok(Value::Object(map))
}

fn patch_value(patch: &SidecarSetPatchPodMetadata) -> Result<Value, GoJsonError> {
    let mut map = Map::new();
    if !patch.annotations.is_empty() {
        map.insert(
            "annotations".to_owned(),
            serde_json::to_value(&patch.annotations).unwrap_or(Value::Null),
        );
    }
    if let Some(policy) = patch
        .patch_policy
        .as_ref()
        .filter(|p| !p.as_str().is_empty())
    {
        map.insert(
            "patchPolicy".to_owned(),
            Value::String(policy.as_str().to_owned()),
        );
    }
    Ok(Value::Object(map))
}

fn volume_value(volume: &Volume) -> Result<Value, GoJsonError> {
    go_json::volume_value(volume)
}

fn container_value(sidecar: &SidecarContainer) -> Result<Value, GoJsonError> {
    sidecar_container_value(sidecar)
}

/// The revision data of a SidecarSet as a JSON value (write it with sorted keys for Go's bytes).
///
/// # Errors
/// [`Error::Encoding`] when a container or volume holds an invalid quantity.
pub fn data_value(sidecarset: &SidecarSet) -> Result<Value, Error> {
    let spec = &sidecarset.spec;
    let encoding = |source| Error::Encoding {
        sidecarset: name_of(sidecarset).to_owned(),
        source,
    };
    let mut patch = Map::new();
    patch.insert("$patch".to_owned(), Value::String("replace".to_owned()));
    patch.insert(
        "containers".to_owned(),
        list_value(&spec.containers, "containers", container_value).map_err(encoding)?,
    );
    patch.insert(
        "imagePullSecrets".to_owned(),
        list_value(&spec.image_pull_secrets, "imagePullSecrets", secret_value).map_err(encoding)?,
    );
    patch.insert(
        "initContainers".to_owned(),
        list_value(&spec.init_containers, "initContainers", container_value).map_err(encoding)?,
    );
    patch.insert(
        "patchPodMetadata".to_owned(),
        list_value(&spec.patch_pod_metadata, "patchPodMetadata", patch_value).map_err(encoding)?,
    );
    patch.insert(
        "volumes".to_owned(),
        list_value(&spec.volumes, "volumes", volume_value).map_err(encoding)?,
    );
    let mut data = Map::new();
    data.insert("spec".to_owned(), Value::Object(patch));
    Ok(Value::Object(data))
}

/// The revision data of a SidecarSet, byte for byte as Go writes it.
///
/// # Errors
/// [`Error::Encoding`] when a container or volume holds an invalid quantity.
pub fn data(sidecarset: &SidecarSet) -> Result<String, Error> {
    Ok(go_json::to_string_sorted(&data_value(sidecarset)?))
}

/// `<sidecarset>-<hash>` for the data and collision count.
#[must_use]
pub fn name_for(sidecarset: &str, data: &str, collision_count: i32) -> String {
    let hash = kruise_inplace::revision::hash(data.as_bytes(), Some(collision_count));
    kruise_inplace::revision::name(sidecarset, &hash)
}

/// The ControllerRevision upstream builds for the SidecarSet as it is now (`NewRevision`): the SidecarSet's
/// labels plus `controller.kubernetes.io/hash`, `kruise.io/sidecarset-name` and the custom version, all its
/// annotations, a controller owner reference, the data and revision `number`, in `namespace`.
///
/// # Errors
/// [`Error::Encoding`] when a container or volume holds an invalid quantity.
pub fn new_revision(
    sidecarset: &SidecarSet,
    namespace: &str,
    number: i64,
    collision_count: i32,
) -> Result<ControllerRevision, Error> {
    let value = data_value(sidecarset)?;
    let text = go_json::to_string_sorted(&value);
    let hash = kruise_inplace::revision::hash(text.as_bytes(), Some(collision_count));
    let name = name_of(sidecarset);
    let mut labels = sidecarset.metadata.labels.clone().unwrap_or_default();
    labels.insert(
        keys::kubernetes::CONTROLLER_REVISION_HASH_OF_REVISION_LABEL.to_owned(),
        hash.clone(),
    );
    if !sidecarset.spec.custom_version.is_empty() {
        labels.insert(
            keys::sidecarset::CUSTOM_VERSION_LABEL.to_owned(),
            sidecarset.spec.custom_version.clone(),
        );
    }
    labels.insert(keys::sidecarset::NAME_LABEL.to_owned(), name.to_owned());
    let owner = OwnerReference {
        api_version: "apps.kruise.io/v1beta1".to_owned(),
        kind: "SidecarSet".to_owned(),
        name: name.to_owned(),
        uid: sidecarset.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    let metadata = ObjectMeta {
        name: Some(kruise_inplace::revision::name(name, &hash)),
        namespace: Some(namespace.to_owned()),
        labels: Some(labels),
        annotations: Some(sidecarset.metadata.annotations.clone().unwrap_or_default()),
        owner_references: Some(vec![owner]),
        ..ObjectMeta::default()
    };
    Ok(controller_revision(metadata, RawExtension(value), number))
}

k8s_openapi::k8s_if_le_1_36! {
    fn controller_revision(metadata: ObjectMeta, data: RawExtension, number: i64) -> ControllerRevision {
        ControllerRevision { metadata, data: Some(data), revision: number }
    }
    /// The revision number of a ControllerRevision.
    #[must_use]
    pub fn number(revision: &ControllerRevision) -> i64 {
        revision.revision
    }
    /// The data of a ControllerRevision.
    #[must_use]
    pub fn data_of(revision: &ControllerRevision) -> Option<&Value> {
        revision.data.as_ref().map(|data| &data.0)
    }
    /// Sets the revision number.
    pub fn set_number(revision: &mut ControllerRevision, number: i64) {
        revision.revision = number;
    }
}
k8s_openapi::k8s_if_ge_1_37! {
    fn controller_revision(metadata: ObjectMeta, data: RawExtension, number: i64) -> ControllerRevision {
        ControllerRevision { metadata, data, revision: Some(number) }
    }
    /// The revision number of a ControllerRevision.
    #[must_use]
    pub fn number(revision: &ControllerRevision) -> i64 {
        revision.revision.unwrap_or(0)
    }
    /// The data of a ControllerRevision.
    #[must_use]
    pub fn data_of(revision: &ControllerRevision) -> Option<&Value> {
        Some(&revision.data.0)
    }
    /// Sets the revision number.
    pub fn set_number(revision: &mut ControllerRevision, number: i64) {
        revision.revision = Some(number);
    }
}

fn label<'a>(revision: &'a ControllerRevision, key: &str) -> Option<&'a str> {
    revision
        .metadata
        .labels
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

fn revision_name(revision: &ControllerRevision) -> &str {
    revision.metadata.name.as_deref().unwrap_or("")
}

/// The revisions of a SidecarSet (label `kruise.io/sidecarset-name`), sorted by revision number then name.
#[must_use]
pub fn of_sidecarset<'a>(
    revisions: &'a [ControllerRevision],
    sidecarset: &str,
) -> Vec<&'a ControllerRevision> {
    let mut own: Vec<&ControllerRevision> = revisions
        .iter()
        .filter(|revision| label(revision, keys::sidecarset::NAME_LABEL) == Some(sidecarset))
        .collect();
    own.sort_by(|a, b| {
        number(a)
            .cmp(&number(b))
            .then_with(|| revision_name(a).cmp(revision_name(b)))
    });
    own
}

/// The newest revision of the SidecarSet with the custom version label `version`.
#[must_use]
pub fn newest_with_custom_version<'a>(
    revisions: &'a [ControllerRevision],
    sidecarset: &str,
    version: &str,
) -> Option<&'a ControllerRevision> {
    of_sidecarset(revisions, sidecarset)
        .into_iter()
        .rfind(|revision| label(revision, keys::sidecarset::CUSTOM_VERSION_LABEL) == Some(version))
}

fn field<T: serde::de::DeserializeOwned + Default>(
    spec: &Map<String, Value>,
    key: &str,
) -> Result<T, String> {
    match spec.get(key) {
        None | Some(Value::Null) => Ok(T::default()),
        Some(value) => {
            serde_json::from_value(value.clone()).map_err(|error| format!("spec.{key}: {error}"))
        }
    }
}

/// Restores the history SidecarSet a revision records (upstream's `GetHistorySidecarSet`): the recorded
/// containers, init containers, volumes, pull secrets and metadata patches replace the current ones; the
/// hash annotations come from the revision (or are computed when it has none), and `status.latestRevision`
/// names the revision.
///
/// Deviation: upstream's `$patch: replace` also clears the other spec fields (selector, strategies) of the
/// restored object, which injection never reads; they are kept here.
///
/// # Errors
/// [`Error::RevisionData`] when the data is not a SidecarSet revision; [`Error::Encoding`] when a hash must
/// be computed and cannot.
pub fn restore(
    sidecarset: &SidecarSet,
    revision: &ControllerRevision,
) -> Result<SidecarSet, Error> {
    let bad = |reason: String| Error::RevisionData {
        sidecarset: name_of(sidecarset).to_owned(),
        revision: revision_name(revision).to_owned(),
        reason,
    };
    let spec = data_of(revision)
        .and_then(|data| data.get("spec"))
        .and_then(Value::as_object)
        .ok_or_else(|| bad("no spec object".to_owned()))?;
    let mut restored = sidecarset.clone();
    restored.spec.containers = field(spec, "containers").map_err(bad)?;
    restored.spec.init_containers = field(spec, "initContainers").map_err(bad)?;
    restored.spec.volumes = field(spec, "volumes").map_err(bad)?;
    restored.spec.image_pull_secrets = field(spec, "imagePullSecrets").map_err(bad)?;
    restored.spec.patch_pod_metadata = field(spec, "patchPodMetadata").map_err(bad)?;
    let recorded = |key: &str| {
        revision
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(key))
            .filter(|v| !v.is_empty())
            .cloned()
    };
    let (with, without) = (
        recorded(keys::sidecarset::HASH_ANNOTATION),
        recorded(keys::sidecarset::HASH_WITHOUT_IMAGE_ANNOTATION),
    );
    let computed = if with.is_none() || without.is_none() {
        Some(hash::compute(&restored)?)
    } else {
        None
    };
    let annotations = restored
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new);
    let computed_hash = computed
        .as_ref()
        .map(|c| c.hash.clone())
        .unwrap_or_default();
    let computed_without = computed.map(|c| c.without_image).unwrap_or_default();
    annotations.insert(
        keys::sidecarset::HASH_ANNOTATION.to_owned(),
        with.unwrap_or(computed_hash),
    );
    annotations.insert(
        keys::sidecarset::HASH_WITHOUT_IMAGE_ANNOTATION.to_owned(),
        without.unwrap_or(computed_without),
    );
    restored
        .status
        .get_or_insert_with(Default::default)
        .latest_revision = revision_name(revision).to_owned();
    Ok(restored)
}

/// What the controller does with the latest revision (upstream `registerLatestRevision`).
#[derive(Clone, Debug, PartialEq)]
pub enum LatestRevision {
    /// The newest existing revision already records the SidecarSet.
    Reuse {
        /// Its name.
        name: String,
    },
    /// An older revision records it: bump its revision number (a rollback).
    Rollback {
        /// Its name.
        name: String,
        /// The new revision number.
        number: i64,
    },
    /// Create this revision (on a name collision with different data, increment the collision count and
    /// build it again).
    Create(Box<ControllerRevision>),
}

impl LatestRevision {
    /// The latest revision's name.
    #[must_use]
    pub fn name(&self) -> &str {
        match self {
            Self::Reuse { name } | Self::Rollback { name, .. } => name,
            Self::Create(revision) => revision_name(revision),
        }
    }
}

/// The controller's revision bookkeeping for one reconcile.
#[derive(Clone, Debug, PartialEq)]
pub struct RevisionPlan {
    /// What to do with the latest revision.
    pub latest: LatestRevision,
    /// Set the custom-version label of the latest revision to this value (it differs or is missing).
    pub custom_version_label: Option<String>,
    /// Names of old revisions to delete (history truncation).
    pub delete: Vec<String>,
    /// How many revisions over the limit could not be deleted because pods or the injection strategy use
    /// them (upstream reports this as an error after deleting what it can).
    pub over_limit: usize,
}

/// Plans the revisions: `revisions` are the ControllerRevisions the caller listed (any; only this
/// SidecarSet's are considered), `pods` the matched pods (their recorded revisions are kept).
///
/// # Errors
/// [`Error::Encoding`] when the SidecarSet's data cannot be encoded.
pub fn plan_revisions<P: PodView>(
    sidecarset: &SidecarSet,
    revisions: &[ControllerRevision],
    pods: &[P],
    namespace: &str,
) -> Result<RevisionPlan, Error> {
    let name = name_of(sidecarset);
    let own = of_sidecarset(revisions, name);
    let collision_count = sidecarset
        .status
        .as_ref()
        .and_then(|status| status.collision_count)
        .unwrap_or(0);
    let next = own.last().map_or(1, |last| number(last) + 1);
    let candidate = new_revision(sidecarset, namespace, next, collision_count)?;
    let candidate_data = data_of(&candidate);
    let equal: Vec<&ControllerRevision> = own
        .iter()
        .copied()
        .filter(|revision| data_of(revision) == candidate_data)
        .collect();
    let newest = own.last().copied();
    let latest = match (equal.last(), newest) {
        (Some(found), Some(newest)) if revision_name(found) == revision_name(newest) => {
            LatestRevision::Reuse {
                name: revision_name(found).to_owned(),
            }
        }
        (Some(found), _) => LatestRevision::Rollback {
            name: revision_name(found).to_owned(),
            number: next,
        },
        (None, _) => LatestRevision::Create(Box::new(candidate)),
    };
    let latest_labels_version = match &latest {
        LatestRevision::Create(revision) => {
            label(revision, keys::sidecarset::CUSTOM_VERSION_LABEL).map(str::to_owned)
        }
        LatestRevision::Reuse { name } | LatestRevision::Rollback { name, .. } => own
            .iter()
            .find(|revision| revision_name(revision) == name)
            .and_then(|revision| label(revision, keys::sidecarset::CUSTOM_VERSION_LABEL))
            .map(str::to_owned),
    };
    let custom = &sidecarset.spec.custom_version;
    let custom_version_label = (!custom.is_empty()
        && latest_labels_version.as_deref() != Some(custom.as_str()))
    .then(|| custom.clone());

    // The history after this step, oldest first: a rolled-back revision moves to the end.
    let mut history: Vec<String> = own
        .iter()
        .map(|revision| revision_name(revision).to_owned())
        .collect();
    match &latest {
        LatestRevision::Reuse { .. } => {}
        LatestRevision::Rollback { name, .. } => {
            history.retain(|existing| existing != name);
            history.push(name.clone());
        }
        LatestRevision::Create(revision) => history.push(revision_name(revision).to_owned()),
    }
    let limit = usize::try_from(
        sidecarset
            .spec
            .revision_history_limit
            .unwrap_or(DEFAULT_HISTORY_LIMIT)
            .max(1),
    )
    .unwrap_or(1);
    let mut delete = Vec::new();
    let mut over_limit = history.len().saturating_sub(limit);
    if over_limit > 0 {
        let active = active_revisions(sidecarset, revisions, pods);
        for existing in history.iter().take(history.len() - 1) {
            if over_limit == 0 {
                break;
            }
            if !active.contains(existing.as_str()) {
                delete.push(existing.clone());
                over_limit -= 1;
            }
        }
    }
    Ok(RevisionPlan {
        latest,
        custom_version_label,
        delete,
        over_limit,
    })
}

/// Revisions in use: recorded by a pod, named by `injectionStrategy.revision.revisionName`, or the newest
/// with `injectionStrategy.revision.customVersion`.
fn active_revisions<P: PodView>(
    sidecarset: &SidecarSet,
    revisions: &[ControllerRevision],
    pods: &[P],
) -> BTreeSet<String> {
    let name = name_of(sidecarset);
    let mut active: BTreeSet<String> = pods
        .iter()
        .map(|pod| records::recorded_controller_revision(pod, name))
        .filter(|revision| !revision.is_empty())
        .collect();
    if let Some(revision) = &sidecarset.spec.injection_strategy.revision {
        if let Some(named) = &revision.revision_name {
            active.insert(named.clone());
        }
        if let Some(version) = &revision.custom_version
            && let Some(found) = newest_with_custom_version(revisions, name, version)
        {
            active.insert(revision_name(found).to_owned());
        }
    }
    active
}
