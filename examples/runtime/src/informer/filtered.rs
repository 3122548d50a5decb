//! A kube-runtime store of the objects of an informer that pass a filter: for a `Controller` of a kind whose
//! informer keeps no store of its own ([packed](super::Informer::packed) pods), and which acts on few of
//! its objects (the Job sidecar terminator, on finished Job pods with sidecars).

use std::sync::Arc;

use futures::{Stream, StreamExt};
use kube::Resource;
use kube::runtime::reflector::{Store, store::Writer};
use kube::runtime::watcher::Event;

use super::{Change, Informer, packed::reference_of};

impl<K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static> Informer<K> {
    /// The created or changed objects that pass `keep`, and a store holding exactly those (an object that
    /// no longer passes, or is deleted, leaves it), for
    /// `Controller::for_shared_stream(stream, store)`. The store is filled as the stream is read (each
    /// object is in it before the stream yields it) and is ready from the start, so a controller never
    /// waits on it. Objects that pass are copied into the store; the others cost nothing.
    pub fn applied_where(
        &self,
        keep: impl Fn(&K) -> bool + Send + 'static,
    ) -> (Store<K>, impl Stream<Item = Arc<K>> + Send + 'static) {
        let mut writer = Writer::default();
        writer.apply_watcher_event(&Event::Init);
        writer.apply_watcher_event(&Event::InitDone);
        let store = writer.as_reader();
        let reader = store.clone();
        let stream = self.subscribe().filter_map(move |change| {
            let kept = match change {
                Change::Applied(object) if keep(&object) => {
                    writer.apply_watcher_event(&Event::Apply(object.as_ref().clone()));
                    Some(object)
                }
                Change::Applied(object) | Change::Deleted(object) => {
                    if reader.get(&reference_of(object.as_ref())).is_some() {
                        writer.apply_watcher_event(&Event::Delete(object.as_ref().clone()));
                    }
                    None
                }
                Change::Listed => None,
            };
            std::future::ready(kept)
        });
        (store, stream)
    }
}
