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

/// Sends the writes of several actions on one pod (`actions`, each action's writes, in the planned order)
/// one action after the other, stopping at the first failure. A later action's writes conditional on the
/// `resourceVersion` the plan saw are made conditional on the version the earlier actions' conditional
/// writes produced instead (the pod was changed only by this plan since), so that the plan does not fail on
/// its own earlier write.
///
/// Returns the outcome of each action sent: every one `Ok` but possibly the last.
pub async fn send_chained(
    expectations: &SharedExpectations,
    api: &Api<Pod>,
    pod: &Pod,
    actions: Vec<Vec<PodWrite>>,
) -> Vec<Result<Sent, ActionError>> {
    let observed = pod.metadata.resource_version.as_deref();
    let mut current: Option<String> = None;
    let mut outcomes = Vec::with_capacity(actions.len());
    for mut writes in actions {
        if let (Some(observed), Some(current)) = (observed, current.as_deref()) {
            for write in &mut writes {
                write.rebase(observed, current);
            }
        }
        let chained = current.is_some()
            || (observed.is_some() && writes.first().and_then(PodWrite::precondition) == observed);
        let outcome = send_writes(expectations, api, pod, &writes).await;
        let failed = match &outcome {
            Ok(sent) => {
                if chained && sent.resource_version.is_some() {
                    current.clone_from(&sent.resource_version);
                }
                false
            }
            Err(_) => true,
        };
        outcomes.push(outcome);
        if failed {
            break;
        }
    }
    outcomes
}

#[cfg(test)]
mod tests;
