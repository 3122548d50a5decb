//! Writes the NodePodProbe's `status.podProbeStatuses` from the kept results
//! ([`kruise_schedule::pod_probe::probe_status::status`]) whenever a result or the NodePodProbe changes,
//! only when the status differs from the one the watch shows, with a merge patch conditional on that
//! copy's `resourceVersion`. A conflict waits for the newer copy, which the watch delivers; another
//! failure is tried again after a second.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1alpha1::{NodePodProbe, NodePodProbeStatus};
use kruise_runtime::actions::{self, ActionError};
use kruise_runtime::shutdown::Shutdown;
use kruise_schedule::pod_probe::probe_status::status;
use kube::Api;
use serde_json::json;
use tokio::sync::watch;

use super::results::ResultBoard;

/// How long a failed write waits before the next attempt.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Runs until `shutdown` or until the watch side goes away.
pub async fn run(
    api: Api<NodePodProbe>,
    mut observed: watch::Receiver<Option<Arc<NodePodProbe>>>,
    board: ResultBoard,
    shutdown: Shutdown,
) {
    let mut retry = false;
    loop {
        tokio::select! {
            () = board.changed() => {}
            changed = observed.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            () = tokio::time::sleep(RETRY_AFTER), if retry => {}
            () = shutdown.clone().wait() => return,
        }
        let current = observed.borrow_and_update().clone();
        let Some(probe) = current else {
            retry = false;
            continue;
        };
        retry = write(&api, &probe, &board).await;
    }
}

/// Writes the status when it changed; whether to try again after [`RETRY_AFTER`].
async fn write(api: &Api<NodePodProbe>, probe: &NodePodProbe, board: &ResultBoard) -> bool {
    let wanted = status(probe, &board.snapshot(), Timestamp::now());
    let unset = NodePodProbeStatus::default();
    if probe.status.as_ref().unwrap_or(&unset) == &wanted {
        return false;
    }
    let fields = json!({"podProbeStatuses": wanted.pod_probe_statuses});
    match actions::merge_status(api, probe, &fields).await {
        Ok(_) => {
            tracing::debug!(node = ?probe.metadata.name, "wrote the probe results");
            false
        }
        // A newer copy exists (the watch delivers it and the status is decided again then), or the
        // NodePodProbe is gone.
        Err(ActionError::Conflict { .. } | ActionError::NotFound { .. }) => false,
        Err(error) => {
            tracing::warn!(%error, "writing the NodePodProbe status failed");
            true
        }
    }
}
