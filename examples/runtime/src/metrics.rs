//! Prometheus metrics of kruise-manager (text exposition on `/metrics`). The manager's own names:
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `kruise_manager_reconcile_total` | counter | `controller`, `result` (`success`, `error`) |
//! | `kruise_manager_reconcile_errors_total` | counter | `controller` |
//! | `kruise_manager_reconcile_duration_seconds` | histogram | `controller` |
//! | `kruise_manager_queue_depth` | gauge | `controller` |
//! | `kruise_manager_leader` | gauge (1 while this instance leads) | |
//! | `kruise_manager_webhook_requests_total` | counter | `code` (HTTP status) |
//! | `kruise_manager_webhook_duration_seconds` | histogram | |
//! | `kruise_manager_webhook_open_connections` | gauge | |
//! | `kruise_manager_webhook_connections_closed_total` | counter | `reason` (`handshake_timeout`, `header_timeout`, `body_timeout`, `idle_timeout`) |
//! | `kruise_manager_webhook_certificate_expiry_timestamp_seconds` | gauge (Unix time the serving certificate expires) | |
//!
//! The same facts also go out under the names the Go OpenKruise manager exports (controller-runtime's and
//! client-go's), so a dashboard or alert written for it works unchanged:
//!
//! | metric | type | labels |
//! |---|---|---|
//! | `controller_runtime_reconcile_total` | counter | `controller`, `result` (`success`, `error`) |
//! | `controller_runtime_reconcile_errors_total` | counter | `controller` |
//! | `controller_runtime_reconcile_time_seconds` | histogram (controller-runtime's buckets, 5 ms to 60 s) | `controller` |
//! | `workqueue_depth` | gauge | `name` (the controller) |
//! | `controller_runtime_webhook_requests_total` | counter | `webhook` (the path), `code` |
//! | `controller_runtime_webhook_latency_seconds` | histogram | `webhook` |
//! | `controller_runtime_webhook_requests_in_flight` | gauge | `webhook` |
//! | `leader_election_master_status` | gauge | `name` (`kruise-manager`) |
//! | `process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_virtual_memory_bytes`, `process_open_fds`, `process_max_fds`, `process_start_time_seconds` | see [`crate::process_metrics`] | |
//!
//! A reconcile's `result` is `success` or `error`: kube's controller does not say whether a successful
//! reconcile asked to be requeued, so controller-runtime's `requeue` and `requeue_after` results do not occur.
//!
//! Each controller gets its own [`ControllerMetrics`] handle (its series exist from registration on).
//!
//! ```
//! use std::time::Duration;
//! use kruise_runtime::metrics::Metrics;
//!
//! let metrics = Metrics::new();
//! let cloneset = metrics.controller("cloneset");
//! cloneset.observe_reconcile(Duration::from_millis(3), true);
//! cloneset.set_queue_depth(2);
//! let text = metrics.encode();
//! assert!(text.contains("kruise_manager_reconcile_total{controller=\"cloneset\",result=\"success\"} 1"));
//! assert!(text.contains("kruise_manager_queue_depth{controller=\"cloneset\"} 2"));
//! assert!(text.contains("controller_runtime_reconcile_total{controller=\"cloneset\",result=\"success\"} 1"));
//! assert!(text.contains("workqueue_depth{name=\"cloneset\"} 2"));
//! ```

use std::sync::Arc;
use std::time::Duration;

use crate::informer::InformerHealth;
use crate::open_watches::OpenWatches;
use crate::process_metrics::ProcessCollector;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;

