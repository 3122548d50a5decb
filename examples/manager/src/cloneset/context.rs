//! What every reconcile of the CloneSet controller shares: the client, the owned-object indexes, the
//! expectations, the instance-id source, the per-CloneSet pod facts the planner reads, the event sink, the
//! planner options, the metrics and the queue depth.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kruise_schedule::cloneset::{InstanceIds, Options, PodFactsCache, SeededIds};
use kube::Client;

use kruise_runtime::{Indexed, Informer, Informers};

use super::events::EventSink;
use super::watch::cloneset_uid_keys;
use crate::expectations::{Expectations, Operation};
use crate::metrics::ControllerMetrics;
use crate::queue_depth::QueueDepth;

/// The name of the informers' index by controlling CloneSet UID (pods, claims, revisions).
pub const POD_INDEX: &str = "cloneset-uid";

/// How long an unobserved create or delete blocks its CloneSet (Kubernetes uses 5 minutes).
pub const EXPECTATION_TIMEOUT: Duration = Duration::from_secs(300);

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
    /// The CloneSets waiting for or in a reconcile (reported as the queue depth).
    pub queue: QueueDepth,
    /// Gate `PreDownloadImageForInPlaceUpdate`.
    pub pre_download_image: bool,
    expectations: Mutex<Expectations>,
    ids: Mutex<SeededIds>,
    /// The planner's per-pod facts of each CloneSet (by UID), kept between reconciles so that a plan only
    /// re-reads the pods that changed.
    pod_facts: Mutex<HashMap<String, PodFactsCache>>,
    started: Instant,
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
            queue: QueueDepth::new(metrics.clone()),
            metrics,
            pre_download_image: false,
            expectations: Mutex::new(Expectations::new(EXPECTATION_TIMEOUT)),
            ids: Mutex::new(SeededIds::new(seed)),
            pod_facts: Mutex::new(HashMap::new()),
            started: Instant::now(),
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
        self.forget(uid);
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
