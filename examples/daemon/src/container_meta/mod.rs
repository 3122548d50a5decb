//! kruise-daemon's container meta worker (upstream `pkg/daemon/containermeta`, gate `DaemonWatchingPod`):
//! watches the pods bound to its node (`spec.nodeName=<node>`) and, for those controlled by an
//! `apps.kruise.io` workload or injected by a SidecarSet, reports what the runtime runs in the pod annotation
//! `apps.kruise.io/runtime-containers-meta` (written through `pods/status`, only when it changes), which
//! kruise-manager's in-place update reads to tell that a container was recreated with the new spec.
//!
//! The decisions are [`kruise_inplace::runtime_meta`]'s; this worker reads the runtime ([`observe`]: the
//! newest incarnation of each container, kubelet's hash annotation, and `env` run inside a running container
//! whose env reads pod labels or annotations) and acts: while an in-place update is in progress
//! (`InPlaceUpdateReady=False`) it stops each running container whose env from metadata no longer matches the
//! pod's labels and annotations (gate `InPlaceUpdateEnvFromMetadata`), so kubelet creates it again with the
//! new values. A container is stopped with a 2 s grace period and no preStop hook, as upstream's restarter
//! does; an `env` that cannot run is tried again after 3 s.

pub mod gates;
pub mod observe;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_api::inplace::RuntimeContainerMetaSet;
use kruise_api::keys::inplace::RUNTIME_CONTAINERS_META_ANNOTATION;
use kruise_inplace::runtime_meta::{self, current_env_hash};
use kruise_inplace::state::read_runtime_meta;
use kruise_runtime::actions::{is_conflict, is_not_found};
use kruise_runtime::cri::{CriClient, CriError};
use kruise_runtime::harness::{self, Driver, Retry, object_key};
use kruise_runtime::shutdown::Shutdown;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use tokio::sync::OnceCell;

pub use self::gates::ContainerMetaGates;
use super::metrics::DaemonMetrics;

/// The grace period of a container stopped because its env from metadata changed (upstream's restarter
/// kills without a pod, so with kubelet's minimum grace period).
pub const RESTART_GRACE_SECONDS: i64 = 2;

/// When a pod whose container env could not be read is looked at again.
pub const ENV_RETRY: Duration = Duration::from_secs(3);

/// Why one pass failed (retried after a second).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ContainerMetaError {
    /// The runtime could not be asked, or refused a stop.
    #[error("pod {pod}: {source}")]
    Runtime {
        /// `namespace/name`.
        pod: String,
        /// The failure.
        #[source]
        source: CriError,
    },
    /// The annotation could not be written.
    #[error("pod {pod}: writing {RUNTIME_CONTAINERS_META_ANNOTATION}: {source}")]
    Kube {
        /// `namespace/name`.
        pod: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
}

impl Retry for ContainerMetaError {
    fn retry_after(&self) -> Duration {
        Duration::from_secs(1)
    }

    fn is_conflict(&self) -> bool {
        matches!(self, Self::Kube { source, .. } if is_conflict(source))
    }
}

struct Context {
    client: Client,
    cri: CriClient,
    node: String,
    gates: ContainerMetaGates,
    runtime_name: OnceCell<String>,
    kubelet_version: OnceCell<String>,
}

/// The field selector of the pods a daemon on `node` watches.
#[must_use]
pub fn selector(node: &str) -> String {
    format!("spec.nodeName={node}")
}

/// Runs the worker until `shutdown` (at once when `DaemonWatchingPod` is off).
pub async fn run(
    client: Client,
    cri: CriClient,
    node: String,
    gates: ContainerMetaGates,
    metrics: DaemonMetrics,
    shutdown: Shutdown,
) {
    if !gates.daemon_watching_pod {
        tracing::info!("DaemonWatchingPod is off: no container meta reported");
        return;
    }
    let api: Api<Pod> = Api::all(client.clone());
    let controller = Controller::new(api, watcher::Config::default().fields(&selector(&node)));
    let driver = Driver::new("container-meta", metrics.worker("container-meta"), shutdown);
    tracing::info!(%node, "watching the node's pods for container meta");
    let context = Arc::new(Context {
        client,
        cri,
        node,
        gates,
        runtime_name: OnceCell::new(),
        kubelet_version: OnceCell::new(),
    });
    harness::drive_with(controller, driver, reconcile, context, |_| {}).await;
}

