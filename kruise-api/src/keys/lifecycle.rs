//! Pod lifecycle hooks (upstream `apis/apps/pub/lifecycle.go`).

/// Label: the pod's lifecycle state, one of the [`LifecycleStateType`](crate::lifecycle::LifecycleStateType)
/// values. Absent or empty means "no state" and counts like `Normal` for availability. Written by the
/// CloneSet, Advanced StatefulSet and Advanced DaemonSet controllers.
pub const STATE_LABEL: &str = "lifecycle.apps.kruise.io/state";

/// Annotation: when the lifecycle state last changed, RFC 3339 in the controller's local time zone
/// (for example `2024-05-01T10:00:00+08:00`).
pub const TIMESTAMP_ANNOTATION: &str = "lifecycle.apps.kruise.io/timestamp";
