//! kruise-daemon's ContainerRecreateRequest worker: watches the active requests of its node
//! (`crr.apps.kruise.io/node-name=<node>,crr.apps.kruise.io/active=true`), and per pod runs the pure state
//! machine of [`kruise_lifecycle::container_recreate::daemon`]: it observes the pod's containers through CRI
//! (converted by [`kruise_runtime::cri::view::pod_view`]; found by kubelet's pod-UID label, so containers of other
//! pods are never looked at or touched; containers whose runtime labels name another pod than the request's
//! `namespace/spec.podName` make it refused, see [`super::pod_identity`]), executes the one kill decided per pass ([`super::kill`]), and writes
//! the request's status with its `resourceVersion` (a conflict means a newer request: decide again). A kill
//! records itself in the status between the preStop hook and the stop ([`super::recorded_kill`]), so a
//! daemon started again after dying mid-kill never stops a container twice (see the crate's "Restart and
//! resume"). While a request is being worked on it is looked at again every second (the runtime sends no
//! events).

use kruise_runtime::actions::{is_conflict, is_not_found};
use kruise_runtime::harness::{self, Driver, Retry, object_key};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_cri::v1 as cri;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{
    ContainerRecreateRequest, ContainerRecreateRequestContainerRecreateState as RecreateState,
};
use kruise_api::keys::crr as keys;
use kruise_lifecycle::container_recreate::daemon::{
    Decision, Step, before_manage, decide, kill_still_applies, pick,
};
use kruise_lifecycle::container_recreate::runtime_view::PodView;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::Store;
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use tokio::sync::OnceCell;

use super::kill::{needs_pod_ip, run_pre_stop, stop_container};
use super::metrics::DaemonMetrics;
use super::pod_address::{self, PodIp};
use super::pod_identity;
use super::recorded_kill::{KillOutcome, KillSteps, kill_in_order};
use kruise_runtime::cri::view::pod_view;
use kruise_runtime::cri::{CriClient, CriError, labels};
use kruise_runtime::shutdown::Shutdown;

/// How often a request being worked on is looked at again.
pub const POLL: Duration = Duration::from_secs(1);

/// Why one pass failed (retried after a second).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CrrWorkerError {
    /// The runtime could not be asked.
    #[error("ContainerRecreateRequest {crr}: {source}")]
    Runtime {
        /// `namespace/name`.
        crr: String,
        /// The failure.
        #[source]
        source: CriError,
    },
    /// A status write failed.
    #[error("ContainerRecreateRequest {crr}: writing status: {source}")]
    Kube {
        /// `namespace/name`.
        crr: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
}

struct Context {
    client: Client,
    cri: CriClient,
    node: String,
    store: Store<ContainerRecreateRequest>,
    runtime_name: OnceCell<String>,
    pod_locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    metrics: DaemonMetrics,
}

/// The label selector of the requests a daemon on `node` works on.
#[must_use]
pub fn selector(node: &str) -> String {
    format!(
        "{}={node},{}=true",
        keys::NODE_NAME_LABEL,
        keys::ACTIVE_LABEL
    )
}

/// Runs the worker until `shutdown`.
pub async fn run(
    client: Client,
    cri: CriClient,
    node: String,
    metrics: DaemonMetrics,
    shutdown: Shutdown,
) {
    let api: Api<ContainerRecreateRequest> = Api::all(client.clone());
    let config = watcher::Config::default().labels(&selector(&node));
    let controller = Controller::new(api, config);
    let driver = Driver::new("container-recreate", metrics.worker("crr"), shutdown);
    let context = Arc::new(Context {
        client,
        cri,
        node,
        store: controller.store(),
        runtime_name: OnceCell::new(),
        pod_locks: Mutex::new(HashMap::new()),
        metrics,
    });
    tracing::info!(node = %context.node, selector = %selector(&context.node), "watching ContainerRecreateRequests");
    harness::drive_with(controller, driver, reconcile, context, |_| {}).await;
}

fn pod_uid(crr: &ContainerRecreateRequest) -> String {
    crr.labels()
        .get(keys::POD_UID_LABEL)
        .cloned()
        .unwrap_or_default()
}

/// A failed pass is tried again after [`POLL`]; a status write on a stale read (409) is decided again.
impl Retry for CrrWorkerError {
    fn retry_after(&self) -> Duration {
        POLL
    }

    fn is_conflict(&self) -> bool {
        matches!(self, Self::Kube { source, .. } if is_conflict(source))
    }
}

