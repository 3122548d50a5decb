//! Shared informers: one watch and one stored copy per kind for a whole process.
//!
//! An [`Informer`] applies the events of one watch to a kube-runtime [`Store`] (objects kept once, as
//! `Arc`s, without `managedFields`), keeps secondary [indexes](Informer::index) up to date, and tells every
//! subscriber about every change ([`Informer::subscribe`]): created, changed and deleted objects, including
//! the objects that disappeared while the watch was down (found when it lists again). [`Informers`] hands
//! out one informer per kind, so ten controllers interested in pods share one pod watch.
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
mod health;
mod index;
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
use serde::de::DeserializeOwned;
use tokio::sync::watch;

pub use self::change::Change;
pub use self::health::{InformerHealth, WatchErrorReason};
use self::index::Index;
pub use self::index::{IndexKeys, controller_uid};
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
    reader: Store<K>,
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
    listing: Option<HashSet<ObjectRef<K>>>,
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
    /// The stored objects with index key `key` (in no particular order).
    #[must_use]
    pub fn get(&self, key: &str) -> Vec<Arc<K>> {
        let state = self.informer.lock();
        state
            .indexes
            .get(self.name)
            .map(|index| {
                index
                    .references(key)
                    .filter_map(|reference| self.informer.shared.reader.get(reference))
                    .collect()
            })
            .unwrap_or_default()
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
    /// An informer with an empty store, fed by [`Informer::apply`] (or by [`Informer::watch`]). `name`
    /// names it in logs (the resource, e.g. `pods`).
    #[must_use]
    pub fn new(name: impl Into<Cow<'static, str>>) -> Self {
        let writer = Writer::default();
        let reader = writer.as_reader();
        Self {
            shared: Arc::new(Shared {
                name: name.into(),
                reader,
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

    /// The store (lookups by name, listing). Give a kube-runtime `Controller` the store from
    /// [`Informer::synced_store`] instead: its readiness wakes only one of several waiters.
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

    /// The stored copy of one object.
    #[must_use]
    pub fn get(&self, reference: &ObjectRef<K>) -> Option<Arc<K>> {
        self.shared.reader.get(reference)
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
            index.rebuild(&self.shared.reader.state());
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
        for object in self.shared.reader.state() {
            let _ = sender.unbounded_send(Change::Applied(object));
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
        match event {
            Event::Init => {
                state.writer.apply_watcher_event(&Event::Init);
                state.listing = Some(HashSet::new());
            }
            Event::InitApply(mut object) => {
                object.meta_mut().managed_fields = None;
                state
                    .listing
                    .get_or_insert_with(HashSet::new)
                    .insert(ObjectRef::from_obj(&object));
                state.writer.apply_watcher_event(&Event::InitApply(object));
            }
            Event::InitDone => {
                let before = reader.state();
                state.writer.apply_watcher_event(&Event::InitDone);
                let listed = state.listing.take().unwrap_or_default();
                let now = reader.state();
                for index in state.indexes.values_mut() {
                    index.rebuild(&now);
                }
                for object in now {
                    state.tell(&Change::Applied(object));
                }
                for object in before {
                    if !listed.contains(&ObjectRef::from_obj(object.as_ref())) {
                        state.tell(&Change::Deleted(object));
                    }
                }
                self.shared.synced.send_replace(true);
                state.tell(&Change::Listed);
            }
            Event::Apply(mut object) => {
                object.meta_mut().managed_fields = None;
                let reference = ObjectRef::from_obj(&object);
                let old = reader.get(&reference);
                state.writer.apply_watcher_event(&Event::Apply(object));
                let Some(new) = reader.get(&reference) else {
                    return;
                };
                for index in state.indexes.values_mut() {
                    if let Some(old) = &old {
                        index.remove(old);
                    }
                    index.insert(&new);
                }
                state.tell(&Change::Applied(new));
            }
            Event::Delete(mut object) => {
                object.meta_mut().managed_fields = None;
                let reference = ObjectRef::from_obj(&object);
                let last = reader.get(&reference);
                state
                    .writer
                    .apply_watcher_event(&Event::Delete(object.clone()));
                for index in state.indexes.values_mut() {
                    if let Some(last) = &last {
                        index.remove(last);
                    }
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
