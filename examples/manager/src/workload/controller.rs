//! One set-up for the workload controllers: a kube-runtime `Controller` over the owner kind, triggered by
//!
//! * the owners' own watch (in one namespace or all), built here rather than by `Controller::new` so that
//!   each of its events counts the owner in the queue depth, and so that a delete makes the controller's
//!   state forget what it kept for the owner ([`WorkloadState::forget_deleted`]);
//! * the owned objects of the process's shared informers ([`WorkloadController::owns`]): each change
//!   satisfies the expectations it shows (see [`owned`]) and triggers its owner, counted as queued;
//! * changes that concern every owner ([`WorkloadController::triggers_every_owner`], such as the nodes of
//!   the Advanced DaemonSet controller), each counting every owner as queued;
//! * changes that name their owners ([`WorkloadController::triggers_named_owners`], such as the claims of
//!   the Advanced StatefulSet controller), each counting the known ones as queued;
//!
//! and driven by [`kruise_runtime::harness`]. The set-up keeps the controller's
//! [`QueueDepth`]: an owner counts from its trigger until its reconcile has finished. A controller's
//! `run` says only what is its own: its owner kind, its owned kinds, its extra triggers, its state and
//! its reconcile.
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use k8s_openapi::api::core::v1::Pod;
//! # use kruise_manager::controllers::ControllerContext;
//! # use kruise_manager::statefulset::{context::Shared, reconcile::reconcile, watch::OWNER};
//! # use kruise_manager::workload::controller::WorkloadController;
//! # async fn run(context: ControllerContext, shared: Arc<Shared>) {
//! WorkloadController::new(OWNER, &context, None, &shared.expectations)
//!     .owns::<Pod>("pod", &shared.synced.pods)
//!     .run(3, reconcile, shared)
//!     .await;
//! # }
//! ```

use std::error::Error;
use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use futures::{Stream, TryStreamExt};
use k8s_openapi::NamespaceResourceScope;
use kruise_runtime::Informers;
use kruise_runtime::harness::{self, Driver, Retry, object_key, reference_key};
use kube::runtime::controller::{Action, Config};
use kube::runtime::reflector::store::Writer;
use kube::runtime::reflector::{self, ObjectRef, Store, reflector};
use kube::runtime::{Controller, WatchStreamExt, watcher};
use kube::{Api, Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::owner::OwnerKind;
use super::watch::owned;
use crate::controllers::ControllerContext;
use crate::expectations::SharedExpectations;
use crate::queue_depth::QueueDepth;

/// The state a workload controller's reconciles share, as far as the set-up is concerned: what it keeps
/// for each owner, to be dropped when the owner is deleted.
pub trait WorkloadState: Send + Sync + 'static {
    /// The workload kind the controller reconciles (the owner of its pods).
    type Owner: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + Debug
        + DeserializeOwned
        + Send
        + Sync
        + 'static;

    /// The owner was deleted and will not be reconciled again: drop what is kept for it (its expectations
    /// at least).
    fn forget_deleted(&self, owner: &Self::Owner);
}

/// A trigger added to the controller once it is built (see [`WorkloadController::run`]).
type Trigger<O> = Box<dyn FnOnce(Controller<O>) -> Controller<O> + Send>;

/// A workload controller of the owner kind `O` being set up: the triggers added so far.
pub struct WorkloadController<O>
where
    O: Resource<DynamicType = ()> + Clone + Debug + 'static,
{
    owner: OwnerKind,
    namespace: Option<String>,
    client: Client,
    informers: Informers,
    driver: Driver,
    queue: Arc<QueueDepth>,
    expectations: Arc<SharedExpectations>,
    owners: Store<O>,
    writer: Writer<O>,
    triggers: Vec<Trigger<O>>,
}

