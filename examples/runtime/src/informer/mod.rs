//! Shared informers: one watch and one stored copy per kind for a whole process.
//!
//! An [`Informer`] applies the events of one watch to a kube-runtime [`Store`] (objects kept once, as
//! `Arc`s, without `managedFields`), keeps secondary [indexes](Informer::index) up to date, and tells every
//! subscriber about every change ([`Informer::subscribe`]): created, changed and deleted objects, including
//! the objects that disappeared while the watch was down (found when it lists again). [`Informers`] hands
//! out one informer per kind, so ten controllers interested in pods share one pod watch.
//!
//! # Stored form
//!
//! An informer made with [`Informer::new`] keeps whole objects in a kube-runtime store. One made with
//! [`Informer::packed`] (what [`Informers`] does for pods, the many large objects of a cluster) keeps each
//! object as its JSON bytes and decodes it when asked for ([`Informer::get`], [`Indexed::get`], a late
//! [`Informer::subscribe`]):
//!
//! * an injected pod with six containers takes tens of KB as `k8s_openapi` structs (a `Container` is over
//!   2 KB before any of its data) and a few KB as JSON;
//! * each stored object remembers the copy it handed out last: while anyone holds it (a subscriber working
//!   on the change, a controller's cache such as the CloneSet controller's pod facts), lookups return that
//!   same `Arc` without decoding; a change is told with the object the watch delivered (nothing decoded);
//! * index keys are computed once per change from the object and kept with the index, so removing an object
//!   decodes nothing, and [`Informer::contains`] answers without decoding;
//! * a packed informer has no kube-runtime store ([`Informer::store`] stays empty): a kube-runtime
//!   controller of pods takes its store from [`Informer::applied_where`], which holds the pods it acts on.
//!
//! A controller built on `kube::runtime::Controller` plugs the change stream in with
//! `watches_shared_stream` / `owns_shared_stream`, or, for a controller of the kind itself,
//! `Controller::for_shared_stream(informer.applied(), informer.store())`.
//!
//! ```
//! use std::sync::Arc;
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_runtime::Informer;
//! use kube::runtime::watcher::Event;
//!
//! let pods = Informer::<Pod>::new("pods");
//! let by_node = pods.index("node", Arc::new(|pod: &Pod| {
//!     pod.spec.iter().filter_map(|spec| spec.node_name.clone()).collect()
//! }));
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web-0", "namespace": "default", "managedFields": [{"manager": "kubectl"}]},
//!     "spec": {"nodeName": "node-a", "containers": []}
//! })).unwrap();
//! pods.apply(Event::Init);
//! pods.apply(Event::InitApply(pod));
//! pods.apply(Event::InitDone);
//! let on_node = by_node.get("node-a");
//! assert_eq!(on_node.len(), 1);
//! assert!(on_node[0].metadata.managed_fields.is_none());
//! ```

mod change;
mod filtered;
mod health;
mod index;
mod packed;
mod registry;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::fmt::Debug;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures::channel::mpsc;
use futures::{Stream, StreamExt};
use kube::runtime::reflector::{ObjectRef, Store, store::Writer};
use kube::runtime::watcher::{self, Event};
use kube::runtime::{WatchStreamExt, watcher as watch_events};
use kube::{Api, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::watch;

pub use self::change::Change;
pub use self::health::{InformerHealth, WatchErrorReason};
use self::index::Index;
pub use self::index::{IndexKeys, controller_uid, object_namespace};
use self::packed::{PackedStore, reference_of};
pub use self::registry::Informers;

/// One kind's shared watch, store, indexes and subscribers. Cloning shares them.
pub struct Informer<K: Resource<DynamicType = ()> + Clone + 'static> {
    shared: Arc<Shared<K>>,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Clone for Informer<K> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

struct Shared<K: Resource<DynamicType = ()> + Clone + 'static> {
    name: Cow<'static, str>,
    /// The objects of a whole-object informer (stays empty when `packed` is used).
    reader: Store<K>,
    /// The objects of a packed informer ([`Informer::packed`]).
    packed: Option<PackedStore<K>>,
    /// Whether the first list has been stored. Not the store's own readiness: kube-runtime's store wakes
    /// only the last of several tasks waiting for it, so controllers wait here before they get the store.
    synced: watch::Sender<bool>,
    state: Mutex<State<K>>,
}

struct State<K: Resource<DynamicType = ()> + Clone + 'static> {
    writer: Writer<K>,
    indexes: BTreeMap<&'static str, Index<K>>,
    subscribers: Vec<mpsc::UnboundedSender<Change<K>>>,
    /// The objects listed so far while the watch (re)lists; `None` outside a list.
    listing: Option<Listing<K>>,
}

