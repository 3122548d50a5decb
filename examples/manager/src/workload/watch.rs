//! The owned objects of a shared informer as a workload controller's trigger: each change satisfies the
//! create/delete expectations it shows in the controller's [`ExpectationSink`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::{Stream, StreamExt};
use kruise_runtime::{Change, Informer};
use kube::Resource;

use super::owner::{OwnerKind, expectation_key};
use crate::expectations::{Operation, SharedExpectations};

/// Where a controller records what its watches saw: the create/delete expectations an object satisfies,
/// and the objects gone from the cluster.
pub trait ExpectationSink: Send + Sync + 'static {
    /// Marks the `(owner uid, operation, object key)` expectations as satisfied.
    fn observe_all(&self, seen: &[(String, Operation, String)]);

    /// Forgets the resource version expected for the object keyed `object` (it is gone).
    fn forget_version(&self, object: &str);
}

impl ExpectationSink for SharedExpectations {
    fn observe_all(&self, seen: &[(String, Operation, String)]) {
        SharedExpectations::observe_all(self, seen);
    }

    fn forget_version(&self, object: &str) {
        SharedExpectations::forget_version(self, object);
    }
}

/// The objects of a shared informer (in `namespace` only, if given) controlled by `owner` kind as the
/// controller's trigger: each change satisfies the create/delete expectations it shows in `sink` (the
/// object named `<kind>/<namespace>/<name>`), and `synced` is set once every stored object has been seen.
pub fn owned<K, S>(
    owner: OwnerKind,
    informer: &Informer<K>,
    kind: &'static str,
    namespace: Option<String>,
    synced: Arc<AtomicBool>,
    sink: Arc<S>,
) -> impl Stream<Item = Arc<K>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
    S: ExpectationSink,
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
                sink.observe_all(&owner.observed(kind, object.as_ref(), false));
                Some(object)
            }
            Change::Deleted(object) => {
                sink.forget_version(&expectation_key(kind, object.as_ref()));
                sink.observe_all(&owner.observed(kind, object.as_ref(), true));
                Some(object)
            }
        };
        futures::future::ready(object)
    })
}
