//! The containers of a pod's spec and their statuses, empty where the pod has none.

use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod};

/// `spec.containers`, empty without a spec.
pub(crate) fn containers(pod: &Pod) -> &[Container] {
    pod.spec
        .as_ref()
        .map(|spec| spec.containers.as_slice())
        .unwrap_or_default()
}

/// `status.containerStatuses`, empty without them.
pub(crate) fn container_statuses(pod: &Pod) -> &[ContainerStatus] {
    pod.status
        .as_ref()
        .and_then(|status| status.container_statuses.as_deref())
        .unwrap_or_default()
}
