//! The Advanced DaemonSet controller's owned objects (pods, revisions) from the process's shared informers,
//! found by the [`daemonset_uid_keys`] index, and the nodes: each owned-object change satisfies the
//! create/delete expectations it shows and triggers the owning DaemonSet; a node change that can move a
//! daemon pod (labels, taints, `unschedulable`, the node appearing or going) triggers every DaemonSet.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::Node;
use kruise_api::apps::v1beta1::DaemonSet;
use kruise_runtime::{Change, Informer};
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};

use super::context::Shared;
use crate::expectations::Operation;

/// The API group of the owner references this controller follows (an `apps/v1` DaemonSet is not ours).
const GROUP: &str = "apps.kruise.io";

/// The controller owner reference of `object` when it is an Advanced DaemonSet: `(name, uid)`.
#[must_use]
pub fn daemonset_owner<K: Resource>(object: &K) -> Option<(&str, &str)> {
    object
        .owner_references()
        .iter()
        .find(|owner| owner.controller == Some(true))
        .filter(|owner| {
            owner.kind == "DaemonSet"
                && owner
                    .api_version
                    .split_once('/')
                    .is_some_and(|(group, _)| group == GROUP)
        })
        .map(|owner| (owner.name.as_str(), owner.uid.as_str()))
}

/// The DaemonSet to reconcile when `object` changes.
#[must_use]
pub fn owner_ref<K: Resource>(object: &K) -> Option<ObjectRef<DaemonSet>> {
    let (name, _) = daemonset_owner(object)?;
    let reference = ObjectRef::new(name);
    Some(match object.namespace() {
        Some(namespace) => reference.within(&namespace),
        None => reference,
    })
}

/// The index keys of an owned object on a shared informer: the UID of the Advanced DaemonSet controlling it.
#[must_use]
pub fn daemonset_uid_keys<K: Resource>(object: &K) -> Vec<String> {
    daemonset_owner(object)
        .map(|(_, uid)| uid.to_owned())
        .into_iter()
        .collect()
}

/// What seeing `object` (`gone`: its deletion) tells the expectations: `(owner uid, operation, object
/// key)` pairs. An object being deleted (a deletion timestamp) also satisfies a create: it was created.
#[must_use]
pub fn observed<K: Resource>(
    kind: &str,
    object: &K,
    gone: bool,
) -> Vec<(String, Operation, String)> {
    let seen = |operation: Operation| {
        daemonset_owner(object)
            .map(|(_, uid)| (uid.to_owned(), operation, expectation_key(kind, object)))
    };
    if gone {
        return seen(Operation::Delete).into_iter().collect();
    }
    let mut found: Vec<_> = seen(Operation::Create).into_iter().collect();
    if object.meta().deletion_timestamp.is_some() {
        found.extend(seen(Operation::Delete));
    }
    found
}

/// The objects of a shared informer (in `namespace` only, if given) as the controller's trigger: each
/// change satisfies the expectations it shows (the object named `<kind>/<namespace>/<name>`), and `synced`
/// is set once every stored object has been seen.
pub fn owned<K>(
    informer: &Informer<K>,
    kind: &'static str,
    namespace: Option<String>,
    synced: Arc<AtomicBool>,
    shared: Arc<Shared>,
) -> impl Stream<Item = Arc<K>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    informer.subscribe().filter_map(move |change| {
        let object = match change {
            Change::Listed => {
                synced.store(true, Ordering::SeqCst);
                None
            }
            Change::Applied(object) | Change::Deleted(object)
                if namespace.as_deref().is_some_and(|namespace| {
                    object.meta().namespace.as_deref() != Some(namespace)
                }) =>
            {
                None
            }
            Change::Applied(object) => {
                shared.observe_all(&observed(kind, object.as_ref(), false));
                Some(object)
            }
            Change::Deleted(object) => {
                shared.forget_version(&expectation_key(kind, object.as_ref()));
                shared.observe_all(&observed(kind, object.as_ref(), true));
                Some(object)
            }
        };
        futures::future::ready(object)
    })
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

/// The key expectations use for an owned object: `<kind>/<namespace>/<name>`.
#[must_use]
pub fn expectation_key<K: Resource>(kind: &str, object: &K) -> String {
    key_of(
        kind,
        object.meta().namespace.as_deref().unwrap_or(""),
        object.meta().name.as_deref().unwrap_or(""),
    )
}

/// `<kind>/<namespace>/<name>`.
#[must_use]
pub fn key_of(kind: &str, namespace: &str, name: &str) -> String {
    format!("{kind}/{namespace}/{name}")
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    use super::*;

    fn pod(owner: (&str, &str), deleting: bool) -> Pod {
        let (api_version, kind) = owner;
        let mut metadata = json!({"name": "agent-x", "namespace": "ns", "ownerReferences": [
            {"apiVersion": api_version, "kind": kind, "name": "agent", "uid": "ds-uid", "controller": true}]});
        if deleting {
            metadata["deletionTimestamp"] = json!("2024-05-01T10:00:00Z");
        }
        serde_json::from_value(json!({"metadata": metadata})).unwrap()
    }

    #[test]
    fn only_kruise_daemonsets_own_pods() {
        let ours = pod(("apps.kruise.io/v1alpha1", "DaemonSet"), false);
        assert_eq!(daemonset_owner(&ours), Some(("agent", "ds-uid")));
        assert_eq!(daemonset_uid_keys(&ours), ["ds-uid"]);
        assert!(daemonset_owner(&pod(("apps.kruise.io/v1beta1", "DaemonSet"), false)).is_some());
        assert!(
            daemonset_owner(&pod(("apps/v1", "DaemonSet"), false)).is_none(),
            "a built-in DaemonSet's pod is not ours"
        );
        assert!(daemonset_owner(&pod(("apps.kruise.io/v1alpha1", "CloneSet"), false)).is_none());
        let reference = owner_ref(&ours).unwrap();
        assert_eq!(
            (reference.name.as_str(), reference.namespace.as_deref()),
            ("agent", Some("ns"))
        );
    }

    #[test]
    fn a_deleting_pod_satisfies_its_create_and_its_delete() {
        let deleting = pod(("apps.kruise.io/v1alpha1", "DaemonSet"), true);
        let seen = observed("pod", &deleting, false);
        assert_eq!(
            seen,
            [
                (
                    "ds-uid".to_owned(),
                    Operation::Create,
                    "pod/ns/agent-x".to_owned()
                ),
                (
                    "ds-uid".to_owned(),
                    Operation::Delete,
                    "pod/ns/agent-x".to_owned()
                ),
            ]
        );
        assert_eq!(observed("pod", &deleting, true).len(), 1);
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
