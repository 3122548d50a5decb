//! Starting an in-place update of a pod (upstream's `Update`, after the spec is calculated).
//!
//! 1. When the pod has the `InPlaceUpdateReady` gate, the condition goes `False` (reason `StartInPlaceUpdate`)
//!    and `Ready` is recomputed — sent first, to the `status` subresource. With vertical scaling, a
//!    resources-only update skips this unless a changed resource has `resizePolicy.restartPolicy:
//!    RestartContainer` ([`needs_unready`]).
//! 2. The revision labels are written ([`RevisionLabels`]), then the caller's additional changes (CloneSet sets
//!    its lifecycle state here), then a fresh state annotation `{revision, updateTimestamp: now,
//!    updateEnvFromMetadata, updateImages, updateResources}` (the legacy key is removed).
//! 3. Without a grace period the first container batch is written now ([`crate::batch`]) and any grace
//!    annotation is removed; with one, the whole spec is stored in `apps.kruise.io/inplace-update-grace` and the
//!    pod spec is left alone, to be patched by [`refresh`](crate::refresh()) once the period is over.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::inplace::InPlaceUpdateState;
use kruise_api::keys::inplace::GRACE_ANNOTATION;
use kruise_api::keys::kubernetes::{CONTROLLER_REVISION_HASH_LABEL, POD_TEMPLATE_HASH_LABEL};
use kruise_api::pod::short_hash;

use crate::batch;
use crate::condition;
use crate::error::Error;
use crate::options::{RevisionLabels, UpdateOptions};
use crate::patch::Outcome;
use crate::state;
use crate::update_spec::UpdateSpec;

/// Starts the in-place update of `pod` described by `spec` at `now`.
///
/// ```
/// use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
/// use kruise_inplace::{apply, UpdateOptions, UpdateSpec};
///
/// let pod = Pod {
///     spec: Some(PodSpec { containers: vec![Container { name: "main".into(), image: Some("nginx:1.24".into()), ..Default::default() }], ..Default::default() }),
///     ..Default::default()
/// };
/// let mut spec = UpdateSpec { revision: "demo-6d4f7b".into(), ..UpdateSpec::default() };
/// spec.container_images.insert("main".into(), "nginx:1.25".into());
/// let now = "2024-05-01T10:00:00Z".parse().unwrap();
/// let outcome = apply(&pod, &spec, now, &UpdateOptions::default()).unwrap();
/// assert_eq!(outcome.pod.spec.as_ref().unwrap().containers[0].image.as_deref(), Some("nginx:1.25"));
/// assert_eq!(outcome.writes.len(), 1); // no readiness gate: only the pod itself
/// ```
///
/// # Errors
/// [`Error::MetadataPatch`] when the spec's metadata patch cannot be applied to the pod.
pub fn apply(
    pod: &Pod,
    spec: &UpdateSpec,
    now: Timestamp,
    options: &UpdateOptions,
) -> Result<Outcome, Error> {
    start(pod, spec, now, options, None)
}

/// [`apply`] with the caller's additional changes to the pod (upstream's `AdditionalFuncs`), made after the
/// revision labels and before the state annotation; they are part of the pod write.
///
/// # Errors
/// [`Error::MetadataPatch`] when the spec's metadata patch cannot be applied to the pod.
pub fn apply_with(
    pod: &Pod,
    spec: &UpdateSpec,
    now: Timestamp,
    options: &UpdateOptions,
    additional: impl FnOnce(&mut Pod),
) -> Result<Outcome, Error> {
    start(pod, spec, now, options, Some(Box::new(additional)))
}

type Additional<'a> = Box<dyn FnOnce(&mut Pod) + 'a>;

