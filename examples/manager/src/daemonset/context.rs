//! What every reconcile of the Advanced DaemonSet controller shares: the client, the owned-object indexes
//! and the node store (all from the process's shared informers), the expectations that keep a reconcile
//! from acting twice on a cache that has not caught up with its own writes, the event sink and the planner
//! options (the queue depth is kept by the set-up,
//! [`WorkloadController`](crate::workload::controller::WorkloadController)).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_runtime::{Indexed, Informer, Informers};
use kruise_schedule::daemonset::Options;
use kube::Client;
use kube::runtime::reflector::Store;

use super::events::EventSink;
use super::watch::daemonset_uid_keys;
use crate::expectations::{DEFAULT_TIMEOUT, SharedExpectations};

/// The name of the informers' index by controlling Advanced DaemonSet UID (pods, revisions).
pub const OWNER_INDEX: &str = "daemonset-uid";

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
    /// What the reconciles wrote and the watches have not shown yet.
    pub expectations: Arc<SharedExpectations>,
}

impl Shared {
    /// Fresh state reading pods, revisions and nodes from `informers` (the process's shared informers).
    #[must_use]
    pub fn new(client: Client, informers: &Informers, events: EventSink, options: Options) -> Self {
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
            expectations: Arc::new(SharedExpectations::new(DEFAULT_TIMEOUT)),
        }
    }

    /// State over informers of its own that nothing feeds (tests).
    #[must_use]
    pub fn offline(client: Client, events: EventSink) -> Self {
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
            expectations: Arc::new(SharedExpectations::new(DEFAULT_TIMEOUT)),
        }
    }
}