async fn reconcile(
    trigger: Arc<ContainerRecreateRequest>,
    context: Arc<Context>,
) -> Result<Action, CrrWorkerError> {
    let uid = pod_uid(&trigger);
    if uid.is_empty() {
        return Ok(Action::await_change());
    }
    let lock = {
        let mut locks = context
            .pod_locks
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Arc::clone(locks.entry(uid.clone()).or_default())
    };
    let _held = lock.lock().await;
    let namespace = trigger.namespace().unwrap_or_default();
    let requests: Vec<Arc<ContainerRecreateRequest>> = context
        .store
        .state()
        .into_iter()
        .filter(|crr| pod_uid(crr) == uid && crr.namespace().as_deref() == Some(namespace.as_str()))
        .collect();
    let refs: Vec<&ContainerRecreateRequest> = requests.iter().map(AsRef::as_ref).collect();
    let chosen = pick(&refs);
    for index in &chosen.to_pending {
        if let Some(crr) = refs.get(*index) {
            write_status(&context, crr, json!({"phase": "Pending"})).await?;
        }
    }
    let Some(crr) = chosen.picked.and_then(|index| refs.get(index)).copied() else {
        context
            .pod_locks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&uid);
        return Ok(Action::await_change());
    };
    sync(&context, crr).await
}

async fn sync(context: &Context, crr: &ContainerRecreateRequest) -> Result<Action, CrrWorkerError> {
    match before_manage(crr, Timestamp::now()) {
        Step::StartRecreating => {
            tracing::info!(crr = %object_key(crr), "recreating containers");
            write_status(context, crr, json!({"phase": "Recreating"})).await?;
            return Ok(Action::requeue(Duration::from_millis(100)));
        }
        Step::WaitForUnreadyAcquired => return Ok(Action::requeue(POLL)),
        Step::WaitForGrace(wait) => return Ok(Action::requeue(wait.min(Duration::from_secs(60)))),
        Step::Complete(message) => {
            complete(context, crr, &message).await?;
            return Ok(Action::await_change());
        }
        Step::Manage => {}
    }
    let runtime = |source| CrrWorkerError::Runtime {
        crr: object_key(crr),
        source,
    };
    let containers = context
        .cri
        .list_containers(labels::pod_filter(&pod_uid(crr)))
        .await
        .map_err(runtime)?;
    if let Some(mismatch) = pod_identity::mismatch(crr, &containers) {
        tracing::warn!(crr = %object_key(crr), %mismatch, "refused");
        refuse(context, crr, &mismatch).await?;
        return Ok(Action::await_change());
    }
    let view = observe(context, &containers).await.map_err(runtime)?;
    let mut kill_errors = BTreeMap::new();
    // The request as this pass last wrote it (a kill's record): later writes of the pass go on it.
    let mut recorded: Option<ContainerRecreateRequest> = None;
    loop {
        let target = recorded.as_ref().unwrap_or(crr);
        match decide(crr, &view, &kill_errors, Timestamp::now()) {
            Decision::Complete(message) => {
                complete(context, target, &message).await?;
                return Ok(Action::await_change());
            }
            Decision::Patch(states) => {
                write_states(context, target, &states).await?;
                return Ok(Action::requeue(POLL));
            }
            Decision::Wait(after) => return Ok(Action::requeue(after.unwrap_or(POLL).min(POLL))),
            Decision::Kill {
                name,
                container_id,
                states_if_killed,
            } => {
                let pod_ip = if needs_pod_ip(crr, &name) {
                    pod_address::lookup(&context.cri, &pod_uid(crr))
                        .await
                        .map_err(runtime)?
                } else {
                    PodIp::Unknown(
                        "not looked up: the hook names its host or is not HTTP/TCP".into(),
                    )
                };
                let mut steps = WorkerKill {
                    context,
                    crr: target,
                    container: &name,
                    container_id: &container_id,
                    pod_ip: &pod_ip,
                    states: &states_if_killed,
                };
                match kill_in_order(&mut steps).await? {
                    KillOutcome::Stopped(_) => {
                        context.metrics.kill(true);
                        tracing::info!(crr = %object_key(crr), container = %name, id = %container_id, "killed container");
                        return Ok(Action::requeue(POLL));
                    }
                    KillOutcome::NotRecorded => {
                        tracing::info!(crr = %object_key(crr), container = %name, "the request changed before the stop was recorded: not stopped, deciding again");
                        return Ok(Action::requeue(POLL));
                    }
                    KillOutcome::StopFailed {
                        recorded: written,
                        error,
                    } => {
                        context.metrics.kill(false);
                        tracing::warn!(crr = %object_key(crr), container = %name, %error, "killing the container failed");
                        recorded = Some(written);
                        kill_errors.insert(name, error);
                    }
                }
            }
        }
    }
}

/// One kill as the worker performs it ([`kill_in_order`]): the hook and the stop through CRI, the record
/// written on `crr`'s version of the request.
struct WorkerKill<'a> {
    context: &'a Context,
    crr: &'a ContainerRecreateRequest,
    container: &'a str,
    container_id: &'a str,
    pod_ip: &'a PodIp,
    states: &'a [RecreateState],
}

