//! The BroadcastJob controller of kruise-manager: observes v1beta1 BroadcastJobs (the storage version),
//! their pods (a watch limited to pods labelled `broadcastjob-controller-uid`) and the nodes, calls the
//! sans-IO [`kruise_schedule::broadcast_job::plan`], and executes it: create the pods (pinned with
//! `spec.nodeName`, named per node so a stale cache cannot create a second pod on a node), delete pods,
//! set `spec.paused` (failurePolicy `Pause`), write the status, record events, delete the job after its
//! TTL, and requeue at the deadline or TTL.
//!
//! ```no_run
//! use kruise_examples::manager::broadcast_job::BroadcastJobController;
//! use kruise_examples::manager::controllers::ControllerSet;
//!
//! let mut controllers = ControllerSet::new();
//! controllers.register(BroadcastJobController);
//! assert_eq!(controllers.names(), ["broadcastjob"]);
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::BroadcastJob;
use kruise_api::keys::broadcastjob::CONTROLLER_UID_LABEL;
use kruise_schedule::broadcast_job::{self, Plan, PlanInput};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, PropagationPolicy};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{Controller, WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};

use super::actions::{self, ActionError};
use super::controllers::{ControllerContext, ControllerError, ControllerFuture, ManagedController};
use super::metrics::ControllerMetrics;

/// The API version the controller reads and owns pods as.
const OWNER_API_VERSION: &str = "apps.kruise.io/v1beta1";

/// The BroadcastJob controller, registered in kruise-manager's
/// [`ControllerSet`](super::controllers::ControllerSet).
#[derive(Clone, Copy, Debug, Default)]
pub struct BroadcastJobController;

impl ManagedController for BroadcastJobController {
    fn name(&self) -> &str {
        "broadcastjob"
    }

