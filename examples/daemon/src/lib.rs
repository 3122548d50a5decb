//! kruise-daemon: the node agent, one per node (`--node-name`). It talks CRI v1 to the node's container
//! runtime over a unix socket (`--cri-endpoint`) and watches only what concerns its node:
//!
//! * [`crr`]: the ContainerRecreateRequests labelled with its node (and still active): recreates the named
//!   containers of their pods ([`kill`], in the order of [`recorded_kill`]); the containers of pods that are not the subject of a request are
//!   never touched, and a request whose pod-UID label points at another pod than the one it names is refused
//!   ([`pod_identity`]); preStop HTTP and TCP hooks without a host go to the pod's IP ([`pod_address`],
//!   [`http_hook`]);
//! * [`image_puller`]: its NodeImage (named after the node): pulls the images and tags it lists through
//!   the CRI ImageService (pull secrets, timeout, backoff) and reports each tag's status; the pull secrets
//!   are the copies kruise-manager keeps in the `kruise-daemon-config` namespace, the only namespace whose
//!   Secrets the daemon may read;
//! * [`container_meta`]: the pods bound to its node (gate `DaemonWatchingPod`): reports what the runtime
//!   runs in `apps.kruise.io/runtime-containers-meta` and, during an in-place update, stops containers whose
//!   env from pod labels or annotations changed (gate `InPlaceUpdateEnvFromMetadata`);
//! * [`pod_probe`]: its NodePodProbe (named after the node): runs the custom probes of PodProbeMarkers
//!   it lists (`exec` through CRI `ExecSync`, `tcpSocket` and `httpGet` to the pod's IP) and writes their
//!   results to its status;
//! * [`metrics`] and the HTTP endpoints `/healthz` (the runtime answers `Version`), `/readyz` and
//!   `/metrics` on `--health-bind-address`.
//!
//! # Restart and resume
//!
//! The daemon keeps no state of its own: what it has done is in the API server (the requests' and the
//! NodeImage's status) and in the runtime (which incarnation of each container runs, which images are
//! there). Killed at any point (SIGKILL included) and started again, it lists its requests and its NodeImage
//! and decides from them as on any pass (containerd ends the exec of a hook whose caller went away). What
//! is repeated, what is not, and why that is safe:
//!
//! * a container kill interrupted before its stop was recorded (during the preStop hook): the same
//!   incarnation still runs and nothing says it was stopped, so the kill starts over, the hook included
//!   (from its start, with the whole grace period). Hooks are delivered at least once, as Kubernetes'
//!   lifecycle hooks are, so their handlers must tolerate a second call;
//! * a kill whose stop was recorded ([`recorded_kill`]: the container `Recreating` with `isKilled` is
//!   written before `StopContainer`): a newer incarnation is the recreated container and is never stopped,
//!   not even under `forceRecreate`; if the stop never took effect, the same incarnation is stopped again
//!   (once more through its hook). A container is thus recreated once per request;
//! * container states already `Succeeded` or `Failed`, and completed requests, are final: never redone;
//! * an image pull interrupted while its tag is `Pulling`: that status reads as still to do, so the tag is
//!   reported `Pulling` again and pulled again (the layers already downloaded stay in the runtime's content
//!   store); with `IfNotPresent` an image that finished pulling before the kill is reported `Succeeded` at
//!   once. A tag reported `Succeeded` or `Failed` for its version is never pulled again.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use kruise_daemon::{Daemon, DaemonOptions};
//! use kruise_runtime::shutdown;
//!
//! let options = DaemonOptions { node_name: "node-0".into(), ..DaemonOptions::default() };
//! let (trigger, signal) = shutdown::channel();
//! let client = kube::Client::try_default().await?;
//! Daemon::new(options)?.run(client, signal).await?;
//! # Ok(()) }
//! ```

pub mod container_meta;
pub mod crr;
pub mod hook_error;
pub mod http_hook;
pub mod image_puller;
pub mod insecure_tls;
pub mod kill;
pub mod metrics;
pub mod pod_address;
pub mod pod_identity;
pub mod pod_probe;
pub mod recorded_kill;

use std::net::SocketAddr;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

use self::container_meta::ContainerMetaGates;
use self::metrics::DaemonMetrics;
use kruise_runtime::cri::{CriClient, CriError};
use kruise_runtime::shutdown::Shutdown;

/// The daemon's settings (also its command-line flags).
#[derive(Clone, Debug, clap::Args)]
pub struct DaemonOptions {
    /// The node this daemon runs on (its requests and NodeImage).
    #[arg(long)]
    pub node_name: String,
    /// The CRI v1 endpoint of the node's runtime.
    #[arg(long, default_value = "unix:///run/containerd/containerd.sock")]
    pub cri_endpoint: String,
    /// Where `/healthz`, `/readyz` and `/metrics` are served (upstream's daemon uses port 10221).
    #[arg(long, default_value = "0.0.0.0:10221")]
    pub health_bind_address: SocketAddr,
    /// Upstream feature gates, `Name=true|false,...`. The container meta worker reads `DaemonWatchingPod`
    /// and `InPlaceUpdateEnvFromMetadata` (both default true); other names are left to other workers.
    #[arg(long = "feature-gates", value_parser = ContainerMetaGates::parse, default_value = "")]
    pub container_meta_gates: ContainerMetaGates,
}

