//! Whether an in-place update finished (upstream's `DefaultCheckInPlaceUpdateCompleted`).
//!
//! * A grace annotation (even an empty one) means not finished; no state annotation means finished; containers
//!   left for later batches mean not finished.
//! * With `updateEnvFromMetadata`, kruise-daemon's `apps.kruise.io/runtime-containers-meta` must exist and every
//!   container's `extractedEnvFromMetadataHash` must match ([`crate::env_from_metadata::expected_hash`]), the
//!   container being in status and in the metadata with the same `containerID`.
//! * With vertical scaling and `updateResources`, every container must report `status.resources` equal (by
//!   value) to its spec, and there must be as many statuses as containers.
//! * When the runtime metadata exists and every container's `plainHash` matches kubelet's hash of the spec
//!   container ([`crate::container_hash`], kubelet 1.31+ or older), the update is finished.
//! * Otherwise image IDs decide: a container whose `imageID` is still the one recorded before the update is
//!   not finished unless its status image equals the spec image (a spec image without any `:` is compared with
//!   `:latest` appended, so `registry:5000/img` is *not* normalised); a recorded container without status is
//!   not finished.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_inplace::{completion, UpdateOptions};
//!
//! // No state annotation: nothing in progress.
//! assert!(completion::is_completed(&Pod::default(), &UpdateOptions::default()));
//! ```

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kruise_api::inplace::{InPlaceUpdateState, RuntimeContainerMeta, RuntimeContainerMetaSet};

use crate::container_hash;
use crate::env_from_metadata;
use crate::options::UpdateOptions;
use crate::quantity;
use crate::state::{self, AnnotationError};

/// Why an in-place update is not finished.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Incomplete {
    /// The update is still in its grace period.
    #[error("still in grace period of in-place update")]
    InGracePeriod,
    /// The state or runtime metadata annotation does not parse.
    #[error(transparent)]
    Annotation(#[from] AnnotationError),
    /// Containers are left for later batches.
    #[error("existing containers to in-place update in next batches")]
    NextBatches,
    /// Env vars from metadata changed but kruise-daemon has not reported the runtime metadata.
    #[error("waiting for all containers hash consistent, but runtime-container-meta not found")]
    RuntimeMetaMissing,
    /// Env vars from metadata changed and some container does not run with them yet.
    #[error("waiting for all containers hash consistent")]
    EnvHashInconsistent,
    /// Not every container reports its status.
    #[error("some container status is not reported")]
    ResourceStatusMissing,
    /// A container's resources are not resized yet.
    #[error("container {container} resources not changed")]
    ResourcesNotChanged {
        /// The container.
        container: String,
    },
    /// A container still runs the image it ran before the update.
    #[error("container {container} imageID not changed")]
    ImageIdNotChanged {
        /// The container.
        container: String,
    },
    /// Containers recorded before the update have no status.
    #[error("not found statuses of containers {containers:?}")]
    StatusesNotFound {
        /// The containers.
        containers: Vec<String>,
    },
}

/// `Ok` when the pod's in-place update (if any) finished, else why not.
///
/// # Errors
/// [`Incomplete`] saying what is still pending.
pub fn check(pod: &Pod, options: &UpdateOptions) -> Result<(), Incomplete> {
    if state::grace_value(pod).is_some() {
        return Err(Incomplete::InGracePeriod);
    }
    let Some(state) = state::read_state(pod)? else {
        return Ok(());
    };
    if !state.next_container_images.is_empty()
        || !state.next_container_ref_metadata.is_empty()
        || !state.next_container_resources.is_empty()
    {
        return Err(Incomplete::NextBatches);
    }
    check_containers(pod, &state, options)
}

/// Whether the pod's in-place update (if any) finished.
#[must_use]
pub fn is_completed(pod: &Pod, options: &UpdateOptions) -> bool {
    check(pod, options).is_ok()
}

