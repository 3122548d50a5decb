//! Secondary indexes of an informer's store: index keys (an owner UID, a node name, ...) to the objects
//! that have them, kept up to date with every change so a reconcile never scans the whole store.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use kube::Resource;
use kube::runtime::reflector::ObjectRef;

/// The index keys of one object (empty: the object is not indexed).
pub type IndexKeys<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// The UID of the object's controller owner (the first owner reference with `controller: true`): the
/// index key of "the objects a controller owns".
#[must_use]
pub fn controller_uid<K: Resource>(object: &K) -> Vec<String> {
    object
        .meta()
        .owner_references
        .iter()
        .flatten()
        .find(|owner| owner.controller == Some(true))
        .map(|owner| owner.uid.clone())
        .into_iter()
        .collect()
}

/// One index: key → the objects with that key.
pub(super) struct Index<K: Resource<DynamicType = ()>> {
    keys: IndexKeys<K>,
    entries: HashMap<String, HashSet<ObjectRef<K>>>,
}

impl<K: Resource<DynamicType = ()>> Index<K> {
    pub(super) fn new(keys: IndexKeys<K>) -> Self {
        Self {
            keys,
            entries: HashMap::new(),
        }
    }

    pub(super) fn insert(&mut self, object: &K) {
        let reference = ObjectRef::from_obj(object);
        for key in (self.keys)(object) {
            self.entries
                .entry(key)
                .or_default()
                .insert(reference.clone());
        }
    }

    pub(super) fn remove(&mut self, object: &K) {
        let reference = ObjectRef::from_obj(object);
        for key in (self.keys)(object) {
            if let Some(references) = self.entries.get_mut(&key) {
                references.remove(&reference);
                if references.is_empty() {
                    self.entries.remove(&key);
                }
            }
        }
    }

    pub(super) fn rebuild<'a>(&mut self, objects: impl IntoIterator<Item = &'a Arc<K>>)
    where
        K: 'a,
    {
        self.entries.clear();
        for object in objects {
            self.insert(object);
        }
    }

    pub(super) fn references(&self, key: &str) -> impl Iterator<Item = &ObjectRef<K>> {
        self.entries.get(key).into_iter().flatten()
    }
}
