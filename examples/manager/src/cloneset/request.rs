//! From planned pod actions to the patches sent for them (pure, so it is tested without a cluster).
//!
//! Every action's first write is conditional on the `resourceVersion` the plan was made from: a JSON
//! patch starts with a `test` of `/metadata/resourceVersion` (as `kruise_inplace` writes it), a
//! strategic-merge patch carries `metadata.resourceVersion`. A pod changed since it was read makes the
//! write fail with 409 instead of being overwritten; later writes of the same action follow the first.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_inplace::UpdateOptions;
use kruise_schedule::cloneset::ActionKind;

pub use crate::workload::pod_write::{Body, PodWrite};
use crate::workload::pod_write::{in_place_writes, lifecycle_writes};

/// The writes, in order, for an action on an existing `pod` (lifecycle changes, in-place steps, labels).
/// Creations and deletions have none (they are requests of their own).
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
        _ => kind
            .metadata_change()
            .and_then(|change| change.strategic_merge_patch())
            .map(|patch| PodWrite::metadata(patch, version))
            .into_iter()
            .collect(),
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
    use kruise_schedule::cloneset::SpecificKind;
    use serde_json::{Value, json};

    use super::*;

    fn pod() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "web-abcde", "namespace": "ns", "resourceVersion": "42",
                "labels": {"controller-revision-hash": "web-old"}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1"}],
                "readinessGates": [{"conditionType": "InPlaceUpdateReady"}]},
            "status": {"phase": "Running",
                "conditions": [{"type": "InPlaceUpdateReady", "status": "True"}],
                "containerStatuses": [{"name": "main", "image": "nginx:1", "imageID": "sha:1",
                    "ready": true, "restartCount": 0, "image": "nginx:1"}]},
        }))
        .unwrap()
    }

    fn now() -> Timestamp {
        "2024-05-01T10:00:00Z".parse().unwrap()
    }

    fn has_version(patch: &Value) -> bool {
        patch["metadata"]["resourceVersion"] == "42"
    }

    #[test]
    fn rebasing_moves_only_the_observed_precondition() {
        let mut label = pod_writes(
            &ActionKind::Specific(SpecificKind::MarkSpecifiedDelete { pod: 0 }),
            &pod(),
            now(),
            &UpdateOptions::default(),
        )
        .unwrap()
        .remove(0);
        assert_eq!(label.precondition(), Some("42"));
        label.rebase("41", "43");
        assert_eq!(label.precondition(), Some("42"), "another version is kept");
        label.rebase("42", "43");
        assert_eq!(label.precondition(), Some("43"));
        let Body::StrategicMerge(patch) = &label.body else {
            panic!("not a strategic merge: {label:?}");
        };
        assert_eq!(
            patch["metadata"]["labels"]["apps.kruise.io/specified-delete"],
            "true"
        );

        let mut json: PodWrite = PodWrite {
            subresource: Some("status"),
            body: Body::Json(
                serde_json::from_value(serde_json::json!([
                    {"op": "test", "path": "/metadata/resourceVersion", "value": "42"},
                    {"op": "add", "path": "/status/conditions/-", "value": {"type": "X"}},
                ]))
                .unwrap(),
            ),
        };
        json.rebase("42", "44");
        assert_eq!(json.precondition(), Some("44"));
        let Body::Json(patch) = &json.body else {
            panic!("not a JSON patch");
        };
        assert_eq!(patch.0.len(), 2);

        let mut unconditional = PodWrite::metadata(serde_json::json!({"metadata": {}}), None);
        unconditional.rebase("42", "45");
        assert_eq!(
            unconditional.precondition(),
            None,
            "no precondition is added"
        );
    }

    #[test]
    fn label_actions_are_conditional_strategic_merges() {
        let writes = pod_writes(
            &ActionKind::Specific(SpecificKind::MarkSpecifiedDelete { pod: 0 }),
            &pod(),
            now(),
            &UpdateOptions::default(),
        )
        .unwrap();
        assert_eq!(writes.len(), 1);
        assert_eq!(writes[0].subresource, None);
        let Body::StrategicMerge(patch) = &writes[0].body else {
            panic!("not a strategic merge: {:?}", writes[0]);
        };
        assert_eq!(
            patch["metadata"]["labels"]["apps.kruise.io/specified-delete"],
            "true"
        );
        assert!(has_version(patch));
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
    fn lifecycle_writes_status_first_and_only_it_carries_the_precondition() {
        let mut status = StatusChange::default();
        status.set(k8s_openapi::api::core::v1::PodCondition {
            type_: "KruisePodReady".into(),
            status: "False".into(),
            ..Default::default()
        });
        let transition = Transition {
            from: Some(LifecycleStateType::Normal),
            to: Some(LifecycleStateType::PreparingDelete),
            change: PodChange {
                metadata: MetadataChange::default()
                    .with_label("lifecycle.apps.kruise.io/state", "PreparingDelete"),
                status,
            },
        };
        let kind = ActionKind::Lifecycle {
            pod: 0,
            transition: transition.clone(),
        };
        let writes = pod_writes(&kind, &pod(), now(), &UpdateOptions::default()).unwrap();
        assert_eq!(
            writes.iter().map(|w| w.subresource).collect::<Vec<_>>(),
            [Some("status"), None]
        );
        let (Body::StrategicMerge(first), Body::StrategicMerge(second)) =
            (&writes[0].body, &writes[1].body)
        else {
            panic!("not strategic merges");
        };
        assert!(has_version(first));
        assert!(!has_version(second));
        assert_eq!(
            second["metadata"]["labels"]["lifecycle.apps.kruise.io/state"],
            "PreparingDelete"
        );

        // Metadata alone: it carries the precondition.
        let metadata_only = Transition {
            change: PodChange {
                metadata: transition.change.metadata.clone(),
                status: StatusChange::default(),
            },
            ..transition
        };
        let writes = pod_writes(
            &ActionKind::Lifecycle {
                pod: 0,
                transition: metadata_only,
            },
            &pod(),
            now(),
            &UpdateOptions::default(),
        )
        .unwrap();
        let Body::StrategicMerge(only) = &writes[0].body else {
            panic!()
        };
        assert!(has_version(only));
    }

    #[test]
    fn in_place_updates_send_json_patches_that_test_the_version() {
        let template = |image: &str| -> k8s_openapi::api::core::v1::PodTemplateSpec {
            serde_json::from_value(
                json!({"spec": {"containers": [{"name": "main", "image": image}]}}),
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
        assert!(!writes.is_empty());
        let pod_write = writes.iter().find(|w| w.subresource.is_none()).unwrap();
        let Body::Json(patch) = &pod_write.body else {
            panic!()
        };
        let text = serde_json::to_string(patch).unwrap();
        assert!(text.contains("nginx:2"), "{text}");
        let Body::Json(first) = &writes[0].body else {
            panic!()
        };
        let first = serde_json::to_value(first).unwrap();
        assert_eq!(first[0]["op"], "test");
        assert_eq!(first[0]["path"], "/metadata/resourceVersion");
    }
}