fn duration_histogram() -> Histogram {
    // 1 ms .. ~33 s
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

/// controller-runtime's reconcile-time buckets (seconds).
const RECONCILE_TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

/// Prometheus' default buckets (seconds), which controller-runtime's webhook latency uses.
const WEBHOOK_LATENCY_BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

fn reconcile_time_histogram() -> Histogram {
    Histogram::new(RECONCILE_TIME_BUCKETS)
}

fn webhook_latency_histogram() -> Histogram {
    Histogram::new(WEBHOOK_LATENCY_BUCKETS)
}

/// The `name` label of `leader_election_master_status`.
const LEADER_ELECTION_NAME: &str = "kruise-manager";

/// The metrics under controller-runtime's and client-go's names.
#[derive(Clone)]
struct UpstreamNames {
    reconciles: Family<Labels, Counter>,
    errors: Family<Labels, Counter>,
    reconcile_time: Family<Labels, Histogram, fn() -> Histogram>,
    workqueue_depth: Family<Labels, Gauge>,
    webhook_requests: Family<Labels, Counter>,
    webhook_latency: Family<Labels, Histogram, fn() -> Histogram>,
    webhook_in_flight: Family<Labels, Gauge>,
    leader: Family<Labels, Gauge>,
}

impl UpstreamNames {
    fn registered(registry: &mut Registry) -> Self {
        let names = Self {
            reconciles: Family::default(),
            errors: Family::default(),
            reconcile_time: Family::new_with_constructor(
                reconcile_time_histogram as fn() -> Histogram,
            ),
            workqueue_depth: Family::default(),
            webhook_requests: Family::default(),
            webhook_latency: Family::new_with_constructor(
                webhook_latency_histogram as fn() -> Histogram,
            ),
            webhook_in_flight: Family::default(),
            leader: Family::default(),
        };
        registry.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            names.reconciles.clone(),
        );
        registry.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            names.errors.clone(),
        );
        registry.register_with_unit(
            "controller_runtime_reconcile_time",
            "Length of time per reconciliation per controller",
            prometheus_client::registry::Unit::Seconds,
            names.reconcile_time.clone(),
        );
        registry.register(
            "workqueue_depth",
            "Current depth of workqueue",
            names.workqueue_depth.clone(),
        );
        registry.register(
            "controller_runtime_webhook_requests",
            "Total number of admission requests by HTTP status code",
            names.webhook_requests.clone(),
        );
        registry.register_with_unit(
            "controller_runtime_webhook_latency",
            "Histogram of the latency of processing admission requests",
            prometheus_client::registry::Unit::Seconds,
            names.webhook_latency.clone(),
        );
        registry.register(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served",
            names.webhook_in_flight.clone(),
        );
        registry.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master",
            names.leader.clone(),
        );
        let _ = names
            .leader
            .get_or_create(&vec![("name", LEADER_ELECTION_NAME.to_owned())]);
        names
    }
}

