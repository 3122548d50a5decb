//! What every reconcile of the Advanced StatefulSet controller shares: the client, the owned-object
//! indexes, the claim store, the expectations, the event sink, the planner options and the metrics (the
//! queue depth is kept by the set-up,
//! [`WorkloadController`](crate::workload::controller::WorkloadController)).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kruise_schedule::statefulset::Options;
use kube::Client;
use kube::runtime::reflector::ObjectRef;

use kruise_runtime::{Indexed, Informer, Informers};

use super::events::EventSink;
use super::watch::statefulset_uid_keys;
use crate::expectations::{DEFAULT_TIMEOUT, SharedExpectations};
use crate::metrics::ControllerMetrics;

/// The name of the informers' index by controlling Advanced StatefulSet UID (pods, revisions).
pub const OWNER_INDEX: &str = "statefulset-uid";

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
    /// What the reconciles wrote and the watches have not shown yet.
    pub expectations: Arc<SharedExpectations>,
    /// The invalid spec value last reported for each StatefulSet (by UID), so that it is reported once.
    reported: Mutex<HashMap<String, String>>,
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
            metrics,
            expectations: Arc::new(SharedExpectations::new(DEFAULT_TIMEOUT)),
            reported: Mutex::new(HashMap::new()),
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
        self.expectations.forget(uid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;
    use crate::workload::offline_client::offline_client;

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