impl<O> WorkloadController<O>
where
    O: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + Debug
        + DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    /// The controller of the `owner` kind's objects in `namespace` (all namespaces if `None`), reading the
    /// informers and reporting to the metrics of `context`; its owned objects' changes satisfy
    /// `expectations`.
    #[must_use]
    pub fn new(
        owner: OwnerKind,
        context: &ControllerContext,
        namespace: Option<String>,
        expectations: &Arc<SharedExpectations>,
    ) -> Self {
        let (owners, writer) = reflector::store();
        Self {
            owner,
            namespace,
            client: context.client.clone(),
            informers: context.informers.clone(),
            driver: Driver::from(context),
            queue: Arc::new(QueueDepth::new(context.metrics.clone())),
            expectations: Arc::clone(expectations),
            owners,
            writer,
            triggers: Vec::new(),
        }
    }

    /// Adds the objects of kind `K` the owners control as a trigger (from the shared informer, in the
    /// controller's namespace): each change satisfies the expectations it shows (objects keyed
    /// `<kind>/<namespace>/<name>`) and triggers its owner; `synced` is set once the informer's first list
    /// has been seen.
    #[must_use]
    pub fn owns<K>(mut self, kind: &'static str, synced: &Arc<AtomicBool>) -> Self
    where
        K: Resource<DynamicType = ()>
            + Clone
            + Debug
            + Serialize
            + DeserializeOwned
            + Send
            + Sync
            + 'static,
    {
        let objects = owned(
            self.owner,
            &self.informers.get::<K>(),
            kind,
            self.namespace.clone(),
            Arc::clone(synced),
            Arc::clone(&self.expectations),
        );
        let owner = queued_owner(self.owner, &self.queue);
        self.triggers.push(Box::new(move |controller| {
            controller.watches_shared_stream(objects, move |object: Arc<K>| owner(object.as_ref()))
        }));
        self
    }

    /// Adds `changes` as a trigger of every owner known (such as the nodes of the Advanced DaemonSet).
    #[must_use]
    pub fn triggers_every_owner<K>(
        mut self,
        changes: impl Stream<Item = Arc<K>> + Send + 'static,
    ) -> Self
    where
        K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + 'static,
    {
        let every = every_owner(&self.queue, self.owners.clone());
        self.triggers.push(Box::new(move |controller| {
            controller.watches_shared_stream(changes, every)
        }));
        self
    }

    /// Adds `changes` as a trigger of the owners `owners_of` names for each change (the owners the
    /// controller knows; other names are dropped), each counted as queued (such as the claims of the
    /// Advanced StatefulSet, which no owner reference ties to it).
    #[must_use]
    pub fn triggers_named_owners<K>(
        mut self,
        changes: impl Stream<Item = Arc<K>> + Send + 'static,
        owners_of: impl Fn(&K) -> Vec<ObjectRef<O>> + Send + Sync + 'static,
    ) -> Self
    where
        K: Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Send + Sync + 'static,
    {
        let named = named_owners(&self.queue, self.owners.clone(), owners_of);
        self.triggers.push(Box::new(move |controller| {
            controller.watches_shared_stream(changes, named)
        }));
        self
    }

    /// Runs `reconcile` on the state `shared`, `workers` owners at the same time, until the context's
    /// shutdown.
    pub async fn run<S, R, Fut, E>(self, workers: u16, reconcile: R, shared: Arc<S>)
    where
        S: WorkloadState<Owner = O>,
        R: FnMut(Arc<O>, Arc<S>) -> Fut,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: Error + Retry + Send + Sync + 'static,
    {
        let api = match self.namespace.as_deref() {
            Some(namespace) => Api::namespaced(self.client, namespace),
            None => Api::all(self.client),
        };
        let forgetting = Arc::clone(&shared);
        let queued = Arc::clone(&self.queue);
        let owners = reflector(self.writer, watcher(api, watcher::Config::default()))
            .inspect_ok(move |event| forget_deleted(forgetting.as_ref(), event))
            .applied_objects()
            .inspect_ok(move |object| queued.triggered(&object_key(object)));
        let controller = self.triggers.into_iter().fold(
            Controller::for_stream(owners, self.owners)
                .with_config(Config::default().concurrency(workers)),
            |controller, trigger| trigger(controller),
        );
        let finished = Arc::clone(&self.queue);
        harness::drive_with(
            controller,
            self.driver,
            counting_starts(&self.queue, reconcile),
            shared,
            |key| finished.finished(key),
        )
        .await;
        self.queue.clear();
    }
}

/// `reconcile`, counting the owner as started in `queue` when its reconcile begins (every trigger so far
/// is served by it).
fn counting_starts<O, S, R, Fut>(
    queue: &Arc<QueueDepth>,
    mut reconcile: R,
) -> impl FnMut(Arc<O>, Arc<S>) -> Fut
where
    O: Resource,
    R: FnMut(Arc<O>, Arc<S>) -> Fut,
{
    let queue = Arc::clone(queue);
    move |owner, shared| {
        queue.started(&object_key(owner.as_ref()));
        reconcile(owner, shared)
    }
}

/// The trigger mapper of an owned kind: the owner of the `owner` kind controlling the object, counted as
/// queued.
fn queued_owner<O, K>(
    owner: OwnerKind,
    queue: &Arc<QueueDepth>,
) -> impl Fn(&K) -> Option<ObjectRef<O>> + Send + Sync + 'static
where
    O: Resource<DynamicType = ()>,
    K: Resource,
{
    let queue = Arc::clone(queue);
    move |object| {
        let reference = owner.reference_to(object)?;
        queue.triggered(&reference_key(&reference));
        Some(reference)
    }
}

/// The trigger mapper of a change that concerns every owner: every owner in `owners`, counted as queued.
fn every_owner<O, K>(
    queue: &Arc<QueueDepth>,
    owners: Store<O>,
) -> impl Fn(Arc<K>) -> Vec<ObjectRef<O>> + Send + Sync + 'static
where
    O: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    let queue = Arc::clone(queue);
    move |_change| {
        owners
            .state()
            .iter()
            .map(|owner| {
                let reference = ObjectRef::from_obj(owner.as_ref());
                queue.triggered(&reference_key(&reference));
                reference
            })
            .collect()
    }
}

/// The trigger mapper of a change that names its owners: those of `owners_of` the controller knows, counted
/// as queued.
fn named_owners<O, K>(
    queue: &Arc<QueueDepth>,
    owners: Store<O>,
    owners_of: impl Fn(&K) -> Vec<ObjectRef<O>> + Send + Sync + 'static,
) -> impl Fn(Arc<K>) -> Vec<ObjectRef<O>> + Send + Sync + 'static
where
    O: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    let queue = Arc::clone(queue);
    move |change| {
        let mut named = owners_of(change.as_ref());
        named.retain(|reference| owners.get(reference).is_some());
        for reference in &named {
            queue.triggered(&reference_key(reference));
        }
        named
    }
}

/// A deleted owner is not reconciled again: the state forgets it when the watch says so.
fn forget_deleted<S: WorkloadState>(state: &S, event: &watcher::Event<S::Owner>) {
    if let watcher::Event::Delete(owner) = event {
        state.forget_deleted(owner);
    }
}

#[cfg(test)]
mod tests;
