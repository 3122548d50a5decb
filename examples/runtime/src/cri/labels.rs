//! The labels and annotations kubelet writes on CRI sandboxes and containers (`pkg/kubelet/types/labels.go`,
//! `pkg/kubelet/kuberuntime/labels.go`). The node simulator writes them like kubelet does; kruise-daemon
//! finds a pod's containers by the pod UID label and a container by its name label.

use std::collections::HashMap;

/// Label on sandboxes and containers: the pod's name.
pub const POD_NAME: &str = "io.kubernetes.pod.name";
/// Label on sandboxes and containers: the pod's namespace.
pub const POD_NAMESPACE: &str = "io.kubernetes.pod.namespace";
/// Label on sandboxes and containers: the pod's UID.
pub const POD_UID: &str = "io.kubernetes.pod.uid";
/// Label on containers: the container's name in the pod spec.
pub const CONTAINER_NAME: &str = "io.kubernetes.container.name";
/// Annotation on containers: the restart count of this incarnation (kubelet's `restartCount`).
pub const CONTAINER_RESTART_COUNT: &str = "io.kubernetes.container.restartCount";
/// Annotation on containers: the hash of the container spec kubelet started it from.
pub const CONTAINER_HASH: &str = "io.kubernetes.container.hash";
/// Annotation on containers: the pod's termination grace period in seconds.
pub const POD_TERMINATION_GRACE_PERIOD: &str = "io.kubernetes.pod.terminationGracePeriod";

/// The label filter selecting every container (or sandbox) of the pod with this UID.
#[must_use]
pub fn pod_filter(pod_uid: &str) -> HashMap<String, String> {
    HashMap::from([(POD_UID.to_owned(), pod_uid.to_owned())])
}

/// Sandbox labels for a pod, as kubelet sets them.
#[must_use]
pub fn sandbox_labels(namespace: &str, name: &str, uid: &str) -> HashMap<String, String> {
    HashMap::from([
        (POD_NAME.to_owned(), name.to_owned()),
        (POD_NAMESPACE.to_owned(), namespace.to_owned()),
        (POD_UID.to_owned(), uid.to_owned()),
    ])
}

/// Container labels for a container of a pod, as kubelet sets them.
#[must_use]
pub fn container_labels(
    namespace: &str,
    name: &str,
    uid: &str,
    container: &str,
) -> HashMap<String, String> {
    let mut labels = sandbox_labels(namespace, name, uid);
    labels.insert(CONTAINER_NAME.to_owned(), container.to_owned());
    labels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_labels_extend_sandbox_labels() {
        let labels = container_labels("ns", "pod", "uid-1", "main");
        assert_eq!(labels.len(), 4);
        assert_eq!(labels[POD_UID], "uid-1");
        assert_eq!(labels[CONTAINER_NAME], "main");
        assert_eq!(
            pod_filter("uid-1"),
            HashMap::from([(POD_UID.to_owned(), "uid-1".to_owned())])
        );
    }
}
