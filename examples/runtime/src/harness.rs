//! One way to run a kube-runtime `Controller` in the controller set: every reconcile is timed into the
//! controller's metrics, a failed reconcile is logged with the object's key and retried after the delay its
//! error asks for ([`Retry`]: a 409 conflict means "decide again from the newer state", soon), the
//! controller stops when the context's shutdown fires, and the results are drained the same way everywhere.
//!
//! ```no_run
//! # async fn demo(context: kruise_runtime::controllers::ControllerContext) {
//! use std::sync::Arc;
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_runtime::actions::ActionError;
//! use kruise_runtime::harness;
//! use kube::runtime::Controller;
//! use kube::runtime::controller::Action;
//!
//! async fn reconcile(pod: Arc<Pod>, _shared: Arc<()>) -> Result<Action, ActionError> {
//!     Ok(Action::await_change())
//! }
//!
//! let pods = context.informers.get::<Pod>();
//! let Some(store) = harness::synced_store(&pods, &context).await else {
//!     return; // shut down before the first list
//! };
//! let controller = Controller::for_shared_stream(pods.applied(), store);
//! harness::drive(controller, &context, reconcile, Arc::new(())).await;
//! # }
//! ```

use std::error::Error;
use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::Resource;
use kube::runtime::Controller;
use kube::runtime::controller::{self, Action};
use kube::runtime::reflector::{Lookup, ObjectRef, Store};
use serde::de::DeserializeOwned;

use crate::actions::ActionError;
use crate::controllers::ControllerContext;
use crate::informer::Informer;
use crate::metrics::ControllerMetrics;
use crate::shutdown::Shutdown;

/// `namespace/name` of a namespaced object, `name` of a cluster-scoped one: how objects are named in
/// logs, metrics and expectations.
#[must_use]
pub fn object_key<K: Resource>(object: &K) -> String {
    let meta = object.meta();
    let name = meta.name.as_deref().unwrap_or_default();
    match meta.namespace.as_deref() {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name.to_owned(),
    }
}

/// [`object_key`] of the object a reference names.
#[must_use]
pub fn reference_key<K: Lookup>(reference: &ObjectRef<K>) -> String
where
    K::DynamicType: Eq + std::hash::Hash + Clone,
{
    match reference.namespace.as_deref() {
        Some(namespace) => format!("{namespace}/{}", reference.name),
        None => reference.name.clone(),
    }
}

/// The store of `informer` once its first list is in it (for `Controller::for_shared_stream`), or `None`
/// when the context's shutdown fires first. See [`Informer::synced_store`] for why a controller must not
/// get the store earlier.
pub async fn synced_store<K>(
    informer: &Informer<K>,
    context: &ControllerContext,
) -> Option<Store<K>>
where
    K: Resource<DynamicType = ()> + Clone + 'static,
{
    tokio::select! {
        store = informer.synced_store() => Some(store),
        () = context.shutdown.clone().wait() => None,
    }
}

/// How soon a failed reconcile is retried.
pub trait Retry {
    /// The delay before the next attempt.
    fn retry_after(&self) -> Duration;

    /// Whether the failure was a write on a stale read (409 Conflict): expected under concurrency, logged
    /// quietly, decided again from the newer state.
    fn is_conflict(&self) -> bool {
        false
    }
}

impl Retry for ActionError {
    fn retry_after(&self) -> Duration {
        self.requeue_after()
    }

    fn is_conflict(&self) -> bool {
        matches!(self, Self::Conflict { .. })
    }
}

/// Where a driven controller reports each finished reconcile: its duration and whether it succeeded.
pub trait ReconcileObserver: Send + Sync + 'static {
    /// Records one finished reconcile.
    fn observe_reconcile(&self, duration: Duration, success: bool);
}

impl ReconcileObserver for ControllerMetrics {
    fn observe_reconcile(&self, duration: Duration, success: bool) {
        ControllerMetrics::observe_reconcile(self, duration, success);
    }
}

