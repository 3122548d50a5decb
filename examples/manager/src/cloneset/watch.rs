//! The watches of the CloneSet controller's owned objects: each change satisfies the create/delete
//! expectations it shows and triggers the owning CloneSet. Pods come from the process's shared pod
//! informer (found by the [`cloneset_uid_keys`] index); claims and revisions from watches of their own,
//! each feeding an [`OwnerIndex`] (only objects a CloneSet controls are kept, without `managedFields`).

use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::{Stream, StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::CloneSet;
use kruise_runtime::{Change, Informer};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, watcher as watch};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use super::context::Shared;
use crate::expectations::Operation;
use crate::owner_index::OwnerIndex;

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

/// What a watch event tells the expectations: `(owner uid, operation, object key)` pairs.
#[must_use]
pub fn observations<K: Resource>(kind: &str, event: &Event<K>) -> Vec<(String, Operation, String)> {
    match event {
        Event::Apply(object) | Event::InitApply(object) => observed(kind, object, false),
        Event::Delete(object) => observed(kind, object, true),
        Event::Init | Event::InitDone => Vec::new(),
    }
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
        cloneset_owner(object).map(|(_, uid)| (uid.to_owned(), operation, object_key(kind, object)))
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

/// The index keys of a pod on the shared pod informer: the UID of the CloneSet controlling it.
#[must_use]
pub fn cloneset_uid_keys(pod: &Pod) -> Vec<String> {
    cloneset_owner(pod)
        .map(|(_, uid)| uid.to_owned())
        .into_iter()
        .collect()
}

/// The pods of the shared pod informer (in `namespace` only, if given), as the controller's trigger:
/// each change satisfies the create/delete expectations it shows, and `synced` is set once every stored
/// pod has been seen.
pub fn owned_pods(
    informer: &Informer<Pod>,
    namespace: Option<String>,
    synced: Arc<AtomicBool>,
    shared: Arc<Shared>,
) -> impl Stream<Item = Arc<Pod>> + Send + 'static {
    informer.subscribe().filter_map(move |change| {
        let pod = match change {
            Change::Listed => {
                synced.store(true, Ordering::SeqCst);
                None
            }
            Change::Applied(pod) | Change::Deleted(pod)
                if namespace.as_deref().is_some_and(|namespace| {
                    pod.metadata.namespace.as_deref() != Some(namespace)
                }) =>
            {
                None
            }
            Change::Applied(pod) => {
                shared.observe_all(&observed("pod", pod.as_ref(), false));
                Some(pod)
            }
            Change::Deleted(pod) => {
                shared.forget_version(&object_key("pod", pod.as_ref()));
                shared.observe_all(&observed("pod", pod.as_ref(), true));
                Some(pod)
            }
        };
        futures::future::ready(pod)
    })
}

/// The key expectations use for an owned object: `<kind>/<namespace>/<name>`.
#[must_use]
pub fn object_key<K: Resource>(kind: &str, object: &K) -> String {
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

/// Applies one event to `index`, keeping only CloneSet-controlled objects.
pub fn index_event<K: Resource + Clone>(index: &OwnerIndex<K>, event: &Event<K>) {
    match event {
        Event::Apply(object) if cloneset_owner(object).is_none() => index.remove(object),
        Event::InitApply(object) if cloneset_owner(object).is_none() => {}
        _ => index.apply(event),
    }
}

/// The watch of one owned kind: feeds `index` and the expectations, marks `synced` after the first full
/// list, and yields the touched objects (for the controller's triggers).
pub fn owned<K>(
    api: Api<K>,
    kind: &'static str,
    index: OwnerIndex<K>,
    synced: Arc<AtomicBool>,
    shared: Arc<Shared>,
) -> impl Stream<Item = Result<K, watcher::Error>> + Send + 'static
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default,
{
    watch(api, watcher::Config::default())
        .default_backoff()
        .modify(|object: &mut K| object.meta_mut().managed_fields = None)
        .map_ok(move |event| {
            index_event(&index, &event);
            if matches!(event, Event::InitDone) {
                synced.store(true, Ordering::SeqCst);
            }
            if let Event::Delete(object) = &event {
                shared.forget_version(&object_key(kind, object));
            }
            shared.observe_all(&observations(kind, &event));
            event
        })
        .touched_objects()
}

#[cfg(test)]
mod tests {
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
        let created = observations("pod", &Event::Apply(pod("a", Some(CLONESET), false)));
        assert_eq!(
            created,
            [("cs-uid".into(), Operation::Create, "pod/ns/a".into())]
        );
        let deleting = observations("pod", &Event::Apply(pod("a", Some(CLONESET), true)));
        assert_eq!(deleting.len(), 2);
        assert_eq!(deleting[1].1, Operation::Delete);
        let gone = observations("pod", &Event::Delete(pod("a", Some(CLONESET), false)));
        assert_eq!(
            gone,
            [("cs-uid".into(), Operation::Delete, "pod/ns/a".into())]
        );
        assert!(observations("pod", &Event::Apply(pod("b", None, false))).is_empty());
        assert!(observations::<Pod>("pod", &Event::InitDone).is_empty());
    }

    #[test]
    fn the_index_keeps_only_cloneset_pods() {
        let index = OwnerIndex::<Pod>::default();
        index_event(&index, &Event::Apply(pod("a", Some(CLONESET), false)));
        index_event(&index, &Event::Apply(pod("b", None, false)));
        assert_eq!(index.len(), 1);
        // The owner reference was removed: the pod leaves the index.
        index_event(&index, &Event::Apply(pod("a", None, false)));
        assert!(index.is_empty());
        index_event(&index, &Event::Init);
        index_event(&index, &Event::InitApply(pod("c", None, false)));
        index_event(&index, &Event::InitApply(pod("d", Some(CLONESET), false)));
        index_event(&index, &Event::InitDone);
        assert_eq!(index.owned_by("cs-uid").len(), 1);
        assert_eq!(index.len(), 1);
    }
}
