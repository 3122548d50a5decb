//! From planned pod actions to the patches sent for them (pure, so it is tested without a cluster).
//!
//! Every action's first write is conditional on the `resourceVersion` the plan was made from: a JSON
//! patch starts with a `test` of `/metadata/resourceVersion` (as `kruise_inplace` writes it), a
//! strategic-merge patch carries `metadata.resourceVersion`. A pod changed since it was read makes the
//! write fail with 409 instead of being overwritten; later writes of the same action follow the first.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_inplace::UpdateOptions;
use kruise_schedule::statefulset::{ActionKind, SpecificKind};
use serde_json::json;

pub use crate::workload::pod_write::{Body, PodWrite};
use crate::workload::pod_write::{in_place_writes, lifecycle_writes};

/// The writes, in order, for an action on an existing `pod` (lifecycle changes, in-place steps,
/// identity labels). Creations, deletions and claim writes have none (they are requests of their own).
///
/// # Errors
/// An in-place update cannot be rendered (an annotation of the pod does not parse).
pub fn pod_writes(
    kind: &ActionKind,
    pod: &Pod,
    now: Timestamp,
    options: &UpdateOptions,
) -> Result<Vec<PodWrite>, kruise_inplace::Error> {
    let version = pod.metadata.resource_version.as_deref();
    let writes = match kind {
        ActionKind::Lifecycle { transition, .. } => lifecycle_writes(&transition.change, pod),
        ActionKind::RefreshInPlace { outcome, .. } => {
            in_place_writes(outcome.writes.iter().cloned())
        }
        ActionKind::UpdateInPlace { .. } => match kind.in_place_outcome(pod, now, options) {
            Some(outcome) => in_place_writes(outcome?.writes),
            None => Vec::new(),
        },
        // The identity labels (a pod's volumes cannot change once it exists).
        ActionKind::Specific(SpecificKind::UpdateIdentity { updated, .. }) => {
            vec![PodWrite::metadata(
                json!({"metadata": {"labels": updated.metadata.labels}}),
                version,
            )]
        }
        _ => Vec::new(),
    };
    Ok(writes)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use kruise_inplace::{UpdateSpec, calculate_templates};
    use kruise_lifecycle::Transition;
    use serde_json::json;

    use super::*;

    fn pod() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "web-0", "namespace": "ns", "resourceVersion": "42",
                "labels": {"controller-revision-hash": "web-old"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx:1"}],
                "readinessGates": [{"conditionType": "InPlaceUpdateReady"}]},
            "status": {"phase": "Running",
                "conditions": [{"type": "InPlaceUpdateReady", "status": "True"}],
                "containerStatuses": [{"name": "nginx", "image": "nginx:1", "imageID": "sha:1",
                    "ready": true, "restartCount": 0}]},
        }))
        .unwrap()
    }

    fn now() -> Timestamp {
        "2024-05-01T10:00:00Z".parse().unwrap()
    }

    #[test]
    fn identity_fixes_are_conditional_label_merges() {
        let mut updated = pod();
        updated
            .metadata
            .labels
            .get_or_insert_default()
            .insert("statefulset.kubernetes.io/pod-name".into(), "web-0".into());
        let kind = ActionKind::Specific(SpecificKind::UpdateIdentity {
            pod: 0,
            updated: Box::new(updated),
        });
        let writes = pod_writes(&kind, &pod(), now(), &UpdateOptions::default()).unwrap();
        let [
            PodWrite {
                subresource: None,
                body: Body::StrategicMerge(patch),
            },
        ] = writes.as_slice()
        else {
            panic!("one metadata write expected: {writes:?}");
        };
        assert_eq!(patch["metadata"]["resourceVersion"], "42");
        assert_eq!(
            patch["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"],
            "web-0"
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
    fn in_place_updates_send_json_patches_that_test_the_version() {
        let template = |image: &str| -> k8s_openapi::api::core::v1::PodTemplateSpec {
            serde_json::from_value(
                json!({"spec": {"containers": [{"name": "nginx", "image": image}]}}),
            )
            .unwrap()
        };
        let options = UpdateOptions::default();
        let spec: UpdateSpec =
            calculate_templates(&template("nginx:1"), &template("nginx:2"), &options).unwrap();
        let kind = ActionKind::UpdateInPlace {
            pod: 0,
            spec: Arc::new(spec),
            lifecycle: Some(Arc::new(Transition::default())),
        };
        let writes = pod_writes(&kind, &pod(), now(), &options).unwrap();
        let Body::Json(first) = &writes[0].body else {
            panic!("not a JSON patch: {writes:?}")
        };
        let first = serde_json::to_value(first).unwrap();
        assert_eq!(first[0]["op"], "test");
        assert_eq!(first[0]["path"], "/metadata/resourceVersion");
        let text = format!("{writes:?}");
        assert!(text.contains("nginx:2"), "{text}");
    }
}
