//! The packed store of an informer: each object kept as its compact JSON bytes and decoded when asked for.
//!
//! A pod as `k8s_openapi` structs is large before any of its data (`Container` alone is over 2 KB of
//! mostly empty `Option`s, `Volume` over 3 KB), so an injected pod with a few containers takes tens of KB;
//! its JSON takes a few KB. The packed store keeps the JSON and hands out decoded objects:
//!
//! * Each entry remembers the object it handed out last (a `Weak`): while anyone still holds that `Arc`
//!   (a controller's cache, a subscriber working on the change), a lookup returns the same `Arc` without
//!   decoding; once every holder dropped it, the next lookup decodes the bytes again.
//! * An object that cannot be encoded (never seen with Kubernetes objects) is kept whole, so nothing stored
//!   is ever lost.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard, Weak};

use kube::Resource;
use kube::runtime::reflector::ObjectRef;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// How many stores between two sweeps of the handed-out objects nobody holds any more (a dead `Weak` still
/// pins the object's own allocation).
const SWEEP_EVERY: usize = 512;

/// Objects as compact JSON bytes, by reference.
pub(super) struct PackedStore<K: Resource<DynamicType = ()>> {
    entries: RwLock<HashMap<ObjectRef<K>, Entry<K>>>,
    pack: fn(&K) -> serde_json::Result<Vec<u8>>,
    unpack: fn(&[u8]) -> serde_json::Result<K>,
    /// Stores since the last sweep.
    stores: Mutex<usize>,
}

/// One stored object.
enum Entry<K> {
    Packed {
        bytes: Box<[u8]>,
        /// The object's `resourceVersion` (`""` without one), answered without decoding.
        version: Box<str>,
        /// The object handed out last (dead once nobody holds it).
        decoded: Mutex<Weak<K>>,
    },
    /// The object could not be encoded: kept as it is.
    Whole(Arc<K>),
}

fn pack_json<K: Serialize>(object: &K) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(object)
}

fn unpack_json<K: DeserializeOwned>(bytes: &[u8]) -> serde_json::Result<K> {
    serde_json::from_slice(bytes)
}

/// The key an object is stored under: namespace and name only (`ObjectRef::from_obj` also carries the
/// UID and resource version, which lookups ignore and the store need not keep).
pub(super) fn reference_of<K: Resource<DynamicType = ()>>(object: &K) -> ObjectRef<K> {
    let meta = object.meta();
    let reference = ObjectRef::new(meta.name.as_deref().unwrap_or_default());
    match meta.namespace.as_deref() {
        Some(namespace) => reference.within(namespace),
        None => reference,
    }
}

impl<K: Resource<DynamicType = ()>> PackedStore<K> {
    /// An empty store encoding with `serde_json`.
    pub(super) fn new() -> Self
    where
        K: Serialize + DeserializeOwned,
    {
        Self {
            entries: RwLock::new(HashMap::new()),
            pack: pack_json::<K>,
            unpack: unpack_json::<K>,
            stores: Mutex::new(0),
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, HashMap<ObjectRef<K>, Entry<K>>> {
        self.entries.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, HashMap<ObjectRef<K>, Entry<K>>> {
        self.entries.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn entry_of(&self, object: &Arc<K>) -> Entry<K> {
        match (self.pack)(object) {
            Ok(bytes) => Entry::Packed {
                bytes: bytes.into_boxed_slice(),
                version: object
                    .meta()
                    .resource_version
                    .as_deref()
                    .unwrap_or_default()
                    .into(),
                decoded: Mutex::new(Arc::downgrade(object)),
            },
            Err(error) => {
                tracing::warn!(object = %reference_of(object.as_ref()), %error, "cannot pack; kept whole");
                Entry::Whole(Arc::clone(object))
            }
        }
    }

    fn decode(&self, reference: &ObjectRef<K>, entry: &Entry<K>) -> Option<Arc<K>> {
        let (bytes, decoded) = match entry {
            Entry::Whole(object) => return Some(Arc::clone(object)),
            Entry::Packed { bytes, decoded, .. } => (bytes, decoded),
        };
        let mut decoded = decoded.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(object) = decoded.upgrade() {
            return Some(object);
        }
        match (self.unpack)(bytes) {
            Ok(object) => {
                let object = Arc::new(object);
                *decoded = Arc::downgrade(&object);
                Some(object)
            }
            Err(error) => {
                tracing::warn!(object = %reference, %error, "cannot unpack a stored object");
                None
            }
        }
    }

    /// The stored object `reference` names, decoded unless a copy handed out earlier is still held.
    pub(super) fn get(&self, reference: &ObjectRef<K>) -> Option<Arc<K>> {
        let entries = self.read();
        let entry = entries.get(reference)?;
        self.decode(reference, entry)
    }

    /// The `resourceVersion` of the object `reference` names (`""` without one; nothing decoded).
    pub(super) fn version(&self, reference: &ObjectRef<K>) -> Option<String> {
        let entries = self.read();
        Some(match entries.get(reference)? {
            Entry::Packed { version, .. } => version.to_string(),
            Entry::Whole(object) => object.meta().resource_version.clone().unwrap_or_default(),
        })
    }

    /// Whether an object is stored under `reference` (nothing decoded).
    pub(super) fn contains(&self, reference: &ObjectRef<K>) -> bool {
        self.read().contains_key(reference)
    }

    /// How many objects are stored.
    pub(super) fn len(&self) -> usize {
        self.read().len()
    }

    /// The references of every stored object.
    pub(super) fn references(&self) -> Vec<ObjectRef<K>> {
        self.read().keys().cloned().collect()
    }

    /// Stores `object` (replacing what `reference` named), remembering it as handed out.
    pub(super) fn insert(&self, reference: ObjectRef<K>, object: &Arc<K>) {
        let entry = self.entry_of(object);
        let mut entries = self.write();
        entries.insert(reference, entry);
        self.count_store(&mut entries);
    }

    /// Forgets the object `reference` names.
    pub(super) fn remove(&self, reference: &ObjectRef<K>) {
        self.write().remove(reference);
    }

    /// Replaces everything stored with `objects` (after a full list).
    pub(super) fn replace(&self, objects: &[Arc<K>]) {
        let fresh: HashMap<_, _> = objects
            .iter()
            .map(|object| (reference_of(object.as_ref()), self.entry_of(object)))
            .collect();
        *self.write() = fresh;
    }

    /// Every 512 stores, forgets the handed-out objects nobody holds any more.
    fn count_store(&self, entries: &mut HashMap<ObjectRef<K>, Entry<K>>) {
        let mut stores = self.stores.lock().unwrap_or_else(PoisonError::into_inner);
        *stores += 1;
        if *stores < SWEEP_EVERY {
            return;
        }
        *stores = 0;
        for entry in entries.values_mut() {
            if let Entry::Packed { decoded, .. } = entry {
                let decoded = decoded.get_mut().unwrap_or_else(PoisonError::into_inner);
                if decoded.strong_count() == 0 {
                    *decoded = Weak::new();
                }
            }
        }
    }

    /// The stored bytes of every packed object, summed (for tests and measurements).
    #[cfg(test)]
    pub(super) fn packed_bytes(&self) -> usize {
        self.read()
            .values()
            .map(|entry| match entry {
                Entry::Packed { bytes, .. } => bytes.len(),
                Entry::Whole(_) => 0,
            })
            .sum()
    }
}