fn start(
    pod: &Pod,
    spec: &UpdateSpec,
    now: Timestamp,
    options: &UpdateOptions,
    additional: Option<Additional<'_>>,
) -> Result<Outcome, Error> {
    let mut updated = pod.clone();
    if needs_unready(pod, spec, options) {
        condition::update_condition(&mut updated, condition::not_ready_condition(now), now);
    }

    write_revision(&mut updated, &spec.revision, options.revision_labels);
    let arbitrary = additional.is_some();
    if let Some(additional) = additional {
        additional(&mut updated);
    }
    let mut fresh = InPlaceUpdateState {
        revision: spec.revision.clone(),
        update_timestamp: Time(now),
        last_container_statuses: None,
        update_env_from_metadata: spec.update_env_from_metadata,
        update_resources: !spec.container_resources.is_empty(),
        update_images: !spec.container_images.is_empty(),
        next_container_images: Default::default(),
        next_container_ref_metadata: Default::default(),
        next_container_resources: Default::default(),
        pre_check_before_next: None,
        container_batches_record: Vec::new(),
    };
    if spec.grace_seconds <= 0 {
        // The batch writes the state annotation (upstream writes the fresh state first and overwrites it).
        batch::patch_spec_to_pod(&mut updated, spec, &mut fresh, now, &options.gates)?;
        state::remove_grace(&mut updated);
    } else {
        state::write_state(&mut updated, &fresh);
        updated
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(GRACE_ANNOTATION.to_owned(), spec.to_json());
    }

    let mut outcome = if arbitrary {
        Outcome::between(pod, updated, options.resize_subresource)
    } else {
        Outcome::between_steps(pod, updated, options.resize_subresource)
    };
    if options.grace_period_seconds > 0 {
        outcome.requeue_after = Some(Duration::from_secs(
            u64::try_from(options.grace_period_seconds).unwrap_or_default(),
        ));
    }
    Ok(outcome)
}

/// Whether `InPlaceUpdateReady` goes `False` before the update (upstream's `defaultCheckPodNeedsBeUnready`):
/// the pod has the gate, unless vertical scaling is on, only resources change, and no changed resource (cpu or
/// memory, in requests or limits) has `resizePolicy.restartPolicy: RestartContainer` in its container.
#[must_use]
pub fn needs_unready(pod: &Pod, spec: &UpdateSpec, options: &UpdateOptions) -> bool {
    if options.gates.in_place_workload_vertical_scaling && spec.vertical_update_only() {
        let containers = crate::pod_containers::containers(pod);
        let restarts = containers.iter().any(|container| {
            let Some(resources) = spec.container_resources.get(&container.name) else {
                return false;
            };
            let changed = |resource: &str| {
                resources
                    .limits
                    .as_ref()
                    .is_some_and(|list| list.contains_key(resource))
                    || resources
                        .requests
                        .as_ref()
                        .is_some_and(|list| list.contains_key(resource))
            };
            container.resize_policy.iter().flatten().any(|policy| {
                policy.restart_policy == "RestartContainer"
                    && matches!(policy.resource_name.as_str(), "cpu" | "memory")
                    && changed(&policy.resource_name)
            })
        });
        if !restarts {
            return false;
        }
    }
    condition::has_readiness_gate(pod)
}

/// Writes the revision labels of a pod.
pub fn write_revision(pod: &mut Pod, revision: &str, labels: RevisionLabels) {
    let pod_labels = pod.metadata.labels.get_or_insert_with(Default::default);
    match labels {
        RevisionLabels::Exact => {
            pod_labels.insert(
                CONTROLLER_REVISION_HASH_LABEL.to_owned(),
                revision.to_owned(),
            );
        }
        RevisionLabels::CloneSet { short_hash: short } => {
            let hash = short_hash(revision);
            let value = if short { hash } else { revision };
            pod_labels.insert(CONTROLLER_REVISION_HASH_LABEL.to_owned(), value.to_owned());
            pod_labels.insert(POD_TEMPLATE_HASH_LABEL.to_owned(), hash.to_owned());
        }
    }
}

/// The revision a pod is at, among a workload's revisions: the one whose name its revision label denotes
/// ([`is_at_revision`]). Without one the pod cannot be updated in place.
#[must_use]
pub fn pod_revision<'a>(
    pod: &Pod,
    revisions: &'a [k8s_openapi::api::apps::v1::ControllerRevision],
    labels: RevisionLabels,
) -> Option<&'a k8s_openapi::api::apps::v1::ControllerRevision> {
    revisions.iter().find(|revision| {
        revision
            .metadata
            .name
            .as_deref()
            .is_some_and(|name| is_at_revision(pod, name, labels))
    })
}

/// Whether the pod's revision label denotes `revision` (upstream's `EqualToRevisionHash` of the workload).
#[must_use]
pub fn is_at_revision(pod: &Pod, revision: &str, labels: RevisionLabels) -> bool {
    let current = kruise_api::pod::revision(pod);
    match labels {
        RevisionLabels::Exact => current == revision,
        RevisionLabels::CloneSet { .. } => kruise_api::pod::revision_matches(current, revision),
    }
}
