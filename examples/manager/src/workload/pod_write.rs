//! The writes a workload controller sends to an existing pod (pure, so they are tested without a
//! cluster), shared by the CloneSet, Advanced StatefulSet and Advanced DaemonSet controllers.
//!
//! Every action's first write is conditional on the `resourceVersion` the plan was made from: a JSON
//! patch starts with a `test` of `/metadata/resourceVersion` (as `kruise_inplace` writes it), a
//! strategic-merge patch carries `metadata.resourceVersion`. A pod changed since it was read makes the
//! write fail with 409 (or 422 for a failed `test`, see [`failed_test_is_conflict`]) instead of being
//! overwritten; later writes of the same action follow the first.

use json_patch::PatchOperation;
use k8s_openapi::api::core::v1::Pod;
use kruise_inplace::{Subresource, Write};
use kruise_lifecycle::change::PodChange;
use serde_json::Value;

use crate::actions::ActionError;

/// Where a JSON patch tests the pod's `resourceVersion` (and where a merge patch carries it).
const RESOURCE_VERSION_POINTER: &str = "/metadata/resourceVersion";

/// A patch body.
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// `application/json-patch+json`.
    Json(json_patch::Patch),
    /// `application/strategic-merge-patch+json`.
    StrategicMerge(Value),
}

/// One write to a pod.
#[derive(Clone, Debug, PartialEq)]
pub struct PodWrite {
    /// The pod, or its `status` / `resize` subresource.
    pub subresource: Option<&'static str>,
    /// The patch.
    pub body: Body,
}

impl PodWrite {
    /// The write of one `kruise_inplace` step (a JSON patch to the pod or a subresource).
    #[must_use]
    pub fn from_inplace(write: Write) -> Self {
        Self {
            subresource: match write.subresource {
                Subresource::Pod => None,
                Subresource::Status => Some("status"),
                Subresource::Resize => Some("resize"),
            },
            body: Body::Json(write.patch),
        }
    }

    /// The `resourceVersion` this write is conditional on, if any.
    #[must_use]
    pub fn precondition(&self) -> Option<&str> {
        match &self.body {
            Body::Json(patch) => patch.0.iter().find_map(|operation| match operation {
                PatchOperation::Test(test) if test.path.as_str() == RESOURCE_VERSION_POINTER => {
                    test.value.as_str()
                }
                _ => None,
            }),
            Body::StrategicMerge(patch) => patch
                .pointer(RESOURCE_VERSION_POINTER)
                .and_then(Value::as_str),
        }
    }

    /// Makes a write conditional on `observed` conditional on `current` instead: for a later action on a
    /// pod whose earlier actions of the same plan were written, conditionally, moving it from `observed`
    /// to `current`. A write with another precondition or none is left as it is.
    pub fn rebase(&mut self, observed: &str, current: &str) {
        if self.precondition() != Some(observed) {
            return;
        }
        match &mut self.body {
            Body::Json(patch) => {
                for operation in &mut patch.0 {
                    if let PatchOperation::Test(test) = operation
                        && test.path.as_str() == RESOURCE_VERSION_POINTER
                    {
                        test.value = Value::String(current.to_owned());
                    }
                }
            }
            Body::StrategicMerge(patch) => {
                if let Some(version) = patch.pointer_mut(RESOURCE_VERSION_POINTER) {
                    *version = Value::String(current.to_owned());
                }
            }
        }
    }

    /// A strategic-merge patch of the pod's metadata, conditional on `precondition` when given (it is
    /// put into the patch's `metadata.resourceVersion`).
    #[must_use]
    pub fn metadata(mut patch: Value, precondition: Option<&str>) -> Self {
        if let Some(version) = precondition
            && let Some(metadata) = patch.get_mut("metadata").and_then(Value::as_object_mut)
        {
            metadata.insert("resourceVersion".into(), Value::String(version.to_owned()));
        }
        Self {
            subresource: None,
            body: Body::StrategicMerge(patch),
        }
    }
}

/// The writes of a lifecycle change of `pod`: its conditions through the `status` subresource first (the
/// patch carries the pod's `resourceVersion`), then its metadata, conditional on the `resourceVersion`
/// only when no status write went first.
#[must_use]
pub fn lifecycle_writes(change: &PodChange, pod: &Pod) -> Vec<PodWrite> {
    let version = pod.metadata.resource_version.as_deref();
    let mut writes = Vec::with_capacity(2);
    let status = change.status.strategic_merge_patch(pod);
    let status_sent = status.is_some();
    if let Some(patch) = status {
        writes.push(PodWrite {
            subresource: Some("status"),
            body: Body::StrategicMerge(patch),
        });
    }
    if let Some(patch) = change.metadata.strategic_merge_patch() {
        writes.push(PodWrite::metadata(
            patch,
            if status_sent { None } else { version },
        ));
    }
    writes
}

/// The writes of the steps of an in-place update or refresh, in order.
#[must_use]
pub fn in_place_writes(steps: impl IntoIterator<Item = Write>) -> Vec<PodWrite> {
    steps.into_iter().map(PodWrite::from_inplace).collect()
}

/// A JSON patch whose `test` of the `resourceVersion` fails is refused with 422 Invalid: the pod changed
/// since it was read, which is a conflict like a 409.
pub fn failed_test_is_conflict(error: ActionError) -> ActionError {
    match error {
        ActionError::Api {
            object,
            source: kube::Error::Api(status),
        } if status.code == 422 && status.details.as_ref().is_none_or(|d| d.causes.is_empty()) => {
            ActionError::Conflict { object }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use kruise_lifecycle::change::{MetadataChange, StatusChange};
    use serde_json::json;

    use super::*;

    fn pod() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "web-0", "namespace": "ns", "resourceVersion": "42"},
            "status": {"conditions": [{"type": "KruisePodReady", "status": "True"}]},
        }))
        .unwrap()
    }

    #[test]
    fn a_lifecycle_change_writes_status_first_and_only_the_first_write_is_conditional() {
        let mut status = StatusChange::default();
        status.set(k8s_openapi::api::core::v1::PodCondition {
            type_: "KruisePodReady".into(),
            status: "False".into(),
            ..Default::default()
        });
        let metadata = MetadataChange::default().with_label("state", "PreparingDelete");
        let writes = lifecycle_writes(
            &PodChange {
                metadata: metadata.clone(),
                status,
            },
            &pod(),
        );
        assert_eq!(
            writes.iter().map(|w| w.subresource).collect::<Vec<_>>(),
            [Some("status"), None]
        );
        assert_eq!(writes[0].precondition(), Some("42"));
        assert_eq!(writes[1].precondition(), None);
        let alone = lifecycle_writes(
            &PodChange {
                metadata,
                status: StatusChange::default(),
            },
            &pod(),
        );
        assert_eq!(alone.len(), 1);
        assert_eq!(alone[0].precondition(), Some("42"));
    }

    #[test]
    fn rebasing_moves_only_the_observed_precondition() {
        let mut write = PodWrite::metadata(json!({"metadata": {"labels": {"a": "b"}}}), Some("42"));
        write.rebase("41", "50");
        assert_eq!(write.precondition(), Some("42"));
        write.rebase("42", "50");
        assert_eq!(write.precondition(), Some("50"));
        let mut unconditional = PodWrite::metadata(json!({"metadata": {}}), None);
        unconditional.rebase("42", "50");
        assert_eq!(unconditional.precondition(), None);
    }
}