/// What a (re)list has delivered so far.
struct Listing<K: Resource<DynamicType = ()>> {
    references: HashSet<ObjectRef<K>>,
    /// The listed objects themselves, for a packed informer (a whole-object informer's kube-runtime writer
    /// buffers them).
    objects: Vec<Arc<K>>,
}

impl<K: Resource<DynamicType = ()>> Default for Listing<K> {
    fn default() -> Self {
        Self {
            references: HashSet::new(),
            objects: Vec::new(),
        }
    }
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> State<K> {
    fn tell(&mut self, change: &Change<K>) {
        self.subscribers
            .retain(|subscriber| subscriber.unbounded_send(change.clone()).is_ok());
    }
}

/// A typed handle on one index of an informer ([`Informer::index`]).
pub struct Indexed<K: Resource<DynamicType = ()> + Clone + 'static> {
    informer: Informer<K>,
    name: &'static str,
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Clone for Indexed<K> {
    fn clone(&self) -> Self {
        Self {
            informer: self.informer.clone(),
            name: self.name,
        }
    }
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Indexed<K> {
    /// The stored objects with index key `key` (in no particular order). A packed informer decodes
    /// them (outside its lock) unless copies handed out earlier are still held.
    #[must_use]
    pub fn get(&self, key: &str) -> Vec<Arc<K>> {
        let references: Vec<ObjectRef<K>> = {
            let state = self.informer.lock();
            state
                .indexes
                .get(self.name)
                .map(|index| index.references(key).cloned().collect())
                .unwrap_or_default()
        };
        references
            .iter()
            .filter_map(|reference| self.informer.get(reference))
            .collect()
    }

    /// The references and `resourceVersion`s (`""` without one) of the stored objects with index key
    /// `key` (in no particular order), without decoding them: for a cache that keeps what it read of each
    /// object version and reads again only the objects whose version changed.
    #[must_use]
    pub fn versions(&self, key: &str) -> Vec<(ObjectRef<K>, String)> {
        let references: Vec<ObjectRef<K>> = {
            let state = self.informer.lock();
            state
                .indexes
                .get(self.name)
                .map(|index| index.references(key).cloned().collect())
                .unwrap_or_default()
        };
        references
            .into_iter()
            .filter_map(|reference| {
                let version = self.informer.version(&reference)?;
                Some((reference, version))
            })
            .collect()
    }

    /// The informer this index belongs to (lookups by reference).
    #[must_use]
    pub fn informer(&self) -> &Informer<K> {
        &self.informer
    }

    /// Whether the informer has stored its first full list (the index is complete from then on).
    #[must_use]
    pub fn is_synced(&self) -> bool {
        self.informer.is_synced()
    }

    /// Waits until the informer has stored its first full list.
    pub async fn wait_synced(&self) {
        self.informer.wait_synced().await;
    }

    /// How many objects have index key `key`.
    #[must_use]
    pub fn count(&self, key: &str) -> usize {
        let state = self.informer.lock();
        state
            .indexes
            .get(self.name)
            .map_or(0, |index| index.references(key).count())
    }
}

impl<K: Resource<DynamicType = ()> + Clone + 'static> Informer<K> {
    /// An informer with an empty store keeping whole objects, fed by [`Informer::apply`] (or by
    /// [`Informer::watch`]). `name` names it in logs (the resource, e.g. `pods`).
    #[must_use]
    pub fn new(name: impl Into<Cow<'static, str>>) -> Self {
        Self::with_store(name.into(), None)
    }

    /// An informer keeping each object as its compact JSON and decoding it when asked for (see the
    /// [module docs](self)): for kinds with many large objects (pods). Its [`Informer::store`] stays empty.
    #[must_use]
    pub fn packed(name: impl Into<Cow<'static, str>>) -> Self
    where
        K: Serialize + DeserializeOwned,
    {
        Self::with_store(name.into(), Some(PackedStore::new()))
    }

    fn with_store(name: Cow<'static, str>, packed: Option<PackedStore<K>>) -> Self {
        let writer = Writer::default();
        let reader = writer.as_reader();
        Self {
            shared: Arc::new(Shared {
                name,
                reader,
                packed,
                synced: watch::Sender::new(false),
                state: Mutex::new(State {
                    writer,
                    indexes: BTreeMap::new(),
                    subscribers: Vec::new(),
                    listing: None,
                }),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<K>> {
        self.shared
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The store (lookups by name, listing) of a whole-object informer; a [packed](Informer::packed)
    /// informer's stays empty (use [`Informer::get`], indexes and subscriptions). Give a kube-runtime
    /// `Controller` the store from [`Informer::synced_store`] instead: its readiness wakes only one of
    /// several waiters.
    #[must_use]
    pub fn store(&self) -> Store<K> {
        self.shared.reader.clone()
    }

    /// The store once the first list is in it, for `Controller::for_shared_stream`: a controller handed a
    /// store that is already complete never waits on the store's own readiness signal, which wakes only
    /// the last of several tasks waiting for it (so two controllers, or a controller and any other
    /// waiter, sharing one store before its first list would leave one waiting for ever).
    pub async fn synced_store(&self) -> Store<K> {
        self.wait_synced().await;
        self.store()
    }

    /// Whether objects are kept packed ([`Informer::packed`]).
    #[must_use]
    pub fn is_packed(&self) -> bool {
        self.shared.packed.is_some()
    }

    /// The stored copy of one object (decoded, for a packed informer, unless a copy handed out earlier is
    /// still held).
    #[must_use]
    pub fn get(&self, reference: &ObjectRef<K>) -> Option<Arc<K>> {
        match &self.shared.packed {
            Some(packed) => packed.get(reference),
            None => self.shared.reader.get(reference),
        }
    }

    /// The `resourceVersion` of the object stored under `reference` (`""` without one; nothing is
    /// decoded).
    #[must_use]
    pub fn version(&self, reference: &ObjectRef<K>) -> Option<String> {
        match &self.shared.packed {
            Some(packed) => packed.version(reference),
            None => self
                .shared
                .reader
                .get(reference)
                .map(|object| object.meta().resource_version.clone().unwrap_or_default()),
        }
    }

    /// Whether an object is stored under `reference` (nothing is decoded).
    #[must_use]
    pub fn contains(&self, reference: &ObjectRef<K>) -> bool {
        match &self.shared.packed {
            Some(packed) => packed.contains(reference),
            None => self.shared.reader.get(reference).is_some(),
        }
    }

    /// How many objects are stored.
    #[must_use]
    pub fn len(&self) -> usize {
        match &self.shared.packed {
            Some(packed) => packed.len(),
            None => self.shared.reader.len(),
        }
    }

    /// Whether no object is stored.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The references of every stored object.
    fn references(&self) -> Vec<ObjectRef<K>> {
        match &self.shared.packed {
            Some(packed) => packed.references(),
            None => self
                .shared
                .reader
                .state()
                .iter()
                .map(|object| reference_of(object.as_ref()))
                .collect(),
        }
    }

    /// Whether the first list has been stored.
    #[must_use]
    pub fn is_synced(&self) -> bool {
        *self.shared.synced.borrow()
    }

    /// Waits until the first list has been stored (any number of tasks may wait).
    pub async fn wait_synced(&self) {
        let mut synced = self.shared.synced.subscribe();
        // The sender lives as long as this informer, so the wait cannot fail.
        let _ = synced.wait_for(|synced| *synced).await;
    }

    /// Adds (or finds, by `name`) an index; a new index is built from the objects stored now.
    pub fn index(&self, name: &'static str, keys: IndexKeys<K>) -> Indexed<K> {
        let mut state = self.lock();
        if !state.indexes.contains_key(name) {
            let mut index = Index::new(keys);
            // One object at a time: a packed informer decodes each and drops it again.
            for reference in self.references() {
                if let Some(object) = self.get(&reference) {
                    index.insert(&reference, &object);
                }
            }
            state.indexes.insert(name, index);
        }
        Indexed {
            informer: self.clone(),
            name,
        }
    }

    /// Every change from now on, after an [`Change::Applied`] for each object stored now (so a subscriber
    /// starting late still sees every object once). Nothing is dropped: the stream buffers what its
    /// reader has not taken yet.
    pub fn subscribe(&self) -> impl Stream<Item = Change<K>> + Send + 'static
    where
        K: Send + Sync,
    {
        let (sender, receiver) = mpsc::unbounded();
        let mut state = self.lock();
        // The receiver is alive here; a send cannot fail.
        for reference in self.references() {
            if let Some(object) = self.get(&reference) {
                let _ = sender.unbounded_send(Change::Applied(object));
            }
        }
        if self.is_synced() && state.listing.is_none() {
            let _ = sender.unbounded_send(Change::Listed);
        }
        state.subscribers.push(sender);
        receiver
    }

    /// The objects of [`Informer::subscribe`] (deleted ones included), for kube-runtime's
    /// `watches_shared_stream`, `owns_shared_stream` and `for_shared_stream`.
    pub fn objects(&self) -> impl Stream<Item = Arc<K>> + Send + 'static
    where
        K: Send + Sync,
    {
        self.subscribe()
            .filter_map(|change| std::future::ready(change.into_object()))
    }

    /// The objects created or changed (not the deleted ones), for a controller of this kind:
    /// `Controller::for_shared_stream(informer.applied(), informer.store())`.
    pub fn applied(&self) -> impl Stream<Item = Arc<K>> + Send + 'static
    where
        K: Send + Sync,
    {
        self.subscribe().filter_map(|change| {
            std::future::ready(match change {
                Change::Applied(object) => Some(object),
                Change::Deleted(_) | Change::Listed => None,
            })
        })
    }

    /// How many subscribers are still listening.
    #[must_use]
    pub fn subscribers(&self) -> usize {
        let mut state = self.lock();
        state
            .subscribers
            .retain(|subscriber| !subscriber.is_closed());
        state.subscribers.len()
    }

    /// Applies one watch event: stores it (without `managedFields`), updates the indexes and tells the
    /// subscribers. After a (re)list, every listed object is told as applied and every stored object the
    /// list no longer has as deleted.
    pub fn apply(&self, event: Event<K>) {
        let mut state = self.lock();
        let reader = &self.shared.reader;
        let packed = self.shared.packed.as_ref();
        match event {
            Event::Init => {
                if packed.is_none() {
                    state.writer.apply_watcher_event(&Event::Init);
                }
                state.listing = Some(Listing::default());
            }
            Event::InitApply(mut object) => {
                object.meta_mut().managed_fields = None;
                let listing = state.listing.get_or_insert_with(Listing::default);
                listing.references.insert(reference_of(&object));
                if packed.is_some() {
                    listing.objects.push(Arc::new(object));
                } else {
                    state.writer.apply_watcher_event(&Event::InitApply(object));
                }
            }
            Event::InitDone => {
                let listing = state.listing.take().unwrap_or_default();
                let gone: Vec<Arc<K>> = self
                    .references()
                    .into_iter()
                    .filter(|reference| !listing.references.contains(reference))
                    .filter_map(|reference| self.get(&reference))
                    .collect();
                let now = match packed {
                    Some(packed) => {
                        packed.replace(&listing.objects);
                        listing.objects
                    }
                    None => {
                        state.writer.apply_watcher_event(&Event::InitDone);
                        reader.state()
                    }
                };
                for index in state.indexes.values_mut() {
                    index.clear();
                    for object in &now {
                        index.insert(&reference_of(object.as_ref()), object);
                    }
                }
                for object in now {
                    state.tell(&Change::Applied(object));
                }
                for object in gone {
                    state.tell(&Change::Deleted(object));
                }
                self.shared.synced.send_replace(true);
                state.tell(&Change::Listed);
            }
            Event::Apply(mut object) => {
                object.meta_mut().managed_fields = None;
                let reference = reference_of(&object);
                let new = match packed {
                    Some(packed) => {
                        let new = Arc::new(object);
                        packed.insert(reference.clone(), &new);
                        new
                    }
                    None => {
                        state.writer.apply_watcher_event(&Event::Apply(object));
                        let Some(new) = reader.get(&reference) else {
                            return;
                        };
                        new
                    }
                };
                for index in state.indexes.values_mut() {
                    index.remove(&reference);
                    index.insert(&reference, &new);
                }
                state.tell(&Change::Applied(new));
            }
            Event::Delete(mut object) => {
                object.meta_mut().managed_fields = None;
                let reference = reference_of(&object);
                match packed {
                    Some(packed) => packed.remove(&reference),
                    None => state
                        .writer
                        .apply_watcher_event(&Event::Delete(object.clone())),
                }
                for index in state.indexes.values_mut() {
                    index.remove(&reference);
                }
                state.tell(&Change::Deleted(Arc::new(object)));
            }
        }
    }

    /// Runs the watch of `api` into this informer (retrying with backoff) until the future is dropped.
    pub async fn watch(self, api: Api<K>)
    where
        K: Debug + DeserializeOwned + Send + Sync,
    {
        self.watch_counted(api, InformerHealth::new()).await;
    }

    /// [`Informer::watch`], counting every full list stored and every watch error in `health` (a watch
    /// that cannot resume, `410 Gone`, makes the informer list again).
    pub async fn watch_counted(self, api: Api<K>, health: InformerHealth)
    where
        K: Debug + DeserializeOwned + Send + Sync,
    {
        let name = self.shared.name.clone();
        let events = watch_events(api, watcher::Config::default()).default_backoff();
        let mut events = std::pin::pin!(events);
        while let Some(event) = events.next().await {
            match event {
                Ok(event) => {
                    let listed = matches!(event, Event::InitDone);
                    self.apply(event);
                    if listed {
                        health.count_list(&name);
                    }
                }
                Err(error) => {
                    let reason = WatchErrorReason::of(&error);
                    health.count_error(&name, reason);
                    if reason == WatchErrorReason::Gone {
                        tracing::info!(informer = %name, %error, "watch expired; listing again");
                    } else {
                        tracing::warn!(informer = %name, %error, "watch failed; retrying");
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
