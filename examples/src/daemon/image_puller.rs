//! kruise-daemon's NodeImage worker (being written).

use super::metrics::DaemonMetrics;
use crate::cri::CriClient;
use crate::shutdown::Shutdown;

/// Runs the worker until `shutdown`.
pub async fn run(_client: kube::Client, _cri: CriClient, _node: String, _metrics: DaemonMetrics, shutdown: Shutdown) {
    shutdown.wait().await;
}
