//! Container launch priority (upstream `apis/apps/pub/launch_priority.go`).

/// Annotation on a pod: set to [`LAUNCH_ORDERED`] to start containers in declaration order.
pub const LAUNCH_PRIORITY_ANNOTATION: &str = "apps.kruise.io/container-launch-priority";

/// The value of [`LAUNCH_PRIORITY_ANNOTATION`] that orders launches by container position (first = highest).
pub const LAUNCH_ORDERED: &str = "Ordered";

/// Container env var set by users: the container's launch priority, an integer string.
pub const PRIORITY_ENV: &str = "KRUISE_CONTAINER_PRIORITY";

/// Container env var injected by the pod webhook: `valueFrom.configMapKeyRef` with name `<pod>-barrier` and
/// key `p_<priority>`. The in-place update machinery reads the priority back from the key suffix.
pub const BARRIER_ENV: &str = "KRUISE_CONTAINER_BARRIER";

/// The prefix of the barrier ConfigMap key before the priority number.
pub const BARRIER_KEY_PREFIX: &str = "p_";

/// The suffix appended to the pod name to name its barrier ConfigMap.
pub const BARRIER_CONFIG_MAP_SUFFIX: &str = "-barrier";

/// Annotation on a pod: `"true"` once all priorities were written into the barrier ConfigMap.
pub const LAUNCH_PRIORITY_COMPLETED_ANNOTATION: &str =
    "apps.kruise.io/container-launch-priority-completed";