/// The container checks alone (upstream's `CheckContainersUpdateCompleted`, which `refresh` uses before the next
/// batch): env hashes, resources, plain hashes, image IDs.
///
/// # Errors
/// [`Incomplete`] saying what is still pending.
pub fn check_containers(
    pod: &Pod,
    state: &InPlaceUpdateState,
    options: &UpdateOptions,
) -> Result<(), Incomplete> {
    let runtime = state::read_runtime_meta(pod)?;
    let containers = crate::pod_containers::containers(pod);
    let statuses = crate::pod_containers::container_statuses(pod);

    if state.update_env_from_metadata {
        let runtime = runtime.as_ref().ok_or(Incomplete::RuntimeMetaMissing)?;
        let consistent = all_consistent(containers, statuses, runtime, |container, meta| {
            let expected = env_from_metadata::expected_hash(
                container,
                pod.metadata.labels.as_ref(),
                pod.metadata.annotations.as_ref(),
            );
            meta.hashes.extracted_env_from_metadata_hash == expected
        });
        if !consistent {
            return Err(Incomplete::EnvHashInconsistent);
        }
    }

    if options.gates.in_place_workload_vertical_scaling && state.update_resources {
        if statuses.len() != containers.len() {
            return Err(Incomplete::ResourceStatusMissing);
        }
        for status in statuses {
            let spec = containers
                .iter()
                .find(|container| container.name == status.name);
            if !resources_applied(spec, status) {
                return Err(Incomplete::ResourcesNotChanged {
                    container: status.name.clone(),
                });
            }
        }
    }

    if let Some(runtime) = &runtime {
        let consistent = all_consistent(containers, statuses, runtime, |container, meta| {
            container_hash::plain_hash_matches(container, meta.hashes.plain_hash)
        });
        if consistent {
            return Ok(());
        }
    }

    let mut pending: BTreeMap<&str, &str> = state
        .last_container_statuses
        .iter()
        .flatten()
        .map(|(name, recorded)| (name.as_str(), recorded.image_id.as_str()))
        .collect();
    for status in statuses {
        let Some(recorded) = pending.remove(status.name.as_str()) else {
            continue;
        };
        if recorded == status.image_id {
            let spec_image = containers
                .iter()
                .find(|container| container.name == status.name)
                .map(|container| normalized_image(container.image.as_deref().unwrap_or("")))
                .unwrap_or_default();
            if spec_image != status.image {
                return Err(Incomplete::ImageIdNotChanged {
                    container: status.name.clone(),
                });
            }
        }
    }
    if !pending.is_empty() {
        return Err(Incomplete::StatusesNotFound {
            containers: pending.keys().map(|name| (*name).to_owned()).collect(),
        });
    }
    Ok(())
}

/// A spec image as upstream compares it with the status image: `:latest` appended when it has no `:` at all.
#[must_use]
pub fn normalized_image(image: &str) -> String {
    if image.contains(':') {
        image.to_owned()
    } else {
        format!("{image}:latest")
    }
}

/// Upstream's `checkAllContainersHashConsistent`: every spec container is in status and in the runtime
/// metadata (the last entry of that name), with the same container ID, and passes `hash_ok`.
fn all_consistent(
    containers: &[Container],
    statuses: &[ContainerStatus],
    runtime: &RuntimeContainerMetaSet,
    hash_ok: impl Fn(&Container, &RuntimeContainerMeta) -> bool,
) -> bool {
    containers.iter().all(|container| {
        let Some(status) = statuses.iter().find(|status| status.name == container.name) else {
            return false;
        };
        let Some(meta) = runtime
            .containers
            .iter()
            .rev()
            .find(|meta| meta.name == container.name)
        else {
            return false;
        };
        meta.container_id == status.container_id.as_deref().unwrap_or("")
            && hash_ok(container, meta)
    })
}

/// Whether a container's status reports the resources of its spec (by value; an absent list equals an empty
/// one).
fn resources_applied(spec: Option<&Container>, status: &ContainerStatus) -> bool {
    let (Some(spec), Some(reported)) = (spec, status.resources.as_ref()) else {
        return false;
    };
    let empty = ResourceRequirements::default();
    let wanted = spec.resources.as_ref().unwrap_or(&empty);
    same_list(wanted.limits.as_ref(), reported.limits.as_ref())
        && same_list(wanted.requests.as_ref(), reported.requests.as_ref())
}

fn same_list(
    left: Option<&BTreeMap<String, Quantity>>,
    right: Option<&BTreeMap<String, Quantity>>,
) -> bool {
    let empty = BTreeMap::new();
    let (left, right) = (left.unwrap_or(&empty), right.unwrap_or(&empty));
    left.len() == right.len()
        && left.iter().all(|(name, value)| {
            right
                .get(name)
                .is_some_and(|other| quantity::same_value(&value.0, &other.0))
        })
}

#[cfg(test)]
mod tests {
    use super::normalized_image;

    #[test]
    fn latest_normalisation_only_without_any_colon() {
        assert_eq!(normalized_image("nginx"), "nginx:latest");
        assert_eq!(normalized_image("nginx:1.25"), "nginx:1.25");
        assert_eq!(normalized_image("registry:5000/img"), "registry:5000/img");
        assert_eq!(
            normalized_image("docker.io/library/nginx"),
            "docker.io/library/nginx:latest"
        );
        assert_eq!(normalized_image(""), ":latest");
    }
}
