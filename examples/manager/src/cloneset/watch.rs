//! The CloneSet controller's owned objects (pods, claims, revisions) from the process's shared informers,
//! found by the [`cloneset_uid_keys`] index: each change satisfies the create/delete expectations it shows
//! and triggers the owning CloneSet.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::{Stream, StreamExt};
use kruise_api::apps::v1beta1::CloneSet;
use kruise_runtime::{Change, Informer};
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};

use super::context::Shared;
use crate::expectations::Operation;

/// The API group of the owner references this controller follows.
const GROUP: &str = "apps.kruise.io";

/// The controller owner reference of `object` when it is a CloneSet: `(name, uid)`.
#[must_use]
pub fn cloneset_owner<K: Resource>(object: &K) -> Option<(&str, &str)> {
    object
        .owner_references()
        .iter()
        .find(|owner| owner.controller == Some(true))
        .filter(|owner| {
            owner.kind == "CloneSet"
                && owner
                    .api_version
                    .split_once('/')
                    .is_some_and(|(group, _)| group == GROUP)
        })
        .map(|owner| (owner.name.as_str(), owner.uid.as_str()))
}

/// The CloneSet to reconcile when `object` changes.
#[must_use]
pub fn owner_ref<K: Resource>(object: &K) -> Option<ObjectRef<CloneSet>> {
    let (name, _) = cloneset_owner(object)?;
    let reference = ObjectRef::new(name);
    Some(match object.namespace() {
        Some(namespace) => reference.within(&namespace),
        None => reference,
    })
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
        cloneset_owner(object)
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

/// The index keys of an object on a shared informer (pods, claims, revisions): the UID of the CloneSet
/// controlling it.
#[must_use]
pub fn cloneset_uid_keys<K: Resource>(object: &K) -> Vec<String> {
    cloneset_owner(object)
        .map(|(_, uid)| uid.to_owned())
        .into_iter()
        .collect()
}

/// The objects of a shared informer (in `namespace` only, if given) as the controller's trigger: each
/// change satisfies the create/delete expectations it shows (the object named `<kind>/<namespace>/<name>`),
/// and `synced` is set once every stored object has been seen.
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
    use kube::runtime::watcher::Event;
    use serde_json::json;

    use super::*;

    fn pod(name: &str, owner: Option<(&str, &str)>, deleting: bool) -> Pod {
        let owners: Vec<_> = owner
            .into_iter()
            .map(|(api_version, kind)| {
                json!({"apiVersion": api_version, "kind": kind, "name": "web",
                "uid": "cs-uid", "controller": true})
            })
            .collect();
        let mut metadata = json!({"name": name, "namespace": "ns", "ownerReferences": owners});
        if deleting {
            metadata["deletionTimestamp"] = json!("2024-05-01T10:00:00Z");
        }
        serde_json::from_value(json!({"metadata": metadata})).unwrap()
    }

    const CLONESET: (&str, &str) = ("apps.kruise.io/v1alpha1", "CloneSet");

    #[test]
    fn only_cloneset_owners_count_in_either_version() {
        assert_eq!(
            cloneset_owner(&pod("a", Some(CLONESET), false)),
            Some(("web", "cs-uid"))
        );
        assert!(
            cloneset_owner(&pod(
                "a",
                Some(("apps.kruise.io/v1beta1", "CloneSet")),
                false
            ))
            .is_some()
        );
        assert!(cloneset_owner(&pod("a", Some(("apps/v1", "ReplicaSet")), false)).is_none());
        assert!(cloneset_owner(&pod("a", Some(("example.com/v1", "CloneSet")), false)).is_none());
        assert!(cloneset_owner(&pod("a", None, false)).is_none());
        let reference = owner_ref(&pod("a", Some(CLONESET), false)).unwrap();
        assert_eq!(
            (reference.name.as_str(), reference.namespace.as_deref()),
            ("web", Some("ns"))
        );
    }

    #[test]
    fn events_satisfy_create_and_delete_expectations() {
        let created = observed("pod", &pod("a", Some(CLONESET), false), false);
        assert_eq!(
            created,
            [("cs-uid".into(), Operation::Create, "pod/ns/a".into())]
        );
        let deleting = observed("pod", &pod("a", Some(CLONESET), true), false);
        assert_eq!(deleting.len(), 2);
        assert_eq!(deleting[1].1, Operation::Delete);
        let gone = observed("pod", &pod("a", Some(CLONESET), false), true);
        assert_eq!(
            gone,
            [("cs-uid".into(), Operation::Delete, "pod/ns/a".into())]
        );
        assert!(observed("pod", &pod("b", None, false), false).is_empty());
    }

    #[test]
    fn the_index_finds_only_cloneset_pods() {
        let informer = Informer::<Pod>::new("pods");
        let index = informer.index("cloneset-uid", Arc::new(cloneset_uid_keys::<Pod>));
        informer.apply(Event::Init);
        informer.apply(Event::InitApply(pod("a", Some(CLONESET), false)));
        informer.apply(Event::InitApply(pod("b", None, false)));
        informer.apply(Event::InitDone);
        assert_eq!(index.count("cs-uid"), 1);
        // The owner reference was removed: the pod leaves the index.
        informer.apply(Event::Apply(pod("a", None, false)));
        assert_eq!(index.count("cs-uid"), 0);
        informer.apply(Event::Apply(pod("d", Some(CLONESET), false)));
        assert_eq!(index.get("cs-uid").len(), 1);
    }
}
