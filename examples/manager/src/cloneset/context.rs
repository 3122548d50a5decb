//! What every reconcile of the CloneSet controller shares: the client, the owned-object indexes, the
//! expectations, the instance-id source, the per-CloneSet pod facts the planner reads, the event sink, the
//! planner options and the metrics (the queue depth is kept by the set-up,
//! [`WorkloadController`](crate::workload::controller::WorkloadController)).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kruise_schedule::cloneset::{InstanceIds, Options, PodFactsCache, SeededIds};
use kube::Client;

use kruise_runtime::{Indexed, Informer, Informers};

use super::events::EventSink;
use super::watch::cloneset_uid_keys;
use crate::expectations::{DEFAULT_TIMEOUT, SharedExpectations};
use crate::metrics::ControllerMetrics;
use crate::unavailable_budget::BudgetStores;

/// The name of the informers' index by controlling CloneSet UID (pods, claims, revisions).
pub const POD_INDEX: &str = "cloneset-uid";

/// Whether each owned-object watch has delivered its first full list.
#[derive(Clone, Debug, Default)]
pub struct Synced {
    /// Pods.
    pub pods: Arc<AtomicBool>,
    /// Claims.
    pub claims: Arc<AtomicBool>,
    /// Revisions.
    pub revisions: Arc<AtomicBool>,
}

impl Synced {
    /// All three caches are complete (before that, a reconcile would miss pods and create too many).
    #[must_use]
    pub fn all(&self) -> bool {
        [&self.pods, &self.claims, &self.revisions]
            .iter()
            .all(|flag| flag.load(Ordering::SeqCst))
    }
}

/// The shared state of the controller.
pub struct Shared {
    /// A client for the cluster.
    pub client: Client,
    /// Pods by the UID of the CloneSet controlling them (an index of the shared pod informer).
    pub pods: Indexed<Pod>,
    /// Claims by controller-owner UID.
    pub claims: Indexed<PersistentVolumeClaim>,
    /// ControllerRevisions by controller-owner UID.
    pub revisions: Indexed<ControllerRevision>,
    /// Which caches are complete.
    pub synced: Synced,
    /// Where Events go.
    pub events: EventSink,
    /// Planner gates and flags.
    pub options: Options,
    /// Reconcile metrics.
    pub metrics: ControllerMetrics,
    /// Gate `PreDownloadImageForInPlaceUpdate`.
    pub pre_download_image: bool,
    /// The PodUnavailableBudgets an in-place update spends from (gate `PodUnavailableBudgetUpdateGate`);
    /// `None` with the gate off.
    pub budgets: Option<BudgetStores>,
    /// What the reconciles wrote and the watches have not shown yet.
    pub expectations: Arc<SharedExpectations>,
    ids: Mutex<SeededIds>,
    /// The planner's per-pod facts of each CloneSet (by UID), kept between reconciles so that a plan only
    /// re-reads the pods that changed.
    pod_facts: Mutex<HashMap<String, PodFactsCache>>,
}

impl Shared {
    /// Fresh state: empty caches, no expectations, instance ids seeded from the clock and process id.
    #[must_use]
    pub fn new(
        client: Client,
        events: EventSink,
        options: Options,
        metrics: ControllerMetrics,
    ) -> Self {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_nanos() as u64)
            ^ (u64::from(std::process::id()) << 32);
        Self {
            client,
            pods: Informer::new("pods").index(POD_INDEX, Arc::new(cloneset_uid_keys::<Pod>)),
            claims: Informer::new("persistentvolumeclaims").index(
                POD_INDEX,
                Arc::new(cloneset_uid_keys::<PersistentVolumeClaim>),
            ),
            revisions: Informer::new("controllerrevisions")
                .index(POD_INDEX, Arc::new(cloneset_uid_keys::<ControllerRevision>)),
            synced: Synced::default(),
            events,
            options,
            metrics,
            pre_download_image: false,
            budgets: None,
            expectations: Arc::new(SharedExpectations::new(DEFAULT_TIMEOUT)),
            ids: Mutex::new(SeededIds::new(seed)),
            pod_facts: Mutex::new(HashMap::new()),
        }
    }

    /// The same state reading its pods, claims and revisions from `informers` (the process's shared
    /// informers; by default informers of its own that nothing feeds).
    #[must_use]
    pub fn with_informers(mut self, informers: &Informers) -> Self {
        self.pods = informers
            .get::<Pod>()
            .index(POD_INDEX, Arc::new(cloneset_uid_keys::<Pod>));
        self.claims = informers.get::<PersistentVolumeClaim>().index(
            POD_INDEX,
            Arc::new(cloneset_uid_keys::<PersistentVolumeClaim>),
        );
        self.revisions = informers
            .get::<ControllerRevision>()
            .index(POD_INDEX, Arc::new(cloneset_uid_keys::<ControllerRevision>));
        self
    }

    /// The same state with the gate `PreDownloadImageForInPlaceUpdate` set to `enabled`.
    #[must_use]
    pub fn with_pre_download_image(mut self, enabled: bool) -> Self {
        self.pre_download_image = enabled;
        self
    }

    /// The same state spending PodUnavailableBudget units before in-place updates (gate
    /// `PodUnavailableBudgetUpdateGate`), reading the budgets from `informers`.
    #[must_use]
    pub fn with_pod_unavailable_budget(mut self, informers: &Informers) -> Self {
        self.budgets = Some(BudgetStores::shared(informers));
        self
    }

    /// Takes the pod facts of the CloneSet `uid` for one reconcile (an empty cache the first time). A
    /// CloneSet is reconciled by one worker at a time, so nothing else needs them meanwhile; give them back
    /// with [`Shared::keep_pod_facts`].
    pub fn take_pod_facts(&self, uid: &str) -> PodFactsCache {
        self.with_pod_facts(|facts| facts.remove(uid))
            .unwrap_or_default()
    }

    /// Keeps the pod facts of the CloneSet `uid` for its next reconcile.
    pub fn keep_pod_facts(&self, uid: &str, cache: PodFactsCache) {
        self.with_pod_facts(|facts| facts.insert(uid.to_owned(), cache));
    }

    /// Drops what is kept for the deleted CloneSet `uid`: its pod facts and its expectations.
    pub fn forget_cloneset(&self, uid: &str) {
        self.with_pod_facts(|facts| facts.remove(uid));
        self.expectations.forget(uid);
    }

    /// How many CloneSets have pod facts kept.
    #[cfg(test)]
    pub(crate) fn kept_pod_facts(&self) -> usize {
        self.with_pod_facts(|facts| facts.len())
    }

    fn with_pod_facts<T>(&self, f: impl FnOnce(&mut HashMap<String, PodFactsCache>) -> T) -> T {
        let mut facts = self
            .pod_facts
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        f(&mut facts)
    }

    /// Runs `f` with the instance-id source.
    pub fn with_ids<T>(&self, f: impl FnOnce(&dyn InstanceIds) -> T) -> T {
        let ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        f(&*ids)
    }
}