/// Every metric of the manager, registered once; cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    reconciles: Family<Labels, Counter>,
    errors: Family<Labels, Counter>,
    durations: Family<Labels, Histogram, fn() -> Histogram>,
    queue_depth: Family<Labels, Gauge>,
    leader: Gauge,
    webhook_requests: Family<Labels, Counter>,
    webhook_duration: Histogram,
    webhook_connections: Gauge,
    webhook_connections_closed: Family<Labels, Counter>,
    webhook_certificate_expiry: Gauge,
    open_watches: OpenWatches,
    informer_health: InformerHealth,
    upstream: UpstreamNames,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A fresh registry with every metric at zero.
    #[must_use]
    pub fn new() -> Self {
        let mut root = Registry::default();
        root.register_collector(Box::new(ProcessCollector));
        let upstream = UpstreamNames::registered(&mut root);
        let registry = root.sub_registry_with_prefix("kruise_manager");
        let reconciles = Family::<Labels, Counter>::default();
        let errors = Family::<Labels, Counter>::default();
        let durations = Family::<Labels, Histogram, fn() -> Histogram>::new_with_constructor(
            duration_histogram as fn() -> Histogram,
        );
        let queue_depth = Family::<Labels, Gauge>::default();
        let leader = Gauge::default();
        let webhook_requests = Family::<Labels, Counter>::default();
        let webhook_duration = duration_histogram();
        let webhook_connections = Gauge::default();
        let webhook_connections_closed = Family::<Labels, Counter>::default();
        let webhook_certificate_expiry = Gauge::default();
        let open_watches = OpenWatches::new();
        open_watches.register(registry);
        let informer_health = InformerHealth::new();
        informer_health.register(registry);
        registry.register(
            "reconcile",
            "Reconciles by controller and result",
            reconciles.clone(),
        );
        registry.register(
            "reconcile_errors",
            "Reconciles that failed, by controller",
            errors.clone(),
        );
        registry.register_with_unit(
            "reconcile_duration",
            "Time spent in one reconcile, by controller",
            prometheus_client::registry::Unit::Seconds,
            durations.clone(),
        );
        registry.register(
            "queue_depth",
            "Objects waiting to be reconciled, by controller",
            queue_depth.clone(),
        );
        registry.register(
            "leader",
            "1 while this instance holds the leader lease",
            leader.clone(),
        );
        registry.register(
            "webhook_requests",
            "Admission reviews answered, by HTTP status",
            webhook_requests.clone(),
        );
        registry.register_with_unit(
            "webhook_duration",
            "Time spent answering one admission review",
            prometheus_client::registry::Unit::Seconds,
            webhook_duration.clone(),
        );
        registry.register(
            "webhook_open_connections",
            "Open connections to the webhook server (TLS handshake included)",
            webhook_connections.clone(),
        );
        registry.register(
            "webhook_connections_closed",
            "Webhook connections the server closed because a limit ran out, by reason",
            webhook_connections_closed.clone(),
        );
        registry.register(
            "webhook_certificate_expiry_timestamp_seconds",
            "When the webhook's serving certificate expires (Unix time)",
            webhook_certificate_expiry.clone(),
        );
        Self {
            registry: Arc::new(root),
            reconciles,
            errors,
            durations,
            queue_depth,
            leader,
            webhook_requests,
            webhook_duration,
            webhook_connections,
            webhook_connections_closed,
            webhook_certificate_expiry,
            open_watches,
            informer_health,
            upstream,
        }
    }

    /// The open watch requests of the process (`api_open_watches{resource}`): build the manager's client
    /// with [`OpenWatches::layer`] so every watch counts.
    #[must_use]
    pub fn open_watches(&self) -> &OpenWatches {
        &self.open_watches
    }

    /// The lists and watch errors of the process's informers (`informer_lists_total{resource}`,
    /// `informer_watch_errors_total{resource,reason}`): give it to [`crate::Informers::counted`].
    #[must_use]
    pub fn informer_health(&self) -> &InformerHealth {
        &self.informer_health
    }

    /// The metrics handle of the controller `name` (its series start at zero).
    #[must_use]
    pub fn controller(&self, name: &str) -> ControllerMetrics {
        let controller: Labels = vec![("controller", name.to_owned())];
        let with_result = |result: &str| {
            let mut labels = controller.clone();
            labels.push(("result", result.to_owned()));
            labels
        };
        // Touch every series so it is exported before the first reconcile.
        let _ = self.reconciles.get_or_create(&with_result("success"));
        let _ = self.reconciles.get_or_create(&with_result("error"));
        let _ = self.errors.get_or_create(&controller);
        let _ = self.durations.get_or_create(&controller);
        let _ = self.queue_depth.get_or_create(&controller);
        let upstream = &self.upstream;
        let _ = upstream.reconciles.get_or_create(&with_result("success"));
        let _ = upstream.reconciles.get_or_create(&with_result("error"));
        let _ = upstream.errors.get_or_create(&controller);
        let _ = upstream.reconcile_time.get_or_create(&controller);
        let _ = upstream
            .workqueue_depth
            .get_or_create(&vec![("name", name.to_owned())]);
        ControllerMetrics {
            metrics: self.clone(),
            controller,
        }
    }

    /// Sets the leader gauge.
    pub fn set_leader(&self, leading: bool) {
        self.leader.set(i64::from(leading));
        self.upstream
            .leader
            .get_or_create(&vec![("name", LEADER_ELECTION_NAME.to_owned())])
            .set(i64::from(leading));
    }

    /// Starts timing a request to the webhook served at `path` (`/mutate-pod`, `/convert`, ...): it counts
    /// as in flight until [`WebhookRequest::answered`] records its HTTP status and latency (or until it is
    /// dropped unanswered, which records nothing else).
    #[must_use]
    pub fn webhook_request(&self, path: &str) -> WebhookRequest {
        let webhook: Labels = vec![("webhook", path.to_owned())];
        self.upstream
            .webhook_in_flight
            .get_or_create(&webhook)
            .inc();
        WebhookRequest {
            metrics: self.clone(),
            webhook,
            started: std::time::Instant::now(),
        }
    }

    /// Records one answered admission review under the manager's own names.
    pub fn observe_webhook(&self, http_status: u16, duration: Duration) {
        self.webhook_requests
            .get_or_create(&vec![("code", http_status.to_string())])
            .inc();
        self.webhook_duration.observe(duration.as_secs_f64());
    }

    /// Counts a webhook connection opened (`opened`) or ended (`!opened`).
    pub fn count_webhook_connection(&self, opened: bool) {
        if opened {
            self.webhook_connections.inc();
        } else {
            self.webhook_connections.dec();
        }
    }

    /// The open webhook connections.
    #[must_use]
    pub fn webhook_open_connections(&self) -> i64 {
        self.webhook_connections.get()
    }

    /// Records a webhook connection closed because the limit `reason` ran out (e.g. `idle_timeout`).
    pub fn observe_webhook_connection_closed(&self, reason: &str) {
        self.webhook_connections_closed
            .get_or_create(&vec![("reason", reason.to_owned())])
            .inc();
    }

    /// Sets when the webhook's serving certificate expires (Unix seconds).
    pub fn set_webhook_certificate_expiry(&self, unix_seconds: i64) {
        self.webhook_certificate_expiry.set(unix_seconds);
    }

    /// The text exposition format (Prometheus / OpenMetrics text).
    #[must_use]
    pub fn encode(&self) -> String {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut text, &self.registry);
        text
    }
}

