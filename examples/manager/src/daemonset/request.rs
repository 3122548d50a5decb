//! From planned pod actions to the patches sent for them (pure, so it is tested without a cluster), in the
//! shapes of [`crate::workload::pod_write`]: a lifecycle transition (status first, then
//! metadata), the writes of an in-place refresh, or an in-place update. The first write of an action is
//! conditional on the `resourceVersion` the plan was made from (a JSON patch `test`s it, a strategic-merge
//! patch carries it), so a pod changed since it was read gives 409 instead of being overwritten.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_inplace::UpdateOptions;
use kruise_schedule::daemonset::ActionKind;

pub use crate::workload::pod_write::{Body, PodWrite};
use crate::workload::pod_write::{in_place_writes, lifecycle_writes};

/// The writes, in order, for an action on an existing `pod`; creations and deletions have none (they are
/// requests of their own).
///
/// # Errors
/// An in-place update cannot be rendered (an annotation of the pod does not parse).
pub fn pod_writes(
    kind: &ActionKind,
    pod: &Pod,
    now: Timestamp,
    options: &UpdateOptions,
) -> Result<Vec<PodWrite>, kruise_inplace::Error> {
    let writes = match kind {
        ActionKind::Lifecycle { transition, .. } => lifecycle_writes(&transition.change, pod),
        ActionKind::RefreshInPlace { outcome, .. } => {
            in_place_writes(outcome.writes.iter().cloned())
        }
        ActionKind::UpdateInPlace { .. } => match kind.in_place_outcome(pod, now, options) {
            Some(outcome) => in_place_writes(outcome?.writes),
            None => Vec::new(),
        },
        _ => Vec::new(),
    };
    Ok(writes)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use kruise_api::lifecycle::LifecycleStateType;
    use kruise_inplace::{UpdateSpec, calculate_templates};
    use kruise_lifecycle::Transition;
    use kruise_lifecycle::change::{MetadataChange, PodChange, StatusChange};
    use serde_json::json;

    use super::*;

    fn pod() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "agent-abcde", "namespace": "ns", "resourceVersion": "42",
                "labels": {"controller-revision-hash": "old"}},
            "spec": {"containers": [{"name": "main", "image": "agent:1"}],
                "readinessGates": [{"conditionType": "InPlaceUpdateReady"}]},
            "status": {"phase": "Running",
                "conditions": [{"type": "InPlaceUpdateReady", "status": "True"}],
                "containerStatuses": [{"name": "main", "image": "agent:1", "imageID": "sha:1",
                    "ready": true, "restartCount": 0}]},
        }))
        .unwrap()
    }

    fn now() -> Timestamp {
        "2024-05-01T10:00:00Z".parse().unwrap()
    }

    #[test]
    fn a_pre_delete_hold_writes_status_then_metadata_and_the_first_is_conditional() {
        let mut status = StatusChange::default();
        status.set(k8s_openapi::api::core::v1::PodCondition {
            type_: "KruisePodReady".into(),
            status: "False".into(),
            ..Default::default()
        });
        let kind = ActionKind::Lifecycle {
            pod: 0,
            transition: Transition {
                from: Some(LifecycleStateType::Normal),
                to: Some(LifecycleStateType::PreparingDelete),
                change: PodChange {
                    metadata: MetadataChange::default()
                        .with_label("lifecycle.apps.kruise.io/state", "PreparingDelete"),
                    status,
                },
            },
        };
        let writes = pod_writes(&kind, &pod(), now(), &UpdateOptions::default()).unwrap();
        assert_eq!(
            writes.iter().map(|w| w.subresource).collect::<Vec<_>>(),
            [Some("status"), None]
        );
        let (Body::StrategicMerge(first), Body::StrategicMerge(second)) =
            (&writes[0].body, &writes[1].body)
        else {
            panic!("not strategic merges: {writes:?}");
        };
        assert_eq!(first["metadata"]["resourceVersion"], "42");
        assert!(second["metadata"].get("resourceVersion").is_none());
        assert_eq!(
            second["metadata"]["labels"]["lifecycle.apps.kruise.io/state"],
            "PreparingDelete"
        );
        assert!(
            pod_writes(
                &ActionKind::DeletePod { pod: 0 },
                &pod(),
                now(),
                &UpdateOptions::default()
            )
            .unwrap()
            .is_empty()
        );
    }

    #[test]
    fn an_in_place_update_tests_the_version_first() {
        let template = |image: &str| -> k8s_openapi::api::core::v1::PodTemplateSpec {
            serde_json::from_value(
                json!({"spec": {"containers": [{"name": "main", "image": image}]}}),
            )
            .unwrap()
        };
        let options = UpdateOptions::default();
        let spec: UpdateSpec =
            calculate_templates(&template("agent:1"), &template("agent:2"), &options).unwrap();
        let kind = ActionKind::UpdateInPlace {
            pod: 0,
            spec: Arc::new(spec),
            lifecycle: None,
        };
        let writes = pod_writes(&kind, &pod(), now(), &options).unwrap();
        let Body::Json(first) = &writes[0].body else {
            panic!("not a JSON patch: {writes:?}")
        };
        let first = serde_json::to_value(first).unwrap();
        assert_eq!(first[0]["op"], "test");
        assert_eq!(first[0]["path"], "/metadata/resourceVersion");
        let text = format!("{writes:?}");
        assert!(text.contains("agent:2"), "{text}");
    }
}
