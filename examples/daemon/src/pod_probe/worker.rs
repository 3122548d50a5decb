//! One probe worker: every `periodSeconds` it looks the probed container up through CRI, lets
//! [`ProbeWorker`] decide what to report and whether to probe, runs the probe ([`probe_action`]) and hands
//! the reports to the [`ResultBoard`]. A new probe on its channel wakes it at once; a changed handler
//! sets the result back to `Unknown` (upstream's `updateProbeSpec`).

use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::Probe;
use k8s_openapi::jiff::Timestamp;
use kruise_runtime::cri::{CriClient, labels};
use kruise_runtime::shutdown::Shutdown;
use kruise_schedule::pod_probe::prober_state::{ContainerSeen, ProbeSettings, ProbeWorker};
use tokio::sync::watch;

use super::probe_action;
use super::results::{ProbeKey, ResultBoard};

/// The probed container as the runtime shows it.
struct Found {
    id: String,
    running: bool,
    started_at: Timestamp,
}

/// Runs the worker of `key` until `shutdown` (or until its task is aborted).
pub async fn run(
    key: ProbeKey,
    mut probe: watch::Receiver<Probe>,
    cri: CriClient,
    board: ResultBoard,
    shutdown: Shutdown,
) {
    let mut worker = ProbeWorker::default();
    let mut handler = probe.borrow_and_update().clone();
    loop {
        let settings = ProbeSettings::of(&handler);
        let found = find_container(&cri, &key).await;
        let seen = found.as_ref().map(|found| ContainerSeen {
            id: &found.id,
            name: &key.container,
            running: found.running,
            started_at: found.started_at,
        });
        let step = worker.observe(seen.as_ref(), &settings, Timestamp::now());
        for report in step.reports {
            board.record(&key, report, Timestamp::now());
        }
        if let (true, Some(found)) = (step.probe, found.as_ref()) {
            match probe_action::run(&cri, &handler, &found.id, &key.ip, settings.timeout).await {
                Ok((state, message)) => {
                    if let Some(report) = worker.outcome(state, message, &settings) {
                        board.record(&key, report, Timestamp::now());
                    }
                }
                Err(error) => {
                    tracing::warn!(pod = %key.pod_key(), probe = %key.probe, %error, "the probe could not run");
                }
            }
        }
        tokio::select! {
            () = tokio::time::sleep(settings.period) => {}
            changed = probe.changed() => {
                if changed.is_err() {
                    return;
                }
                let next = probe.borrow_and_update().clone();
                if handlers_differ(&handler, &next)
                    && let Some(report) = worker.handler_changed()
                {
                    board.record(&key, report, Timestamp::now());
                }
                handler = next;
            }
            () = shutdown.clone().wait() => return,
        }
    }
}

/// Whether the handlers (exec, httpGet, tcpSocket, grpc) of two probes differ (timings aside).
fn handlers_differ(old: &Probe, new: &Probe) -> bool {
    old.exec != new.exec
        || old.http_get != new.http_get
        || old.tcp_socket != new.tcp_socket
        || old.grpc != new.grpc
}

/// The newest container named `key.container` among the pod's, with its state and start; `None` when
/// there is none or the runtime does not answer (logged).
async fn find_container(cri: &CriClient, key: &ProbeKey) -> Option<Found> {
    let containers = match cri.list_containers(labels::pod_filter(&key.uid)).await {
        Ok(containers) => containers,
        Err(error) => {
            tracing::warn!(pod = %key.pod_key(), %error, "listing the pod's containers failed");
            return None;
        }
    };
    let newest = containers
        .into_iter()
        .filter(|container| {
            container
                .metadata
                .as_ref()
                .is_some_and(|metadata| metadata.name == key.container)
        })
        .max_by_key(|container| container.created_at)?;
    let status = match cri.container_status(&newest.id).await {
        Ok(status) => status,
        Err(error) => {
            tracing::debug!(pod = %key.pod_key(), %error, "the container's status failed");
            return None;
        }
    };
    Some(Found {
        running: status.state == i32::from(cri::ContainerState::ContainerRunning),
        started_at: Timestamp::from_nanosecond(i128::from(status.started_at)).unwrap_or_default(),
        id: newest.id,
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ExecAction;

    use super::*;

    #[test]
    fn only_handler_changes_count() {
        let exec = |command: &str| Probe {
            exec: Some(ExecAction {
                command: Some(vec![command.to_owned()]),
            }),
            ..Probe::default()
        };
        let slower = Probe {
            period_seconds: Some(30),
            ..exec("true")
        };
        assert!(!handlers_differ(&exec("true"), &slower));
        assert!(handlers_differ(&exec("true"), &exec("false")));
    }
}
