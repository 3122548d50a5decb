//! kruise-daemon's Prometheus metrics (`kruise_daemon_*`): reconciles of each worker (ContainerRecreateRequests,
//! the node's NodeImage) by result and duration, container kills and image pulls by result, and how long
//! pulls take.

use std::sync::Arc;
use std::time::Duration;

use kruise_runtime::harness::ReconcileObserver;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WorkerResultLabels {
    worker: &'static str,
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct WorkerLabel {
    worker: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabel {
    result: &'static str,
}

fn result(ok: bool) -> ResultLabel {
    ResultLabel {
        result: if ok { "success" } else { "error" },
    }
}

/// Every metric of the daemon; cheap to clone.
#[derive(Clone)]
pub struct DaemonMetrics {
    registry: Arc<Registry>,
    reconciles: Family<WorkerResultLabels, Counter>,
    reconcile_duration: Family<WorkerLabel, Histogram, fn() -> Histogram>,
    kills: Family<ResultLabel, Counter>,
    pulls: Family<ResultLabel, Counter>,
    pull_duration: Histogram,
}

impl std::fmt::Debug for DaemonMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DaemonMetrics").finish_non_exhaustive()
    }
}

impl Default for DaemonMetrics {
    fn default() -> Self {
        Self::new()
    }
}

impl DaemonMetrics {
    /// A fresh registry.
    #[must_use]
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("kruise_daemon");
        let reconciles = Family::<WorkerResultLabels, Counter>::default();
        let reconcile_duration = Family::<WorkerLabel, Histogram>::new_with_constructor(
            (|| Histogram::new(exponential_buckets(0.001, 2.0, 16))) as fn() -> Histogram,
        );
        let kills = Family::<ResultLabel, Counter>::default();
        let pulls = Family::<ResultLabel, Counter>::default();
        let pull_duration = Histogram::new(exponential_buckets(0.01, 2.0, 16));
        registry.register(
            "reconciles",
            "Reconciles of a worker (crr: ContainerRecreateRequests; node-image: the node's NodeImage), by result",
            reconciles.clone(),
        );
        registry.register_with_unit(
            "reconcile_duration",
            "Time one reconcile of a worker took",
            Unit::Seconds,
            reconcile_duration.clone(),
        );
        registry.register(
            "container_kills",
            "Containers stopped for requests, by result",
            kills.clone(),
        );
        registry.register(
            "image_pulls",
            "Image pulls (one per attempt), by result",
            pulls.clone(),
        );
        registry.register_with_unit(
            "image_pull_duration",
            "Time one image pull attempt took",
            Unit::Seconds,
            pull_duration.clone(),
        );
        Self {
            registry: Arc::new(registry),
            reconciles,
            reconcile_duration,
            kills,
            pulls,
            pull_duration,
        }
    }

    /// Where the worker `worker` (`crr`, `node-image`) reports its reconciles, for
    /// [`kruise_runtime::harness::Driver`].
    #[must_use]
    pub fn worker(&self, worker: &'static str) -> WorkerMetrics {
        WorkerMetrics {
            metrics: self.clone(),
            worker,
        }
    }

    /// Counts one container kill.
    pub fn kill(&self, ok: bool) {
        self.kills.get_or_create(&result(ok)).inc();
    }

    /// Counts one pull attempt and its duration.
    pub fn pull(&self, ok: bool, took: Duration) {
        self.pulls.get_or_create(&result(ok)).inc();
        self.pull_duration.observe(took.as_secs_f64());
    }

    /// The Prometheus text exposition.
    #[must_use]
    pub fn encode(&self) -> String {
        let mut text = String::new();
        if prometheus_client::encoding::text::encode(&mut text, &self.registry).is_err() {
            text.clear();
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_show_in_the_exposition() {
        let metrics = DaemonMetrics::new();
        metrics.kill(true);
        metrics.kill(false);
        metrics.pull(true, Duration::from_millis(120));
        let text = metrics.encode();
        assert!(
            text.contains("kruise_daemon_container_kills_total{result=\"success\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("kruise_daemon_container_kills_total{result=\"error\"} 1"),
            "{text}"
        );
        assert!(
            text.contains("kruise_daemon_image_pull_duration_seconds_count 1"),
            "{text}"
        );
    }
}

/// The reconciles of one worker of the daemon ([`DaemonMetrics::worker`]).
#[derive(Clone, Debug)]
pub struct WorkerMetrics {
    metrics: DaemonMetrics,
    worker: &'static str,
}

impl ReconcileObserver for WorkerMetrics {
    fn observe_reconcile(&self, duration: Duration, success: bool) {
        self.metrics
            .reconciles
            .get_or_create(&WorkerResultLabels {
                worker: self.worker,
                result: result(success).result,
            })
            .inc();
        self.metrics
            .reconcile_duration
            .get_or_create(&WorkerLabel {
                worker: self.worker,
            })
            .observe(duration.as_secs_f64());
    }
}
