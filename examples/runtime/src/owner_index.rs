//! A cache of objects indexed by the UID of their controller owner, fed by watcher events, so a reconcile
//! reads "the pods of this CloneSet" without scanning every pod (kube-runtime's `Store` has no indexes).
//! A relist (`Init` .. `InitDone`) is buffered and swapped in at once, as the reflector does.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kube::runtime::watcher::Event;
//! use kruise_runtime::owner_index::OwnerIndex;
//!
//! let pod: Pod = serde_json::from_value(serde_json::json!({"metadata": {
//!     "name": "demo-abcde", "namespace": "default",
//!     "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "demo",
//!         "uid": "cs-uid", "controller": true}]}})).unwrap();
//! let index = OwnerIndex::<Pod>::default();
//! index.apply(&Event::Apply(pod));
//! assert_eq!(index.owned_by("cs-uid").len(), 1);
//! assert!(index.owned_by("other").is_empty());
//! ```
//!
//! Feed it from the same stream a controller watches:
//! `watcher(pods, config).inspect(|event| if let Ok(event) = event { index.apply(event) })`.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, PoisonError, RwLock};

use kube::Resource;
use kube::ResourceExt;
use kube::runtime::watcher::Event;

type Key = (String, String);

struct Entry<K> {
    object: Arc<K>,
    owner: Option<String>,
}

struct Inner<K> {
    objects: HashMap<Key, Entry<K>>,
    by_owner: HashMap<String, BTreeSet<Key>>,
    relist: Option<Vec<K>>,
}

impl<K> Default for Inner<K> {
    fn default() -> Self {
        Self {
            objects: HashMap::new(),
            by_owner: HashMap::new(),
            relist: None,
        }
    }
}

/// Objects by controller-owner UID; cheap to clone (shared).
pub struct OwnerIndex<K> {
    inner: Arc<RwLock<Inner<K>>>,
}

impl<K> Clone for OwnerIndex<K> {
    fn clone(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<K> Default for OwnerIndex<K> {
    fn default() -> Self {
        Self {
            inner: Arc::new(RwLock::new(Inner::default())),
        }
    }
}

/// The UID of the object's controller owner (the first owner reference with `controller: true`).
#[must_use]
pub fn controller_uid<K: Resource>(object: &K) -> Option<String> {
    object
        .owner_references()
        .iter()
        .find(|owner| owner.controller == Some(true))
        .map(|owner| owner.uid.clone())
}

impl<K: Resource + Clone> OwnerIndex<K> {
    /// Applies one watcher event.
    pub fn apply(&self, event: &Event<K>) {
        let mut inner = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        match event {
            Event::Apply(object) => insert(&mut inner, object.clone()),
            Event::Delete(object) => remove(&mut inner, &key(object)),
            Event::Init => inner.relist = Some(Vec::new()),
            Event::InitApply(object) => match &mut inner.relist {
                Some(buffer) => buffer.push(object.clone()),
                None => insert(&mut inner, object.clone()),
            },
            Event::InitDone => {
                let fresh = inner.relist.take().unwrap_or_default();
                inner.objects.clear();
                inner.by_owner.clear();
                for object in fresh {
                    insert(&mut inner, object);
                }
            }
        }
    }

    /// Removes the object (by namespace and name) if it is cached; for objects a consumer stops caring
    /// about (say, a pod whose controller owner changed to another kind).
    pub fn remove(&self, object: &K) {
        let mut inner = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        remove(&mut inner, &key(object));
    }

    /// The objects whose controller owner has `owner_uid`, ordered by namespace and name.
    #[must_use]
    pub fn owned_by(&self, owner_uid: &str) -> Vec<Arc<K>> {
        let inner = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        inner
            .by_owner
            .get(owner_uid)
            .into_iter()
            .flatten()
            .filter_map(|key| {
                inner
                    .objects
                    .get(key)
                    .map(|entry| Arc::clone(&entry.object))
            })
            .collect()
    }

    /// How many objects are cached.
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .objects
            .len()
    }

    /// Whether nothing is cached.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn key<K: Resource>(object: &K) -> Key {
    (object.namespace().unwrap_or_default(), object.name_any())
}

fn insert<K: Resource>(inner: &mut Inner<K>, object: K) {
    let key = key(&object);
    remove(inner, &key);
    let owner = controller_uid(&object);
    if let Some(owner) = &owner {
        inner
            .by_owner
            .entry(owner.clone())
            .or_default()
            .insert(key.clone());
    }
    inner.objects.insert(
        key,
        Entry {
            object: Arc::new(object),
            owner,
        },
    );
}

fn remove<K>(inner: &mut Inner<K>, key: &Key) {
    let Some(entry) = inner.objects.remove(key) else {
        return;
    };
    if let Some(owner) = entry.owner
        && let Some(keys) = inner.by_owner.get_mut(&owner)
    {
        keys.remove(key);
        if keys.is_empty() {
            inner.by_owner.remove(&owner);
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    use super::*;

    fn pod(name: &str, owner: Option<&str>) -> Pod {
        let owners: Vec<_> = owner
            .into_iter()
            .map(|uid| json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "cs", "uid": uid, "controller": true}))
            .collect();
        serde_json::from_value(
            json!({"metadata": {"name": name, "namespace": "ns", "ownerReferences": owners}}),
        )
        .unwrap()
    }

    fn names(pods: &[Arc<Pod>]) -> Vec<String> {
        pods.iter().map(|pod| pod.name_any()).collect()
    }

    #[test]
    fn updates_move_objects_between_owners_and_deletes_remove_them() {
        let index = OwnerIndex::<Pod>::default();
        index.apply(&Event::Apply(pod("b", Some("one"))));
        index.apply(&Event::Apply(pod("a", Some("one"))));
        index.apply(&Event::Apply(pod("c", None)));
        assert_eq!(names(&index.owned_by("one")), ["a", "b"]);
        index.apply(&Event::Apply(pod("b", Some("two"))));
        assert_eq!(names(&index.owned_by("one")), ["a"]);
        assert_eq!(names(&index.owned_by("two")), ["b"]);
        index.apply(&Event::Delete(pod("a", Some("one"))));
        assert!(index.owned_by("one").is_empty());
        assert_eq!(index.len(), 2);
        index.remove(&pod("b", None));
        assert!(
            index.owned_by("two").is_empty(),
            "removed by name, whatever the owner"
        );
        assert_eq!(index.len(), 1);
    }

    #[test]
    fn a_relist_replaces_everything_at_once() {
        let index = OwnerIndex::<Pod>::default();
        index.apply(&Event::Apply(pod("old", Some("one"))));
        index.apply(&Event::Init);
        index.apply(&Event::InitApply(pod("new", Some("one"))));
        assert_eq!(
            names(&index.owned_by("one")),
            ["old"],
            "the old state serves until InitDone"
        );
        index.apply(&Event::InitDone);
        assert_eq!(names(&index.owned_by("one")), ["new"]);
        assert!(!index.is_empty());
    }
}