impl Default for DaemonOptions {
    fn default() -> Self {
        Self {
            node_name: String::new(),
            cri_endpoint: "unix:///run/containerd/containerd.sock".into(),
            health_bind_address: SocketAddr::from(([0, 0, 0, 0], 10221)),
            container_meta_gates: ContainerMetaGates::default(),
        }
    }
}

/// Why the daemon could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DaemonError {
    /// `--node-name` is empty.
    #[error("--node-name: a node name is required")]
    NoNodeName,
    /// The CRI endpoint is not a unix socket.
    #[error(transparent)]
    Endpoint(#[from] CriError),
    /// The health address could not be bound.
    #[error("binding {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// The failure.
        #[source]
        source: std::io::Error,
    },
}

/// kruise-daemon with its options.
#[derive(Debug)]
pub struct Daemon {
    options: DaemonOptions,
    cri: CriClient,
    metrics: DaemonMetrics,
}

impl Daemon {
    /// A daemon for `options` (the runtime is connected on first use).
    ///
    /// # Errors
    /// No node name, or an endpoint that is not a unix socket.
    pub fn new(options: DaemonOptions) -> Result<Self, DaemonError> {
        if options.node_name.is_empty() {
            return Err(DaemonError::NoNodeName);
        }
        let cri = CriClient::connect_lazy(&options.cri_endpoint)?;
        Ok(Self {
            options,
            cri,
            metrics: DaemonMetrics::new(),
        })
    }

    /// Serves health and metrics and runs the workers until `shutdown`.
    ///
    /// # Errors
    /// The health address cannot be bound.
    pub async fn run(self, client: kube::Client, shutdown: Shutdown) -> Result<(), DaemonError> {
        let address = self.options.health_bind_address;
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|source| DaemonError::Bind { address, source })?;
        match self.cri.version().await {
            Ok(version) => tracing::info!(
                node = %self.options.node_name,
                endpoint = %self.options.cri_endpoint,
                runtime = %version.runtime_name,
                runtime_version = %version.runtime_version,
                api = %version.runtime_api_version,
                "connected to the container runtime"
            ),
            Err(error) => tracing::warn!(%error, "the container runtime does not answer yet"),
        }
        let app = router(self.cri.clone(), self.metrics.clone());
        let stopped = shutdown.clone();
        let http = tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(stopped.wait());
            if let Err(error) = serve.await {
                tracing::error!(%error, "the health server failed");
            }
        });
        tracing::info!(%address, "serving /healthz, /readyz and /metrics");
        let crr_worker = crr::run(
            client.clone(),
            self.cri.clone(),
            self.options.node_name.clone(),
            self.metrics.clone(),
            shutdown.clone(),
        );
        let container_meta = container_meta::run(
            client.clone(),
            self.cri.clone(),
            self.options.node_name.clone(),
            self.options.container_meta_gates,
            self.metrics.clone(),
            shutdown.clone(),
        );
        let prober = pod_probe::run(
            client.clone(),
            self.cri.clone(),
            self.options.node_name.clone(),
            shutdown.clone(),
        );
        let puller = image_puller::run(
            client,
            self.cri.clone(),
            self.options.node_name.clone(),
            self.metrics.clone(),
            shutdown.clone(),
        );
        tokio::join!(crr_worker, container_meta, puller, prober);
        let _ = http.await;
        tracing::info!("kruise-daemon stopped");
        Ok(())
    }
}

#[derive(Clone)]
struct AppState {
    cri: CriClient,
    metrics: DaemonMetrics,
}

/// The HTTP routes: `/healthz` and `/readyz` (200 when the runtime answers `Version`), `/metrics`.
pub fn router(cri: CriClient, metrics: DaemonMetrics) -> Router {
    Router::new()
        .route("/healthz", get(health))
        .route("/readyz", get(health))
        .route("/metrics", get(metrics_text))
        .with_state(AppState { cri, metrics })
}

async fn health(State(state): State<AppState>) -> impl IntoResponse {
    match state.cri.version().await {
        Ok(_) => (StatusCode::OK, "ok".to_owned()),
        Err(error) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("container runtime: {error}"),
        ),
    }
}

async fn metrics_text(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics.encode(),
    )
}

#[cfg(test)]
mod tests {
    use axum::body::{Body, to_bytes};
    use tower::ServiceExt;

    use super::*;

    #[tokio::test]
    async fn health_fails_without_a_runtime_and_metrics_answer() {
        let dir = tempfile::tempdir().unwrap();
        let endpoint = format!("unix://{}", dir.path().join("none.sock").display());
        let app = router(
            CriClient::connect_lazy(&endpoint).unwrap(),
            DaemonMetrics::new(),
        );
        let request = axum::http::Request::get("/healthz")
            .body(Body::empty())
            .unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        let request = axum::http::Request::get("/metrics")
            .body(Body::empty())
            .unwrap();
        let response = app.oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let body = to_bytes(response.into_body(), 1 << 20).await.unwrap();
        assert!(String::from_utf8_lossy(&body).contains("kruise_daemon"));
    }

    #[test]
    fn a_node_name_is_required() {
        assert!(matches!(
            Daemon::new(DaemonOptions::default()),
            Err(DaemonError::NoNodeName)
        ));
    }
}
