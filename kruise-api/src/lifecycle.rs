//! Pod lifecycle hooks shared by CloneSet, Advanced StatefulSet and Advanced DaemonSet (upstream
//! `apis/apps/pub/lifecycle.go`; driven by `pkg/util/lifecycle/lifecycle_utils.go`).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omitempty::is_zero;

/// The lifecycle hooks of a workload's pods.
///
/// ```
/// use kruise_api::lifecycle::{Lifecycle, LifecycleHook};
///
/// let lifecycle: Lifecycle = serde_json::from_str(
///     r#"{"preDelete":{"finalizersHandler":["example.com/unregister"],"markPodNotReady":true}}"#,
/// ).unwrap();
/// let hook: &LifecycleHook = lifecycle.pre_delete.as_ref().unwrap();
/// assert!(hook.mark_pod_not_ready);
/// assert!(lifecycle.mark_pod_not_ready());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Lifecycle {
    /// Hook that holds a pod in `PreparingDelete` before it is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_delete: Option<LifecycleHook>,
    /// Hook that holds a pod in `PreparingUpdate` before an in-place update and marks it `Updated` after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update: Option<LifecycleHook>,
    /// Hook that holds a new pod in `PreparingNormal` until all its labels and finalizers are present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_normal: Option<LifecycleHook>,
}

impl Lifecycle {
    /// Whether the preDelete or the inPlaceUpdate hook asks to mark pods not ready (upstream
    /// `IsLifecycleMarkPodNotReady`). preNormal's flag has no effect.
    #[must_use]
    pub fn mark_pod_not_ready(&self) -> bool {
        [&self.pre_delete, &self.in_place_update]
            .into_iter()
            .any(|hook| hook.as_ref().is_some_and(|hook| hook.mark_pod_not_ready))
    }
}

/// What holds a pod in a lifecycle state: labels and finalizers a user's operator adds and removes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LifecycleHook {
    /// Labels that hold the pod while any of them matches.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub labels_handler: BTreeMap<String, String>,
    /// Finalizers that hold the pod while any of them is present.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub finalizers_handler: Vec<String>,
    /// Mark the pod not ready (through the `KruisePodReady` condition) while it is held in `PreparingDelete` or
    /// `PreparingUpdate`, and ready again once `Updated`. Only honoured on preDelete and inPlaceUpdate hooks.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mark_pod_not_ready: bool,
}

crate::open_enum! {
    /// The value of the `lifecycle.apps.kruise.io/state` pod label.
    pub enum LifecycleStateType {
        /// Created, waiting for the preNormal hook (or, on CloneSet, for scheduling).
        PreparingNormal = "PreparingNormal",
        /// Serving normally.
        Normal = "Normal",
        /// An in-place update is wanted; held by the inPlaceUpdate hook.
        PreparingUpdate = "PreparingUpdate",
        /// Being updated in place.
        Updating = "Updating",
        /// In-place update finished; waiting for the hook to be re-armed.
        Updated = "Updated",
        /// Deletion is wanted; held by the preDelete hook.
        PreparingDelete = "PreparingDelete",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape() {
        let raw = concat!(
            r#"{"preDelete":{"labelsHandler":{"example.com/unready-blocker-delete":"true"},"markPodNotReady":true},"#,
            r#""inPlaceUpdate":{"finalizersHandler":["example.com/registered"]},"preNormal":{}}"#
        );
        let lifecycle: Lifecycle = serde_json::from_str(raw).unwrap();
        assert!(lifecycle.mark_pod_not_ready());
        assert_eq!(serde_json::to_string(&lifecycle).unwrap(), raw);
        let quiet = Lifecycle {
            pre_normal: Some(LifecycleHook {
                mark_pod_not_ready: true,
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(
            !quiet.mark_pod_not_ready(),
            "preNormal's flag has no effect"
        );
        assert_eq!(
            LifecycleStateType::from("PreparingDelete"),
            LifecycleStateType::PreparingDelete
        );
    }
}