/// The node's kubelet version (`status.nodeInfo.kubeletVersion`), read once; empty when unreadable (the
/// older hash generation is then assumed).
async fn kubelet_version(context: &Context) -> String {
    context
        .kubelet_version
        .get_or_init(|| async {
            let nodes: Api<Node> = Api::all(context.client.clone());
            match nodes.get(&context.node).await {
                Ok(node) => node
                    .status
                    .and_then(|status| status.node_info)
                    .map(|info| info.kubelet_version)
                    .unwrap_or_default(),
                Err(error) => {
                    tracing::warn!(node = %context.node, %error, "cannot read the node's kubelet version");
                    String::new()
                }
            }
        })
        .await
        .clone()
}

fn has_running_container_id(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|status| status.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .any(|status| {
            status
                .container_id
                .as_deref()
                .is_some_and(|id| !id.is_empty())
        })
}

async fn reconcile(pod: Arc<Pod>, context: Arc<Context>) -> Result<Action, ContainerMetaError> {
    if pod.metadata.deletion_timestamp.is_some()
        || !runtime_meta::is_reported(&pod)
        || !has_running_container_id(&pod)
    {
        return Ok(Action::await_change());
    }
    let key = object_key(pod.as_ref());
    let runtime_error = |source| ContainerMetaError::Runtime {
        pod: key.clone(),
        source,
    };
    let runtime = context
        .runtime_name
        .get_or_try_init(|| async { context.cri.version().await.map(|v| v.runtime_name) })
        .await
        .map_err(runtime_error)?
        .clone();
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let observed = observe::observe(&context.cri, &runtime, &uid)
        .await
        .map_err(runtime_error)?;
    let previous = read_runtime_meta(&pod).unwrap_or_else(|error| {
        tracing::warn!(pod = %key, %error, "ignoring an unreadable container meta annotation");
        None
    });
    let version = kubelet_version(&context).await;
    let env_gate = context.gates.in_place_update_env_from_metadata;
    let mut plan = runtime_meta::plan(&pod, &observed, previous.as_ref(), &version, env_gate);
    let mut next = Action::await_change();
    let containers = pod
        .spec
        .as_ref()
        .map(|spec| spec.containers.as_slice())
        .unwrap_or_default();
    for index in plan.read_env.clone() {
        let Some(meta) = plan.set.containers.get_mut(index) else {
            continue;
        };
        let Some(spec) = containers.iter().find(|c| c.name == meta.name) else {
            continue;
        };
        match observe::running_env(&context.cri, &meta.container_id).await {
            Ok(env) => meta.hashes.extracted_env_from_metadata_hash = current_env_hash(spec, &env),
            Err(error) => {
                tracing::warn!(pod = %key, container = %meta.name, %error, "cannot read the container's env; trying again");
                next = Action::requeue(ENV_RETRY);
            }
        }
    }
    if env_gate {
        for id in runtime_meta::restarts(&pod, &plan.set, &observed) {
            let bare = id.split_once("://").map_or(id.as_str(), |(_, bare)| bare);
            match context
                .cri
                .stop_container(bare, RESTART_GRACE_SECONDS)
                .await
            {
                Ok(()) => {
                    tracing::info!(pod = %key, container = %id, "stopped a container whose env from pod metadata changed");
                }
                Err(error) if error.is_not_found() => {}
                Err(error) => return Err(runtime_error(error)),
            }
        }
    }
    report(&context, &pod, previous.as_ref(), &plan.set).await?;
    Ok(next)
}

/// Writes the annotation when it differs from what the pod has.
async fn report(
    context: &Context,
    pod: &Pod,
    previous: Option<&RuntimeContainerMetaSet>,
    set: &RuntimeContainerMetaSet,
) -> Result<(), ContainerMetaError> {
    if previous == Some(set) {
        return Ok(());
    }
    let key = object_key(pod);
    let value = serde_json::to_string(set).unwrap_or_default();
    let patch = json!({"metadata": {"annotations": {RUNTIME_CONTAINERS_META_ANNOTATION: value}}});
    let pods: Api<Pod> =
        Api::namespaced(context.client.clone(), &pod.namespace().unwrap_or_default());
    match pods
        .patch_status(
            &pod.name_any(),
            &PatchParams::default(),
            &Patch::Strategic(&patch),
        )
        .await
    {
        Ok(_) => {
            tracing::info!(pod = %key, meta = %value, "reported container meta");
            Ok(())
        }
        Err(error) if is_not_found(&error) => Ok(()),
        Err(source) => Err(ContainerMetaError::Kube { pod: key, source }),
    }
}
