//! Sending the writes of one pod action (see [`pod_write`](super::pod_write)) to the API server: in
//! order, a failed JSON-patch `test` counted as a conflict like a 409, and the `resourceVersion` the last
//! write returned recorded as an expectation, so that the next reconcile does not trust a cached copy of
//! the pod older than its own write.

use k8s_openapi::api::core::v1::Pod;
use kube::api::Patch;
use kube::{Api, ResourceExt};

use super::owner::key_of;
use super::pod_write::{Body, PodWrite, failed_test_is_conflict};
use crate::actions::{self, ActionError};
use crate::expectations::SharedExpectations;

/// What the writes of one action did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sent {
    /// How many writes were sent (all of them: the first failure is an error).
    pub writes: usize,
    /// The pod's `resourceVersion` after the last write (none if there was no write).
    pub resource_version: Option<String>,
}

/// Sends `writes` to `pod` in order; records the final `resourceVersion` in `expectations` (the pod keyed
/// `pod/<namespace>/<name>`).
///
/// # Errors
/// The first write that failed (a failed `test` of the `resourceVersion` as [`ActionError::Conflict`]);
/// the writes before it stand.
pub async fn send_writes(
    expectations: &SharedExpectations,
    api: &Api<Pod>,
    pod: &Pod,
    writes: &[PodWrite],
) -> Result<Sent, ActionError> {
    let name = pod.name_any();
    let namespace = pod.namespace().unwrap_or_default();
    let object = format!("{namespace}/{name}");
    let mut resource_version = None;
    for write in writes {
        let updated: Pod = match &write.body {
            Body::Json(patch) => actions::patch(
                api,
                &object,
                &name,
                write.subresource,
                &Patch::Json::<()>(patch.clone()),
            )
            .await
            .map_err(failed_test_is_conflict)?,
            Body::StrategicMerge(patch) => {
                actions::patch(
                    api,
                    &object,
                    &name,
                    write.subresource,
                    &Patch::Strategic(patch),
                )
                .await?
            }
        };
        resource_version = updated.metadata.resource_version;
    }
    if let Some(version) = &resource_version {
        expectations.expect_version(&key_of("pod", &namespace, &name), version);
    }
    Ok(Sent {
        writes: writes.len(),
        resource_version,
    })
}

#[cfg(test)]
mod tests;