/// One webhook request being served (see [`Metrics::webhook_request`]).
#[derive(Debug)]
pub struct WebhookRequest {
    metrics: Metrics,
    webhook: Labels,
    started: std::time::Instant,
}

impl WebhookRequest {
    /// Records the request as answered with `http_status`, under controller-runtime's names.
    pub fn answered(self, http_status: u16) {
        let upstream = &self.metrics.upstream;
        let mut labels = self.webhook.clone();
        labels.push(("code", http_status.to_string()));
        upstream.webhook_requests.get_or_create(&labels).inc();
        upstream
            .webhook_latency
            .get_or_create(&self.webhook)
            .observe(self.started.elapsed().as_secs_f64());
        // Leaving the in-flight gauge is `Drop`'s.
    }
}

impl Drop for WebhookRequest {
    fn drop(&mut self) {
        self.metrics
            .upstream
            .webhook_in_flight
            .get_or_create(&self.webhook)
            .dec();
    }
}

/// The metrics of one controller.
#[derive(Clone, Debug)]
pub struct ControllerMetrics {
    metrics: Metrics,
    controller: Labels,
}

impl ControllerMetrics {
    /// The controller's name (its `controller` label).
    #[must_use]
    pub fn name(&self) -> &str {
        self.controller
            .iter()
            .find(|(key, _)| *key == "controller")
            .map_or("", |(_, name)| name.as_str())
    }

    /// Records a finished reconcile: its duration and whether it succeeded.
    pub fn observe_reconcile(&self, duration: Duration, success: bool) {
        let mut labels = self.controller.clone();
        labels.push((
            "result",
            if success { "success" } else { "error" }.to_owned(),
        ));
        self.metrics.reconciles.get_or_create(&labels).inc();
        let upstream = &self.metrics.upstream;
        upstream.reconciles.get_or_create(&labels).inc();
        if !success {
            self.metrics.errors.get_or_create(&self.controller).inc();
            upstream.errors.get_or_create(&self.controller).inc();
        }
        self.metrics
            .durations
            .get_or_create(&self.controller)
            .observe(duration.as_secs_f64());
        upstream
            .reconcile_time
            .get_or_create(&self.controller)
            .observe(duration.as_secs_f64());
    }

    /// Sets how many objects wait to be reconciled.
    pub fn set_queue_depth(&self, depth: usize) {
        let depth = i64::try_from(depth).unwrap_or(i64::MAX);
        self.metrics
            .queue_depth
            .get_or_create(&self.controller)
            .set(depth);
        self.metrics
            .upstream
            .workqueue_depth
            .get_or_create(&vec![("name", self.name().to_owned())])
            .set(depth);
    }

