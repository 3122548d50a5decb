//! The watches of the CloneSet controller's owned objects (pods, claims, revisions): each event updates
//! an [`OwnerIndex`] (only objects a CloneSet controls are kept, without `managedFields`), satisfies the
//! create/delete expectations it shows, and triggers the owning CloneSet.

use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::{Stream, TryStreamExt};
use kruise_api::apps::v1beta1::CloneSet;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, watcher as watch};
use kube::{Api, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use super::context::Shared;
use crate::manager::expectations::Operation;
use crate::manager::owner_index::OwnerIndex;

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
    let seen = |object: &K, operation: Operation| {
        cloneset_owner(object).map(|(_, uid)| (uid.to_owned(), operation, object_key(kind, object)))
    };
    match event {
        Event::Apply(object) | Event::InitApply(object) => {
            let mut found: Vec<_> = seen(object, Operation::Create).into_iter().collect();
            if object.meta().deletion_timestamp.is_some() {
                found.extend(seen(object, Operation::Delete));
            }
            found
        }
        Event::Delete(object) => seen(object, Operation::Delete).into_iter().collect(),
        Event::Init | Event::InitDone => Vec::new(),
    }
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
    use k8s_openapi::api::core::v1::Pod;
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