/// How a controller is driven outside a [`ControllerContext`] (the node daemon's workers): its name in
/// logs, where reconciles are reported, and when it stops.
#[derive(Clone)]
pub struct Driver {
    name: String,
    observer: Arc<dyn ReconcileObserver>,
    shutdown: Shutdown,
}

impl Driver {
    /// A controller called `name` (in logs), reporting reconciles to `observer`, stopping on `shutdown`.
    pub fn new(
        name: impl Into<String>,
        observer: impl ReconcileObserver,
        shutdown: Shutdown,
    ) -> Self {
        Self {
            name: name.into(),
            observer: Arc::new(observer),
            shutdown,
        }
    }
}

impl From<&ControllerContext> for Driver {
    fn from(context: &ControllerContext) -> Self {
        Self::new(
            context.metrics.name(),
            context.metrics.clone(),
            context.shutdown.clone(),
        )
    }
}

/// Runs `controller` with `reconcile` until the context's shutdown; see the module documentation.
pub async fn drive<K, Ctx, R, Fut, E>(
    controller: Controller<K>,
    context: &ControllerContext,
    reconcile: R,
    shared: Arc<Ctx>,
) where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    Ctx: Send + Sync + 'static,
    R: FnMut(Arc<K>, Arc<Ctx>) -> Fut,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: Error + Retry + Send + Sync + 'static,
{
    drive_with(controller, Driver::from(context), reconcile, shared, |_| {}).await;
}

/// [`drive`] with a [`Driver`] (a `ControllerContext` converts into one), calling `done` with the
/// [`object_key`] of each object whose reconcile finished (successfully or not).
pub async fn drive_with<K, Ctx, R, Fut, E>(
    controller: Controller<K>,
    driver: Driver,
    mut reconcile: R,
    shared: Arc<Ctx>,
    mut done: impl FnMut(&str),
) where
    K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    Ctx: Send + Sync + 'static,
    R: FnMut(Arc<K>, Arc<Ctx>) -> Fut,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: Error + Retry + Send + Sync + 'static,
{
    let Driver {
        name,
        observer,
        shutdown,
    } = driver;
    let timed = move |object: Arc<K>, shared: Arc<Ctx>| {
        let observer = Arc::clone(&observer);
        let started = Instant::now();
        let reconcile = reconcile(object, shared);
        async move {
            let result = reconcile.await;
            observer.observe_reconcile(started.elapsed(), result.is_ok());
            result
        }
    };
    let retry = {
        let name = name.clone();
        move |object: Arc<K>, error: &E, _shared: Arc<Ctx>| {
            let object = object_key(object.as_ref());
            if error.is_conflict() {
                tracing::debug!(controller = %name, %object, %error, "stale read; deciding again");
            } else {
                tracing::warn!(controller = %name, %object, %error, "reconcile failed; retrying");
            }
            Action::requeue(error.retry_after())
        }
    };
    controller
        .graceful_shutdown_on(shutdown.wait())
        .run(timed, retry, shared)
        .for_each(|result| {
            match &result {
                Ok((object, _)) => done(&reference_key(object)),
                Err(
                    controller::Error::ReconcilerFailed(_, object)
                    | controller::Error::ObjectNotFound(object),
                ) => done(&reference_key(object)),
                Err(error) => tracing::warn!(controller = %name, %error, "controller"),
            }
            futures::future::ready(())
        })
        .await;
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Node, Pod};
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_name_namespaced_and_cluster_objects() {
        let pod: Pod =
            serde_json::from_value(json!({"metadata": {"name": "web-0", "namespace": "ns"}}))
                .unwrap();
        let node: Node = serde_json::from_value(json!({"metadata": {"name": "node-a"}})).unwrap();
        assert_eq!(object_key(&pod), "ns/web-0");
        assert_eq!(object_key(&node), "node-a");
    }

    #[test]
    fn conflicts_are_retried_sooner_than_other_failures() {
        let conflict = ActionError::Conflict {
            object: "ns/a".into(),
        };
        let failure = ActionError::NoResourceVersion {
            object: "ns/a".into(),
        };
        assert!(conflict.retry_after() < failure.retry_after());
    }
}
