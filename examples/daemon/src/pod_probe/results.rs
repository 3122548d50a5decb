//! The latest kept result of every probe worker, shared by the workers and [`super::status_writer`]:
//! a report replaces the kept result only when
//! [`should_record`] says so, and then wakes
//! the writer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1alpha1::{ContainerProbe, PodProbe};
use kruise_schedule::pod_probe::probe_status::{ProbeResult, should_record};
use kruise_schedule::pod_probe::prober_state::Report;
use tokio::sync::Notify;

/// What identifies one worker: the pod (namespace, name, UID, IP), the container and the probe name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProbeKey {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's name.
    pub pod: String,
    /// The pod's UID.
    pub uid: String,
    /// The pod's IP (`""` while unknown).
    pub ip: String,
    /// The probed container.
    pub container: String,
    /// `<marker>#<probe>`.
    pub probe: String,
}

impl ProbeKey {
    /// The key of `entry` of `pod` in a NodePodProbe spec.
    #[must_use]
    pub fn of(pod: &PodProbe, entry: &ContainerProbe) -> Self {
        Self {
            namespace: pod.namespace.clone(),
            pod: pod.name.clone(),
            uid: pod.uid.clone(),
            ip: pod.ip.clone(),
            container: entry.container_name.clone(),
            probe: entry.name.clone(),
        }
    }

    /// `namespace/name` of the pod.
    #[must_use]
    pub fn pod_key(&self) -> String {
        format!("{}/{}", self.namespace, self.pod)
    }
}

/// The kept results, and the writer's wake-up.
#[derive(Clone, Default)]
pub struct ResultBoard {
    results: Arc<Mutex<HashMap<ProbeKey, ProbeResult>>>,
    changed: Arc<Notify>,
}

impl ResultBoard {
    /// Keeps `report` of `key` at `now` when it replaces the kept result; wakes the writer then.
    pub fn record(&self, key: &ProbeKey, report: Report, now: Timestamp) {
        let mut results = self.results.lock().unwrap_or_else(PoisonError::into_inner);
        if !should_record(results.get(key), &report.state, &report.message, now) {
            return;
        }
        tracing::debug!(pod = %key.pod_key(), probe = %key.probe, state = %report.state.as_str(), "probe result");
        results.insert(
            key.clone(),
            ProbeResult {
                namespace: key.namespace.clone(),
                pod: key.pod.clone(),
                uid: key.uid.clone(),
                probe: key.probe.clone(),
                state: report.state,
                message: report.message,
                probed_at: now,
            },
        );
        drop(results);
        self.changed.notify_one();
    }

    /// Forgets the result of a stopped worker.
    pub fn remove(&self, key: &ProbeKey) {
        self.results
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
    }

    /// Every kept result.
    #[must_use]
    pub fn snapshot(&self) -> Vec<ProbeResult> {
        self.results
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }

    /// Waits until a result changes.
    pub async fn changed(&self) {
        self.changed.notified().await;
    }
}
