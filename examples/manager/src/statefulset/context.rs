//! What every reconcile of the Advanced StatefulSet controller shares: the client, the owned-object
//! indexes, the claim store, the expectations, the event sink, the planner options, the metrics and the
//! queue depth.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kruise_schedule::statefulset::Options;
use kube::Client;
use kube::runtime::reflector::ObjectRef;

use kruise_runtime::{Indexed, Informer, Informers};

use super::events::EventSink;
use super::watch::statefulset_uid_keys;
use crate::expectations::{Expectations, Operation};
use crate::metrics::ControllerMetrics;
use crate::queue_depth::QueueDepth;

/// The name of the informers' index by controlling Advanced StatefulSet UID (pods, revisions).
pub const OWNER_INDEX: &str = "statefulset-uid";

/// How long an unobserved create or delete blocks its StatefulSet (Kubernetes uses 5 minutes).
pub const EXPECTATION_TIMEOUT: Duration = Duration::from_secs(300);

/// Whether each owned-object watch has delivered its first full list.
#[derive(Clone, Debug, Default)]
pub struct Synced {
    /// Pods.
    pub pods: Arc<AtomicBool>,
    /// Revisions.
    pub revisions: Arc<AtomicBool>,
}

/// The shared state of the controller.
pub struct Shared {
    /// A client for the cluster.
    pub client: Client,
    /// Pods by the UID of the StatefulSet controlling them.
    pub pods: Indexed<Pod>,
    /// ControllerRevisions by the UID of the StatefulSet controlling them.
    pub revisions: Indexed<ControllerRevision>,
    /// Every claim (looked up by name).
    pub claims: Informer<PersistentVolumeClaim>,
    /// Which owned-object watches are complete.
    pub synced: Synced,
    /// Where Events go.
    pub events: EventSink,
    /// Planner gates.
    pub options: Options,
    /// Reconcile metrics.
    pub metrics: ControllerMetrics,
    /// The StatefulSets waiting for or in a reconcile (reported as the queue depth).
    pub queue: QueueDepth,
    expectations: Mutex<Expectations>,
    /// The invalid spec value last reported for each StatefulSet (by UID), so that it is reported once.
    reported: Mutex<HashMap<String, String>>,
    started: Instant,
}

impl Shared {
    /// Fresh state reading pods, claims and revisions from `informers` (the process's shared informers).
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
                .index(OWNER_INDEX, Arc::new(statefulset_uid_keys::<Pod>)),
            revisions: informers.get::<ControllerRevision>().index(
                OWNER_INDEX,
                Arc::new(statefulset_uid_keys::<ControllerRevision>),
            ),
            claims: informers.get::<PersistentVolumeClaim>(),
            synced: Synced::default(),
            events,
            options,
            queue: QueueDepth::new(metrics.clone()),
            metrics,
            expectations: Mutex::new(Expectations::new(EXPECTATION_TIMEOUT)),
            reported: Mutex::new(HashMap::new()),
            started: Instant::now(),
        }
    }

    /// Every cache is complete (before that, a reconcile would miss pods and create them twice).
    #[must_use]
    pub fn all_synced(&self) -> bool {
        self.synced.pods.load(Ordering::SeqCst)
            && self.synced.revisions.load(Ordering::SeqCst)
            && self.claims.is_synced()
    }

    /// The cached claim `namespace/name`.
    #[must_use]
    pub fn claim(&self, namespace: &str, name: &str) -> Option<Arc<PersistentVolumeClaim>> {
        self.claims.get(&ObjectRef::new(name).within(namespace))
    }

    /// Whether the invalid spec value `message` of the StatefulSet `uid` is new (not the one reported
    /// last): report it then.
    pub fn report_invalid_spec(&self, uid: &str, message: &str) -> bool {
        let mut reported = self.reported.lock().unwrap_or_else(PoisonError::into_inner);
        if reported.get(uid).is_some_and(|last| last == message) {
            return false;
        }
        reported.insert(uid.to_owned(), message.to_owned());
        true
    }

    /// Drops what is kept for the deleted StatefulSet `uid`: its expectations and reports.
    pub fn forget_statefulset(&self, uid: &str) {
        self.reported
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(uid);
        self.forget(uid);
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

#[cfg(test)]
mod tests {
    use axum::http::{Request, Response};

    use super::*;
    use crate::metrics::Metrics;

    /// A client whose API server answers 404 to everything.
    fn offline_client() -> Client {
        let service = tower::service_fn(|_: Request<kube::client::Body>| async {
            Ok::<_, std::convert::Infallible>(
                Response::builder()
                    .status(404)
                    .body(kube::client::Body::empty())
                    .unwrap(),
            )
        });
        Client::new(service, "default")
    }

    #[tokio::test]
    async fn an_invalid_spec_value_is_reported_once_until_it_changes() {
        let client = offline_client();
        let shared = Shared::new(
            client.clone(),
            &Informers::new(client),
            EventSink::disabled(),
            Options::default(),
            Metrics::new().controller("statefulset"),
        );
        assert!(shared.report_invalid_spec("a", "spec.reserveOrdinals[0]: \"x\""));
        assert!(!shared.report_invalid_spec("a", "spec.reserveOrdinals[0]: \"x\""));
        assert!(shared.report_invalid_spec("b", "spec.reserveOrdinals[0]: \"x\""));
        assert!(shared.report_invalid_spec("a", "spec.reserveOrdinals[1]: \"1-\""));
        shared.forget_statefulset("a");
        assert!(shared.report_invalid_spec("a", "spec.reserveOrdinals[1]: \"1-\""));
        assert!(!shared.all_synced(), "nothing listed yet");
    }
}