    fn run(&self, context: ControllerContext) -> ControllerFuture {
        Box::pin(run(context))
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BroadcastJobError {
    /// A write was refused or conflicted.
    #[error(transparent)]
    Action(#[from] ActionError),
    /// Any other API failure.
    #[error("BroadcastJob {job}: {source}")]
    Api {
        /// `namespace/name`.
        job: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
}

struct Shared {
    client: Client,
    pods: Store<Pod>,
    nodes: Store<Node>,
    recorder: Recorder,
    metrics: ControllerMetrics,
}

async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let client = context.client.clone();
    let (pods, pod_writer) = reflector::store();
    let pod_stream = watcher(
        Api::<Pod>::all(client.clone()),
        watcher::Config::default().labels(CONTROLLER_UID_LABEL),
    )
    .default_backoff()
    .reflect(pod_writer)
    .applied_objects();
    let (nodes, node_writer) = reflector::store();
    let node_stream = watcher(Api::<Node>::all(client.clone()), watcher::Config::default())
        .default_backoff()
        .reflect(node_writer)
        .touched_objects()
        // Heartbeats change nodes every few seconds; only membership and scheduling fields matter.
        .predicate_filter(node_scheduling_fingerprint, Default::default());
    let shared = Arc::new(Shared {
        client: client.clone(),
        pods,
        nodes,
        recorder: Recorder::new(client.clone(), context.reporter.clone()),
        metrics: context.metrics.clone(),
    });
    let controller = Controller::new(
        Api::<BroadcastJob>::all(client.clone()),
        watcher::Config::default(),
    );
    let jobs = controller.store();
    controller
        .owns_stream(pod_stream)
        .watches_stream(node_stream, move |_node: Node| {
            jobs.state()
                .iter()
                .map(|job| ObjectRef::from_obj(job.as_ref()))
                .collect::<Vec<_>>()
        })
        .graceful_shutdown_on(context.shutdown.clone().wait())
        .run(reconcile, error_policy, shared)
        .for_each(|result| {
            if let Err(error) = result
                && !matches!(
                    error,
                    kube::runtime::controller::Error::ReconcilerFailed(..)
                )
            {
                tracing::warn!(%error, "BroadcastJob controller");
            }
            futures::future::ready(())
        })
        .await;
    Ok(())
}

/// A hash of what decides where job pods run: name, labels, taints, unschedulable.
fn node_scheduling_fingerprint(node: &Node) -> Option<u64> {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    node.metadata.name.hash(&mut hasher);
    node.metadata.labels.hash(&mut hasher);
    if let Some(spec) = &node.spec {
        spec.unschedulable.hash(&mut hasher);
        for taint in spec.taints.iter().flatten() {
            (&taint.key, &taint.value, &taint.effect).hash(&mut hasher);
        }
    }
    Some(hasher.finish())
}

fn key(job: &BroadcastJob) -> String {
    format!("{}/{}", job.namespace().unwrap_or_default(), job.name_any())
}

async fn reconcile(
    job: Arc<BroadcastJob>,
    shared: Arc<Shared>,
) -> Result<Action, BroadcastJobError> {
    let started = Instant::now();
    let result = reconcile_job(&job, &shared).await;
    shared
        .metrics
        .observe_reconcile(started.elapsed(), result.is_ok());
    result
}

async fn reconcile_job(job: &BroadcastJob, shared: &Shared) -> Result<Action, BroadcastJobError> {
    if job.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let namespace = job.namespace().unwrap_or_default();
    let pods: Vec<Pod> = shared
        .pods
        .state()
        .iter()
        .filter(|pod| {
            pod.namespace().as_deref() == Some(namespace.as_str())
                && pod.labels().get(CONTROLLER_UID_LABEL) == Some(&uid)
        })
        .map(|pod| (**pod).clone())
        .collect();
    let nodes: Vec<Node> = shared
        .nodes
        .state()
        .iter()
        .map(|node| (**node).clone())
        .collect();
    let plan = broadcast_job::plan(&PlanInput::new(job, &pods, &nodes, Timestamp::now()));
    execute(job, &plan, shared).await?;
    Ok(plan
        .requeue_after
        .map_or_else(Action::await_change, Action::requeue))
}

async fn execute(
    job: &BroadcastJob,
    plan: &Plan,
    shared: &Shared,
) -> Result<(), BroadcastJobError> {
    let namespace = job.namespace().unwrap_or_default();
    let jobs: Api<BroadcastJob> = Api::namespaced(shared.client.clone(), &namespace);
    let api_error = |source| BroadcastJobError::Api {
        job: key(job),
        source,
    };
    if plan.delete_job {
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        match jobs.delete(&job.name_any(), &params).await {
            Ok(_) => tracing::info!(job = %key(job), "deleted after ttlSecondsAfterFinished"),
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(api_error(error)),
        }
        return Ok(());
    }
    let pods: Api<Pod> = Api::namespaced(shared.client.clone(), &namespace);
    for node in &plan.create_on {
        let pod = broadcast_job::new_pod(job, node, OWNER_API_VERSION);
        match pods.create(&PostParams::default(), &pod).await {
            Ok(created) => {
                tracing::info!(job = %key(job), pod = %created.name_any(), %node, "created pod");
            }
            // The pod of this node exists already (the cache had not seen it yet).
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(error) => {
                publish(
                    shared,
                    job,
                    true,
                    "FailedCreate",
                    &format!("pod on node {node}: {error}"),
                )
                .await;
                return Err(api_error(error));
            }
        }
    }
    for name in &plan.delete {
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        match pods.delete(name, &params).await {
            Ok(_) => tracing::info!(job = %key(job), pod = %name, "deleted pod"),
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(api_error(error)),
        }
    }
    for event in &plan.events {
        publish(shared, job, event.warning, event.reason, &event.message).await;
    }
    if plan.pause {
        let patch = serde_json::json!({"spec": {"paused": true}});
        jobs.patch(
            &job.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
        .map_err(api_error)?;
    }
    if job.status.as_ref() != Some(&plan.status) {
        actions::replace_status(&jobs, job, &plan.status).await?;
    }
    Ok(())
}

async fn publish(shared: &Shared, job: &BroadcastJob, warning: bool, reason: &str, message: &str) {
    let event = Event {
        type_: if warning {
            EventType::Warning
        } else {
            EventType::Normal
        },
        reason: reason.to_owned(),
        note: Some(message.to_owned()),
        action: reason.to_owned(),
        secondary: None,
    };
    if let Err(error) = shared.recorder.publish(&event, &job.object_ref(&())).await {
        tracing::debug!(%error, job = %key(job), "recording an event failed");
    }
}

#[allow(clippy::needless_pass_by_value)] // kube-runtime's error policy signature
fn error_policy(job: Arc<BroadcastJob>, error: &BroadcastJobError, _: Arc<Shared>) -> Action {
    tracing::warn!(job = %key(&job), %error, "BroadcastJob reconcile failed");
    match error {
        BroadcastJobError::Action(action) => Action::requeue(action.requeue_after()),
        BroadcastJobError::Api { .. } => Action::requeue(Duration::from_secs(5)),
    }
}
