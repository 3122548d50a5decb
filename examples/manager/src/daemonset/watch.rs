//! The Advanced DaemonSet controller's owned objects (pods, revisions) from the process's shared informers,
//! found by the [`daemonset_uid_keys`] index, and the nodes: each owned-object change satisfies the
//! create/delete expectations it shows (see [`crate::workload::watch::owned`]) and triggers the owning
//! DaemonSet; a node change that can move a daemon pod (labels, taints, `unschedulable`, the node
//! appearing or going) triggers every DaemonSet.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::Node;
use kruise_runtime::{Change, Informer};
use kruise_schedule::daemonset::OWNER_API_VERSION;
use kube::{Resource, ResourceExt};

use crate::workload::owner::OwnerKind;

/// The owner kind of the objects an Advanced DaemonSet controls (references of either `apps.kruise.io`
/// version; an `apps/v1` DaemonSet is not ours).
pub const OWNER: OwnerKind = OwnerKind {
    kind: "DaemonSet",
    api_version: OWNER_API_VERSION,
};

/// The index keys of an owned object on a shared informer: the UID of the Advanced DaemonSet controlling it.
#[must_use]
pub fn daemonset_uid_keys<K: Resource>(object: &K) -> Vec<String> {
    OWNER.uid_keys(object)
}

/// The node changes that can move a daemon pod: a node seen for the first time, gone, or with other
/// labels, taints or `unschedulable` (heartbeats, which change nodes every few seconds, are left out).
/// `synced` is set once every node has been seen.
pub fn node_changes(
    informer: &Informer<Node>,
    synced: Arc<AtomicBool>,
) -> impl Stream<Item = Arc<Node>> + Send + 'static {
    let mut fingerprints: HashMap<String, u64> = HashMap::new();
    informer.subscribe().filter_map(move |change| {
        let node = match change {
            Change::Listed => {
                synced.store(true, Ordering::SeqCst);
                None
            }
            Change::Applied(node) => {
                let fingerprint = placement_fingerprint(&node);
                (fingerprints.insert(node.name_any(), fingerprint) != Some(fingerprint))
                    .then_some(node)
            }
            Change::Deleted(node) => {
                fingerprints.remove(&node.name_any());
                Some(node)
            }
        };
        futures::future::ready(node)
    })
}

/// A hash of what decides whether a node runs a daemon pod: name, labels, taints, `unschedulable`.
#[must_use]
pub fn placement_fingerprint(node: &Node) -> u64 {
    let mut hasher = DefaultHasher::new();
    node.metadata.name.hash(&mut hasher);
    node.metadata.labels.hash(&mut hasher);
    if let Some(spec) = &node.spec {
        spec.unschedulable.hash(&mut hasher);
        for taint in spec.taints.iter().flatten() {
            (&taint.key, &taint.value, &taint.effect).hash(&mut hasher);
        }
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    use super::*;

    fn pod(owner: (&str, &str)) -> Pod {
        let (api_version, kind) = owner;
        serde_json::from_value(json!({"metadata": {"name": "agent-x", "namespace": "ns",
            "ownerReferences": [{"apiVersion": api_version, "kind": kind, "name": "agent",
                "uid": "ds-uid", "controller": true}]}}))
        .unwrap()
    }

    #[test]
    fn only_kruise_daemonsets_own_pods() {
        for version in ["apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1"] {
            assert_eq!(daemonset_uid_keys(&pod((version, "DaemonSet"))), ["ds-uid"]);
        }
        assert!(
            daemonset_uid_keys(&pod(("apps/v1", "DaemonSet"))).is_empty(),
            "a built-in DaemonSet's pod is not ours"
        );
        assert!(daemonset_uid_keys(&pod(("apps.kruise.io/v1alpha1", "CloneSet"))).is_empty());
    }

    #[test]
    fn heartbeats_do_not_change_the_fingerprint_but_labels_and_taints_do() {
        let node =
            |labels: serde_json::Value, taints: serde_json::Value, heartbeat: &str| -> Node {
                serde_json::from_value(json!({
                    "metadata": {"name": "n1", "labels": labels},
                    "spec": {"taints": taints},
                    "status": {"conditions": [{"type": "Ready", "status": "True",
                        "lastHeartbeatTime": heartbeat}]},
                }))
                .unwrap()
            };
        let base =
            placement_fingerprint(&node(json!({"a": "1"}), json!([]), "2024-05-01T10:00:00Z"));
        assert_eq!(
            base,
            placement_fingerprint(&node(json!({"a": "1"}), json!([]), "2024-05-01T10:00:09Z"))
        );
        assert_ne!(
            base,
            placement_fingerprint(&node(json!({"a": "2"}), json!([]), "2024-05-01T10:00:00Z"))
        );
        assert_ne!(
            base,
            placement_fingerprint(&node(
                json!({"a": "1"}),
                json!([{"key": "k", "effect": "NoSchedule"}]),
                "2024-05-01T10:00:00Z"
            ))
        );
    }
}
