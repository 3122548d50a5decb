//! Whether the containers kruise-daemon found for a ContainerRecreateRequest belong to the pod it names. The
//! daemon finds a request's containers by the pod-UID label the manager's webhook set
//! (`crr.apps.kruise.io/pod-uid`); the request names its pod by `spec.podName` in its own namespace. Both must
//! agree: the runtime labels every container with its pod's namespace and name (kubelet's
//! `io.kubernetes.pod.namespace`, `io.kubernetes.pod.name`), and a container of any other pod means the request
//! is refused (it completes with every container failed and a message naming both pods), never that another
//! pod's container is killed.

use k8s_cri::v1 as cri;
use kruise_api::apps::v1beta1::{
    ContainerRecreateRequest, ContainerRecreateRequestContainerRecreateState as RecreateState,
    ContainerRecreateRequestPhase as Phase,
};
use kruise_runtime::cri::labels;
use kube::ResourceExt;

/// Why the containers with the request's pod UID are not the request's pod's, or `None` when they are (or
/// there are none).
#[must_use]
pub fn mismatch(crr: &ContainerRecreateRequest, containers: &[cri::Container]) -> Option<String> {
    let namespace = crr.namespace().unwrap_or_default();
    let name = &crr.spec.pod_name;
    let label = |container: &cri::Container, key: &str| {
        container.labels.get(key).cloned().unwrap_or_default()
    };
    containers.iter().find_map(|container| {
        let (their_namespace, their_name) = (
            label(container, labels::POD_NAMESPACE),
            label(container, labels::POD_NAME),
        );
        (their_namespace != namespace || their_name != *name).then(|| {
            format!(
                "the pod with UID {uid} on this node is {their_namespace}/{their_name}, not the request's pod \
                 {namespace}/{name}: refusing to recreate its containers",
                uid = label(container, labels::POD_UID),
            )
        })
    })
}

/// The container states of a refused request: every container failed with `message`.
#[must_use]
pub fn refused_states(crr: &ContainerRecreateRequest, message: &str) -> Vec<RecreateState> {
    crr.spec
        .containers
        .iter()
        .map(|container| RecreateState {
            name: container.name.clone(),
            phase: Phase::Failed,
            message: message.to_owned(),
            is_killed: false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crr() -> ContainerRecreateRequest {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "restart", "namespace": "tenant-a",
                "labels": {"crr.apps.kruise.io/pod-uid": "uid-of-b"}},
            "spec": {"podName": "web-0", "containers": [{"name": "main"}]},
        }))
        .unwrap()
    }

    fn container(namespace: &str, name: &str) -> cri::Container {
        cri::Container {
            id: "c1".into(),
            labels: labels::container_labels(namespace, name, "uid-of-b", "main"),
            ..cri::Container::default()
        }
    }

    #[test]
    fn a_uid_of_another_namespaces_pod_is_refused() {
        let message = mismatch(&crr(), &[container("tenant-b", "web-0")]).unwrap();
        assert_eq!(
            message,
            "the pod with UID uid-of-b on this node is tenant-b/web-0, not the request's pod tenant-a/web-0: \
             refusing to recreate its containers"
        );
        assert!(mismatch(&crr(), &[container("tenant-a", "db-0")]).is_some());
        let states = refused_states(&crr(), &message);
        assert_eq!(states.len(), 1);
        assert_eq!(states[0].phase, Phase::Failed);
    }

    #[test]
    fn the_named_pod_or_no_container_is_accepted() {
        assert_eq!(mismatch(&crr(), &[container("tenant-a", "web-0")]), None);
        assert_eq!(mismatch(&crr(), &[]), None);
    }
}
