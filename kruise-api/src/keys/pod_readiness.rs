//! The multi-writer `KruisePodReady` readiness gate and the "unavailable" label prefix (upstream
//! `apis/apps/pub/pod_readiness_gate.go`, `pkg/util/podreadiness`).

/// Readiness gate and pod condition type. The condition's `message` is a JSON array of
/// [`PodNotReadyEntry`](crate::annotations::PodNotReadyEntry) sorted by user agent then key; the status is
/// `False` while the array is non-empty and `True` once it is emptied.
pub const KRUISE_POD_READY: &str = "KruisePodReady";

/// The user agent of not-ready entries written by the lifecycle-hook machinery.
pub const LIFECYCLE_USER_AGENT: &str = "Lifecycle";

/// The user agent of not-ready entries written for a ContainerRecreateRequest (key `<namespace>/<name>`).
pub const CONTAINER_RECREATE_REQUEST_USER_AGENT: &str = "ContainerRecreateRequest";

/// The not-ready key the lifecycle machinery adds when a pod enters `PreparingDelete`.
pub const PRE_DELETE_HOOK_KEY: &str = "preDeleteHook";

/// The not-ready key the lifecycle machinery adds when a pod enters `PreparingUpdate`.
pub const PRE_UPDATE_HOOK_KEY: &str = "preUpdateHook";

/// Label prefix: any label starting with it makes a pod count as unavailable for PodUnavailableBudget and
/// Kruise workloads.
pub const UNAVAILABLE_POD_LABEL_PREFIX: &str = "unavailable-pod.kruise.io/";
