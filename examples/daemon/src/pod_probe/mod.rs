//! kruise-daemon's prober of custom pod probes (upstream's `pkg/daemon/podprobe`): watches the
//! NodePodProbe named after its node and runs one worker per probe of its spec ([`worker`]): every
//! `periodSeconds` it finds the probed container through CRI (the newest container of that name among
//! those labelled with the pod's UID) and runs the probe ([`probe_action`]: `exec` through CRI
//! `ExecSync`, `tcpSocket` and `httpGet` to the pod's IP), through the thresholds of
//! [`kruise_schedule::pod_probe::prober_state`]. The results ([`results`]) are written to the
//! NodePodProbe's `status.podProbeStatuses` by [`status_writer`], only when the status changes, with a
//! merge patch conditional on the `resourceVersion` read.
//!
//! A worker stops when its probe leaves the spec (or the pod's UID or IP changes); a changed handler
//! sets the probe back to `Unknown`. Nothing is kept across restarts: a restarted daemon reports
//! `Unknown`, then the probes' results again.

pub mod probe_action;
pub mod results;
pub mod status_writer;
pub mod worker;

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Probe;
use kruise_api::apps::v1alpha1::NodePodProbe;
use kruise_runtime::cri::CriClient;
use kruise_runtime::shutdown::Shutdown;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use self::results::{ProbeKey, ResultBoard};

/// A running worker: the channel its probe arrives on, and its task.
struct WorkerHandle {
    probe: watch::Sender<Probe>,
    task: JoinHandle<()>,
}

/// Runs the prober until `shutdown`.
pub async fn run(client: Client, cri: CriClient, node: String, shutdown: Shutdown) {
    let api: Api<NodePodProbe> = Api::all(client);
    let config = watcher::Config::default().fields(&format!("metadata.name={node}"));
    tracing::info!(%node, "watching the NodePodProbe of this node");
    let board = ResultBoard::default();
    let (latest, observed) = watch::channel::<Option<Arc<NodePodProbe>>>(None);
    let writer = tokio::spawn(status_writer::run(
        api.clone(),
        observed,
        board.clone(),
        shutdown.clone(),
    ));
    let mut events = Box::pin(watcher::watcher(api, config).default_backoff());
    let mut workers: HashMap<ProbeKey, WorkerHandle> = HashMap::new();
    loop {
        let event = tokio::select! {
            event = events.next() => event,
            () = shutdown.clone().wait() => None,
        };
        let Some(event) = event else {
            break;
        };
        let current = match event {
            Ok(Event::Apply(probe) | Event::InitApply(probe)) => Some(Arc::new(probe)),
            Ok(Event::Delete(_)) => None,
            Ok(Event::Init | Event::InitDone) => continue,
            Err(error) => {
                tracing::warn!(%error, "watching the NodePodProbe failed");
                continue;
            }
        };
        sync_workers(&mut workers, current.as_deref(), &cri, &board, &shutdown);
        latest.send_replace(current);
    }
    for (_, handle) in workers.drain() {
        handle.task.abort();
    }
    drop(latest);
    let _ = writer.await;
}

/// Starts the workers of the probes in `probe`'s spec, updates those whose probe changed, stops the rest.
fn sync_workers(
    workers: &mut HashMap<ProbeKey, WorkerHandle>,
    probe: Option<&NodePodProbe>,
    cri: &CriClient,
    board: &ResultBoard,
    shutdown: &Shutdown,
) {
    let wanted: HashMap<ProbeKey, &Probe> = probe
        .iter()
        .flat_map(|probe| probe.spec.pod_probes.iter())
        .flat_map(|pod| {
            pod.probes
                .iter()
                .map(move |entry| (ProbeKey::of(pod, entry), &entry.probe))
        })
        .collect();
    workers.retain(|key, handle| {
        let keep = wanted.contains_key(key);
        if !keep {
            tracing::info!(pod = %key.pod_key(), probe = %key.probe, "stopping the probe worker");
            handle.task.abort();
            board.remove(key);
        }
        keep
    });
    for (key, spec) in wanted {
        if let Some(handle) = workers.get(&key) {
            handle.probe.send_if_modified(|current| {
                let changed = current != spec;
                if changed {
                    spec.clone_into(current);
                }
                changed
            });
            continue;
        }
        tracing::info!(pod = %key.pod_key(), probe = %key.probe, container = %key.container, "starting a probe worker");
        let (sender, receiver) = watch::channel(spec.clone());
        let task = tokio::spawn(worker::run(
            key.clone(),
            receiver,
            cri.clone(),
            board.clone(),
            shutdown.clone(),
        ));
        workers.insert(
            key,
            WorkerHandle {
                probe: sender,
                task,
            },
        );
    }
}
