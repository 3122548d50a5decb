//! The pod webhook's readiness gates: the admission patch that adds the gates `kruise_api::readiness_gates`
//! says a new pod is missing (creating `spec.readinessGates` when the pod has none).

use k8s_openapi::api::core::v1::Pod;
pub use kruise_api::readiness_gates::GateOptions;
use kruise_api::readiness_gates::missing_gates;
use serde_json::{Value, json};

/// RFC 6902 operations adding the missing gates (creating `spec.readinessGates` when absent).
#[must_use]
pub fn patch(pod: &Pod, options: &GateOptions) -> Vec<Value> {
    let missing = missing_gates(pod, options);
    if missing.is_empty() {
        return Vec::new();
    }
    let gate = |kind: &str| json!({ "conditionType": kind });
    let has_list = pod
        .spec
        .as_ref()
        .is_some_and(|spec| spec.readiness_gates.is_some());
    if has_list {
        missing
            .iter()
            .map(|kind| json!({ "op": "add", "path": "/spec/readinessGates/-", "value": gate(kind) }))
            .collect()
    } else {
        let gates: Vec<Value> = missing.iter().map(|kind| gate(kind)).collect();
        vec![json!({ "op": "add", "path": "/spec/readinessGates", "value": gates })]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(owner: Option<(&str, &str, bool)>, gates: Option<&[&str]>) -> Pod {
        let owners: Vec<Value> = owner
            .into_iter()
            .map(|(api_version, kind, controller)| {
                json!({"apiVersion": api_version, "kind": kind, "name": "o", "uid": "u", "controller": controller})
            })
            .collect();
        let mut value = json!({"metadata": {"name": "p", "ownerReferences": owners}, "spec": {"containers": [{"name": "c"}]}});
        if let Some(gates) = gates {
            value["spec"]["readinessGates"] = gates
                .iter()
                .map(|gate| json!({"conditionType": gate}))
                .collect::<Vec<_>>()
                .into();
        }
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn patches_append_or_create_the_list() {
        let options = GateOptions::default();
        let owner = Some(("apps.kruise.io/v1alpha1", "CloneSet", true));
        assert_eq!(
            patch(&pod(owner, None), &options),
            [json!({"op": "add", "path": "/spec/readinessGates",
                "value": [{"conditionType": "InPlaceUpdateReady"}, {"conditionType": "KruisePodReady"}]})]
        );
        assert_eq!(
            patch(
                &pod(owner, Some(&["custom", "InPlaceUpdateReady"])),
                &options
            ),
            [
                json!({"op": "add", "path": "/spec/readinessGates/-", "value": {"conditionType": "KruisePodReady"}})
            ]
        );
        assert!(
            patch(
                &pod(owner, Some(&["KruisePodReady", "InPlaceUpdateReady"])),
                &options
            )
            .is_empty()
        );
    }
}
