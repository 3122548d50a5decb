//! What every reconcile of the Advanced DaemonSet controller shares: the client, the owned-object indexes
//! and the node store (all from the process's shared informers), the expectations that keep a reconcile
//! from acting twice on a cache that has not caught up with its own writes, the event sink, the planner
//! options, the metrics and the queue depth.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_runtime::{Indexed, Informer, Informers};
use kruise_schedule::daemonset::Options;
use kube::Client;
use kube::runtime::reflector::Store;

use super::events::EventSink;
use super::watch::daemonset_uid_keys;
use crate::expectations::{Expectations, Operation};
use crate::metrics::ControllerMetrics;
use crate::queue_depth::QueueDepth;

/// The name of the informers' index by controlling Advanced DaemonSet UID (pods, revisions).
pub const OWNER_INDEX: &str = "daemonset-uid";

/// How long an unobserved create or delete blocks its DaemonSet (Kubernetes uses 5 minutes).
pub const EXPECTATION_TIMEOUT: Duration = Duration::from_secs(300);

/// Whether each watch the controller reads has delivered its first full list.
#[derive(Clone, Debug, Default)]
pub struct Synced {
    /// Pods.
    pub pods: Arc<AtomicBool>,
    /// Revisions.
    pub revisions: Arc<AtomicBool>,
    /// Nodes.
    pub nodes: Arc<AtomicBool>,
}

impl Synced {
    /// All three caches are complete (before that, a reconcile would miss pods or nodes).
    #[must_use]
    pub fn all(&self) -> bool {
        [&self.pods, &self.revisions, &self.nodes]
            .iter()
            .all(|flag| flag.load(Ordering::SeqCst))
    }
}

/// The shared state of the controller.
pub struct Shared {
    /// A client for the cluster.
    pub client: Client,
    /// Pods by the UID of the Advanced DaemonSet controlling them (an index of the shared pod informer).
    pub pods: Indexed<Pod>,
    /// ControllerRevisions by controller-owner UID.
    pub revisions: Indexed<ControllerRevision>,
    /// Every node (the shared node informer's store).
    pub nodes: Store<Node>,
    /// Which caches are complete.
    pub synced: Synced,
    /// Where Events go.
    pub events: EventSink,
    /// Planner gates.
    pub options: Options,
    /// The DaemonSets waiting for or in a reconcile (reported as the queue depth).
    pub queue: QueueDepth,
    expectations: Mutex<Expectations>,
    started: Instant,
}

impl Shared {
    /// Fresh state reading pods, revisions and nodes from `informers` (the process's shared informers).
    #[must_use]
    pub fn new(
        client: Client,
        informers: &Informers,
        events: EventSink,
        options: Options,
        metrics: ControllerMetrics,
    ) -> Self {
        Self {
            client,
            pods: informers
                .get::<Pod>()
                .index(OWNER_INDEX, Arc::new(daemonset_uid_keys::<Pod>)),
            revisions: informers.get::<ControllerRevision>().index(
                OWNER_INDEX,
                Arc::new(daemonset_uid_keys::<ControllerRevision>),
            ),
            nodes: informers.get::<Node>().store(),
            synced: Synced::default(),
            events,
            options,
            queue: QueueDepth::new(metrics),
            expectations: Mutex::new(Expectations::new(EXPECTATION_TIMEOUT)),
            started: Instant::now(),
        }
    }

    /// State over informers of its own that nothing feeds (tests).
    #[must_use]
    pub fn offline(client: Client, events: EventSink, metrics: ControllerMetrics) -> Self {
        Self {
            client,
            pods: Informer::new("pods").index(OWNER_INDEX, Arc::new(daemonset_uid_keys::<Pod>)),
            revisions: Informer::new("controllerrevisions").index(
                OWNER_INDEX,
                Arc::new(daemonset_uid_keys::<ControllerRevision>),
            ),
            nodes: Informer::<Node>::new("nodes").store(),
            synced: Synced::default(),
            events,
            options: Options::default(),
            queue: QueueDepth::new(metrics),
            expectations: Mutex::new(Expectations::new(EXPECTATION_TIMEOUT)),
            started: Instant::now(),
        }
    }

    fn with_expectations<T>(&self, f: impl FnOnce(&mut Expectations, Duration) -> T) -> T {
        let now = self.started.elapsed();
        let mut expectations = self
            .expectations
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        f(&mut expectations, now)
    }

    /// Records that `object` is being created or deleted for the owner `uid`.
    pub fn expect(&self, uid: &str, operation: Operation, object: &str) {
        self.with_expectations(|e, now| e.expect(uid, operation, object, now));
    }

    /// The result of `operation` on `object` was seen (or the operation failed).
    pub fn observe(&self, uid: &str, operation: Operation, object: &str) {
        self.with_expectations(|e, _| e.observe(uid, operation, object));
    }

    /// [`Self::observe`] for each `(uid, operation, object)`.
    pub fn observe_all(&self, seen: &[(String, Operation, String)]) {
        if seen.is_empty() {
            return;
        }
        self.with_expectations(|e, _| {
            for (uid, operation, object) in seen {
                e.observe(uid, *operation, object);
            }
        });
    }

    /// Whether the owner `uid` may act on the cache, and how many operations are still unobserved.
    pub fn satisfied(&self, uid: &str) -> (bool, usize) {
        self.with_expectations(|e, now| (e.satisfied(uid, now), e.pending(uid)))
    }

    /// Forgets the owner `uid` (it is gone).
    pub fn forget(&self, uid: &str) {
        self.with_expectations(|e, _| e.forget(uid));
    }

    /// After a write returned `resource_version`, the cache must reach it before `object` is trusted.
    pub fn expect_version(&self, object: &str, resource_version: &str) {
        self.with_expectations(|e, _| e.expect_version(object, resource_version));
    }

    /// Whether the cached `object` at `resource_version` is as new as the last write.
    pub fn version_satisfied(&self, object: &str, resource_version: &str) -> bool {
        self.with_expectations(|e, _| e.version_satisfied(object, resource_version))
    }

    /// Drops the version expectation of a deleted object.
    pub fn forget_version(&self, object: &str) {
        self.with_expectations(|e, _| e.forget_version(object));
    }
}