    /// Runs a reconcile future and records its duration and result.
    pub async fn instrument<T, E>(
        &self,
        reconcile: impl Future<Output = Result<T, E>>,
    ) -> Result<T, E> {
        let started = std::time::Instant::now();
        let result = reconcile.await;
        self.observe_reconcile(started.elapsed(), result.is_ok());
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_exist_from_registration_and_count() {
        let metrics = Metrics::new();
        let controller = metrics.controller("demo");
        let text = metrics.encode();
        assert!(
            text.contains("kruise_manager_reconcile_total{controller=\"demo\",result=\"error\"} 0"),
            "{text}"
        );
        assert!(
            text.contains("kruise_manager_reconcile_duration_seconds_count{controller=\"demo\"} 0"),
            "{text}"
        );
        controller.observe_reconcile(Duration::from_millis(5), false);
        metrics.set_leader(true);
        metrics.observe_webhook(200, Duration::from_millis(1));
        metrics.count_webhook_connection(true);
        metrics.count_webhook_connection(true);
        metrics.count_webhook_connection(false);
        metrics.observe_webhook_connection_closed("idle_timeout");
        metrics.set_webhook_certificate_expiry(1_800_000_000);
        let text = metrics.encode();
        assert_eq!(metrics.webhook_open_connections(), 1);
        assert!(
            text.contains("kruise_manager_webhook_open_connections 1"),
            "{text}"
        );
        assert!(
            text.contains(
                "kruise_manager_webhook_connections_closed_total{reason=\"idle_timeout\"} 1"
            ),
            "{text}"
        );
        assert!(
            text.contains("kruise_manager_webhook_certificate_expiry_timestamp_seconds 1800000000"),
            "{text}"
        );
        assert!(
            text.contains("kruise_manager_reconcile_errors_total{controller=\"demo\"} 1"),
            "{text}"
        );
        assert!(text.contains("kruise_manager_leader 1"), "{text}");
        assert!(
            text.contains("kruise_manager_webhook_requests_total{code=\"200\"} 1"),
            "{text}"
        );
    }

    #[test]
    fn upstream_names_carry_the_same_facts() {
        let metrics = Metrics::new();
        let controller = metrics.controller("cloneset");
        let text = metrics.encode();
        assert!(
            text.contains("leader_election_master_status{name=\"kruise-manager\"} 0"),
            "{text}"
        );
        assert!(
            text.contains("workqueue_depth{name=\"cloneset\"} 0"),
            "{text}"
        );
        controller.observe_reconcile(Duration::from_millis(30), true);
        controller.observe_reconcile(Duration::from_millis(300), false);
        controller.set_queue_depth(7);
        metrics.set_leader(true);
        let answered = metrics.webhook_request("/mutate-pod");
        let pending = metrics.webhook_request("/convert");
        let in_flight = metrics.encode();
        assert!(
            in_flight
                .contains("controller_runtime_webhook_requests_in_flight{webhook=\"/convert\"} 1"),
            "{in_flight}"
        );
        answered.answered(200);
        drop(pending);
        let text = metrics.encode();
        for line in [
            "controller_runtime_reconcile_total{controller=\"cloneset\",result=\"success\"} 1",
            "controller_runtime_reconcile_total{controller=\"cloneset\",result=\"error\"} 1",
            "controller_runtime_reconcile_errors_total{controller=\"cloneset\"} 1",
            "controller_runtime_reconcile_time_seconds_bucket{le=\"0.05\",controller=\"cloneset\"} 1",
            "controller_runtime_reconcile_time_seconds_bucket{le=\"0.35\",controller=\"cloneset\"} 2",
            "controller_runtime_reconcile_time_seconds_count{controller=\"cloneset\"} 2",
            "workqueue_depth{name=\"cloneset\"} 7",
            "leader_election_master_status{name=\"kruise-manager\"} 1",
            "controller_runtime_webhook_requests_total{webhook=\"/mutate-pod\",code=\"200\"} 1",
            "controller_runtime_webhook_latency_seconds_count{webhook=\"/mutate-pod\"} 1",
            "controller_runtime_webhook_requests_in_flight{webhook=\"/mutate-pod\"} 0",
            "controller_runtime_webhook_requests_in_flight{webhook=\"/convert\"} 0",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line} missing from:\n{text}"
            );
        }
        assert!(
            !text.contains("controller_runtime_webhook_requests_total{webhook=\"/convert\""),
            "an unanswered request is not counted as answered: {text}"
        );
    }

    #[tokio::test]
    async fn instrument_records_the_outcome() {
        let metrics = Metrics::new();
        let controller = metrics.controller("demo");
        let ok: Result<(), &str> = controller.instrument(async { Ok(()) }).await;
        assert!(ok.is_ok());
        let failed: Result<(), &str> = controller.instrument(async { Err("boom") }).await;
        assert!(failed.is_err());
        let text = metrics.encode();
        assert!(
            text.contains(
                "kruise_manager_reconcile_total{controller=\"demo\",result=\"success\"} 1"
            )
        );
        assert!(
            text.contains("kruise_manager_reconcile_total{controller=\"demo\",result=\"error\"} 1")
        );
    }
}
