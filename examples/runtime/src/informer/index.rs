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

/// The object's namespace (none for a cluster-scoped object): the index key of "the objects of a
/// namespace".
#[must_use]
pub fn object_namespace<K: Resource>(object: &K) -> Vec<String> {
    object.meta().namespace.clone().into_iter().collect()
}

/// One index: key → the objects with that key, and each indexed object's keys (so removing an object
/// needs only its reference, not the object: a packed store need not decode it).
pub(super) struct Index<K: Resource<DynamicType = ()>> {
    keys: IndexKeys<K>,
    entries: HashMap<String, HashSet<ObjectRef<K>>>,
    keys_of: HashMap<ObjectRef<K>, Vec<String>>,
}

impl<K: Resource<DynamicType = ()>> Index<K> {
    pub(super) fn new(keys: IndexKeys<K>) -> Self {
        Self {
            keys,
            entries: HashMap::new(),
            keys_of: HashMap::new(),
        }
    }

    /// Indexes `object`, stored under `reference` (not indexed before: see [`Index::remove`]).
    pub(super) fn insert(&mut self, reference: &ObjectRef<K>, object: &K) {
        let keys = (self.keys)(object);
        if keys.is_empty() {
            return;
        }
        for key in &keys {
            self.entries
                .entry(key.clone())
                .or_default()
                .insert(reference.clone());
        }
        self.keys_of.insert(reference.clone(), keys);
    }

    /// Forgets the object stored under `reference`.
    pub(super) fn remove(&mut self, reference: &ObjectRef<K>) {
        let Some(keys) = self.keys_of.remove(reference) else {
            return;
        };
        for key in keys {
            if let Some(references) = self.entries.get_mut(&key) {
                references.remove(reference);
                if references.is_empty() {
                    self.entries.remove(&key);
                }
            }
        }
    }

    /// Forgets every object.
    pub(super) fn clear(&mut self) {
        self.entries.clear();
        self.keys_of.clear();
    }

    pub(super) fn references(&self, key: &str) -> impl Iterator<Item = &ObjectRef<K>> {
        self.entries.get(key).into_iter().flatten()
    }
}
