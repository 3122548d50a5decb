//! Which readiness gates a pod owned by a Kruise workload gets when it is created (upstream's pod webhook,
//! `pkg/webhook/pod/mutating`); the admission patch that adds them is the caller's.
//!
//! * `KruisePodReady`: every pod whose controller owner is in the `apps.kruise.io` group (upstream's pod
//!   webhook), or every pod when the `KruisePodReadinessGate` feature gate is on.
//! * `InPlaceUpdateReady`: pods whose controller owner is a CloneSet. Upstream's CloneSet controller puts
//!   this gate into every pod it creates; doing it here gives the same pods whichever controller creates
//!   them. Advanced DaemonSet adds it only for `InPlaceIfPossible` and Advanced StatefulSet requires it in
//!   its template, which the webhook cannot know without reading the owner, so those stay with their
//!   controllers.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_api::readiness_gates::{GateOptions, missing_gates};
//!
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
//!         "name": "demo", "uid": "u", "controller": true}]},
//!     "spec": {"containers": [{"name": "main"}], "readinessGates": [{"conditionType": "KruisePodReady"}]}
//! })).unwrap();
//! assert_eq!(missing_gates(&pod, &GateOptions::default()), ["InPlaceUpdateReady"]);
//! ```

use k8s_openapi::api::core::v1::Pod;

use crate::keys::{inplace::INPLACE_UPDATE_READY, pod_readiness::KRUISE_POD_READY};

/// The API group of Kruise workloads.
pub const KRUISE_APPS_GROUP: &str = "apps.kruise.io";

/// Switches of the gate injection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GateOptions {
    /// Upstream feature gate `KruisePodReadinessGate` (default off): `KruisePodReady` for every pod.
    pub kruise_pod_ready_for_all_pods: bool,
}

/// The `(group, kind)` of the pod's controller owner reference (the first with `controller: true`).
#[must_use]
pub fn controller_owner(pod: &Pod) -> Option<(&str, &str)> {
    let owner = pod
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|owner| owner.controller == Some(true))?;
    let group = owner
        .api_version
        .rsplit_once('/')
        .map_or("", |(group, _)| group);
    Some((group, owner.kind.as_str()))
}

/// The gates the pod should have and does not, in injection order.
#[must_use]
pub fn missing_gates(pod: &Pod, options: &GateOptions) -> Vec<&'static str> {
    let owner = controller_owner(pod);
    let owned_by_kruise = owner.is_some_and(|(group, _)| group == KRUISE_APPS_GROUP);
    let owned_by_cloneset = owner == Some((KRUISE_APPS_GROUP, "CloneSet"));
    let present: Vec<&str> = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.readiness_gates.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|gate| gate.condition_type.as_str())
        .collect();
    let mut wanted = Vec::new();
    if owned_by_cloneset {
        wanted.push(INPLACE_UPDATE_READY);
    }
    if owned_by_kruise || options.kruise_pod_ready_for_all_pods {
        wanted.push(KRUISE_POD_READY);
    }
    wanted.retain(|gate| !present.contains(gate));
    wanted
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

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
    fn which_owner_gets_which_gate() {
        let options = GateOptions::default();
        type Owner<'a> = Option<(&'a str, &'a str, bool)>;
        let cases: [(Owner, &[&str]); 7] = [
            (
                Some(("apps.kruise.io/v1alpha1", "CloneSet", true)),
                &["InPlaceUpdateReady", "KruisePodReady"],
            ),
            (
                Some(("apps.kruise.io/v1beta1", "CloneSet", true)),
                &["InPlaceUpdateReady", "KruisePodReady"],
            ),
            (
                Some(("apps.kruise.io/v1beta1", "StatefulSet", true)),
                &["KruisePodReady"],
            ),
            (
                Some(("apps.kruise.io/v1alpha1", "DaemonSet", true)),
                &["KruisePodReady"],
            ),
            (Some(("apps.kruise.io/v1alpha1", "CloneSet", false)), &[]),
            (Some(("apps/v1", "ReplicaSet", true)), &[]),
            (None, &[]),
        ];
        for (owner, expected) in cases {
            assert_eq!(
                missing_gates(&pod(owner, None), &options),
                expected,
                "{owner:?}"
            );
        }
    }

    #[test]
    fn the_feature_gate_covers_every_pod() {
        let options = GateOptions {
            kruise_pod_ready_for_all_pods: true,
        };
        assert_eq!(
            missing_gates(&pod(None, None), &options),
            ["KruisePodReady"]
        );
        assert_eq!(
            missing_gates(&pod(Some(("apps/v1", "ReplicaSet", true)), None), &options),
            ["KruisePodReady"]
        );
    }
}