impl KillSteps for WorkerKill<'_> {
    type Recorded = ContainerRecreateRequest;
    type Error = CrrWorkerError;

    async fn pre_stop(&mut self) -> Option<Duration> {
        run_pre_stop(
            &self.context.cri,
            self.crr,
            self.container,
            self.container_id,
            self.pod_ip,
        )
        .await
    }

    async fn record(&mut self) -> Result<Option<ContainerRecreateRequest>, CrrWorkerError> {
        record_kill(self.context, self.crr, self.states).await
    }

    async fn stop(&mut self, hook_took: Option<Duration>) -> Result<(), String> {
        stop_container(&self.context.cri, self.crr, self.container_id, hook_took).await
    }
}

/// How many times a kill's record is written again on a newer version of the request after a conflict.
pub const RECORD_ATTEMPTS: u32 = 5;

/// Writes `states` (the record of a kill) on `crr`, conditional on its `resourceVersion`. On a conflict the
/// request is read again and the record written on that version while the kill still applies to it
/// ([`kill_still_applies`]; kruise-manager writes the same request, e.g. its container snapshot). The
/// request as written, or `None` when the kill no longer applies or the request is gone.
async fn record_kill(
    context: &Context,
    crr: &ContainerRecreateRequest,
    states: &[RecreateState],
) -> Result<Option<ContainerRecreateRequest>, CrrWorkerError> {
    let api: Api<ContainerRecreateRequest> =
        Api::namespaced(context.client.clone(), &crr.namespace().unwrap_or_default());
    let kube_error = |source| CrrWorkerError::Kube {
        crr: object_key(crr),
        source,
    };
    let name = crr.name_any();
    let mut version = crr.resource_version();
    for _ in 0..RECORD_ATTEMPTS {
        let patch = json!({
            "metadata": {"resourceVersion": version},
            "status": {"containerRecreateStates": states},
        });
        match api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(written) => return Ok(Some(written)),
            Err(error) if is_not_found(&error) => return Ok(None),
            Err(error) if is_conflict(&error) => {
                let Some(current) = api.get_opt(&name).await.map_err(kube_error)? else {
                    return Ok(None);
                };
                if !kill_still_applies(crr, &current) {
                    return Ok(None);
                }
                version = current.resource_version();
            }
            Err(source) => return Err(kube_error(source)),
        }
    }
    Ok(None)
}

/// The runtime's view of `containers` (those of the request's pod).
async fn observe(context: &Context, containers: &[cri::Container]) -> Result<PodView, CriError> {
    let runtime = context
        .runtime_name
        .get_or_try_init(|| async { context.cri.version().await.map(|v| v.runtime_name) })
        .await?
        .clone();
    let mut statuses = HashMap::new();
    for container in containers {
        match context.cri.container_status(&container.id).await {
            Ok(status) => {
                statuses.insert(container.id.clone(), status);
            }
            Err(error) if error.is_not_found() => {}
            Err(error) => return Err(error),
        }
    }
    Ok(pod_view(&runtime, containers, &statuses))
}

/// Completes a request whose pod-UID label points at another pod than the one it names: every container
/// failed with `message`, nothing killed.
async fn refuse(
    context: &Context,
    crr: &ContainerRecreateRequest,
    message: &str,
) -> Result<(), CrrWorkerError> {
    let states = pod_identity::refused_states(crr, message);
    write_status(
        context,
        crr,
        json!({"phase": "Completed", "completionTime": completion_time(), "message": message,
               "containerRecreateStates": states}),
    )
    .await
}

fn completion_time() -> Time {
    Time(Timestamp::from_second(Timestamp::now().as_second()).unwrap_or_else(|_| Timestamp::now()))
}

async fn write_states(
    context: &Context,
    crr: &ContainerRecreateRequest,
    states: &[RecreateState],
) -> Result<(), CrrWorkerError> {
    write_status(context, crr, json!({"containerRecreateStates": states})).await
}

async fn complete(
    context: &Context,
    crr: &ContainerRecreateRequest,
    message: &str,
) -> Result<(), CrrWorkerError> {
    let now = completion_time();
    tracing::info!(crr = %object_key(crr), message, "completed");
    write_status(
        context,
        crr,
        json!({"phase": "Completed", "completionTime": now, "message": message}),
    )
    .await
}

/// A merge patch of the status guarded by the request's `resourceVersion`.
async fn write_status(
    context: &Context,
    crr: &ContainerRecreateRequest,
    status: serde_json::Value,
) -> Result<(), CrrWorkerError> {
    let api: Api<ContainerRecreateRequest> =
        Api::namespaced(context.client.clone(), &crr.namespace().unwrap_or_default());
    let patch = json!({
        "metadata": {"resourceVersion": crr.resource_version()},
        "status": status,
    });
    match api
        .patch_status(
            &crr.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        Ok(_) => Ok(()),
        // A newer version exists (or it is gone): the watch brings it and the next pass decides again.
        Err(error) if is_conflict(&error) || is_not_found(&error) => Ok(()),
        Err(source) => Err(CrrWorkerError::Kube {
            crr: object_key(crr),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_selector_names_the_node_and_active_requests() {
        assert_eq!(
            selector("node-1"),
            "crr.apps.kruise.io/node-name=node-1,crr.apps.kruise.io/active=true"
        );
    }
}
