//! The BroadcastJob controller of kruise-manager: observes v1beta1 BroadcastJobs (the storage version),
//! their pods (a watch limited to pods labelled `broadcastjob-controller-uid`) and the nodes, calls the
//! sans-IO [`kruise_schedule::broadcast_job::plan`], and executes it: create the pods (pinned with
//! `spec.nodeName`, named per node so a stale cache cannot create a second pod on a node), delete pods,
//! set `spec.paused` (failurePolicy `Pause`), write the status, record events, delete the job after its
//! TTL, and requeue at the deadline or TTL.
//!
//! ```no_run
//! use kruise_manager::broadcast_job::BroadcastJobController;
//! use kruise_runtime::controllers::ControllerSet;
//!
//! let mut controllers = ControllerSet::new();
//! controllers.register(BroadcastJobController);
//! assert_eq!(controllers.names(), ["broadcastjob"]);
//! ```

use kruise_runtime::actions::{is_conflict, is_not_found};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::BroadcastJob;
use kruise_api::keys::broadcastjob::CONTROLLER_UID_LABEL;
use kruise_runtime::events::{EventRecord, EventSink};
use kruise_runtime::{Change, Indexed};
use kruise_schedule::broadcast_job::{self, Plan, PlanInput};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, PropagationPolicy};
use kube::runtime::Controller;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client, ResourceExt};

use super::actions::{self, ActionError};
use super::controllers::{ControllerContext, ControllerError, ControllerFuture, ManagedController};
use kruise_runtime::harness::{self, Retry, object_key};

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
    /// The pods of the informer, by the `controller-uid` label.
    pods: Indexed<Pod>,
    nodes: Store<Node>,
    events: EventSink,
}

impl Retry for BroadcastJobError {
    fn retry_after(&self) -> Duration {
        match self {
            Self::Action(action) => action.requeue_after(),
            Self::Api { .. } => Duration::from_secs(5),
        }
    }

    fn is_conflict(&self) -> bool {
        matches!(self, Self::Action(ActionError::Conflict { .. }))
    }
}

async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let client = context.client.clone();
    let pod_informer = context.informers.get::<Pod>();
    let pods = pod_informer.index(
        "broadcastjob-controller-uid",
        Arc::new(|pod: &Pod| {
            pod.labels()
                .get(CONTROLLER_UID_LABEL)
                .cloned()
                .into_iter()
                .collect()
        }),
    );
    let node_informer = context.informers.get::<Node>();
    let nodes = node_informer.store();
    // Heartbeats change nodes every few seconds; only membership and scheduling fields matter.
    let mut fingerprints = HashMap::new();
    let node_stream = node_informer.subscribe().filter_map(move |change| {
        let node = match change {
            Change::Applied(node) => {
                let fingerprint = node_scheduling_fingerprint(&node);
                (fingerprints.insert(node.name_any(), fingerprint) != Some(fingerprint))
                    .then_some(node)
            }
            Change::Deleted(node) => {
                fingerprints.remove(&node.name_any());
                Some(node)
            }
            Change::Listed => None,
        };
        futures::future::ready(node)
    });
    let shared = Arc::new(Shared {
        client: client.clone(),
        pods,
        nodes,
        events: context.event_sink("kruise-manager"),
    });
    let job_informer = context.informers.get::<BroadcastJob>();
    let jobs = job_informer.store();
    let Some(store) = harness::synced_store(&job_informer, &context).await else {
        return Ok(());
    };
    let controller = Controller::for_shared_stream(job_informer.applied(), store)
        .owns_shared_stream(pod_informer.objects())
        .watches_shared_stream(node_stream, move |_node: Arc<Node>| {
            jobs.state()
                .iter()
                .map(|job| ObjectRef::from_obj(job.as_ref()))
                .collect::<Vec<_>>()
        });
    harness::drive(controller, &context, reconcile, shared).await;
    Ok(())
}

/// A hash of what decides where job pods run: name, labels, taints, unschedulable.
fn node_scheduling_fingerprint(node: &Node) -> u64 {
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
    hasher.finish()
}

async fn reconcile(
    job: Arc<BroadcastJob>,
    shared: Arc<Shared>,
) -> Result<Action, BroadcastJobError> {
    reconcile_job(&job, &shared).await
}

async fn reconcile_job(job: &BroadcastJob, shared: &Shared) -> Result<Action, BroadcastJobError> {
    if job.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let namespace = job.namespace().unwrap_or_default();
    let pods: Vec<Pod> = shared
        .pods
        .get(&uid)
        .iter()
        .filter(|pod| pod.namespace().as_deref() == Some(namespace.as_str()))
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
        job: object_key(job),
        source,
    };
    if plan.delete_job {
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        match jobs.delete(&job.name_any(), &params).await {
            Ok(_) => {
                tracing::info!(job = %object_key(job), "deleted after ttlSecondsAfterFinished");
            }
            Err(error) if is_not_found(&error) => {}
            Err(error) => return Err(api_error(error)),
        }
        return Ok(());
    }
    let pods: Api<Pod> = Api::namespaced(shared.client.clone(), &namespace);
    for node in &plan.create_on {
        let pod = broadcast_job::new_pod(job, node, OWNER_API_VERSION);
        match pods.create(&PostParams::default(), &pod).await {
            Ok(created) => {
                tracing::info!(job = %object_key(job), pod = %created.name_any(), %node, "created pod");
            }
            // The pod of this node exists already (the cache had not seen it yet).
            Err(error) if is_conflict(&error) => {}
            Err(error) => {
                publish(
                    shared,
                    job,
                    true,
                    "FailedCreate",
                    &format!("pod on node {node}: {error}"),
                );
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
            Ok(_) => tracing::info!(job = %object_key(job), pod = %name, "deleted pod"),
            Err(error) if is_not_found(&error) => {}
            Err(error) => return Err(api_error(error)),
        }
    }
    for event in &plan.events {
        publish(shared, job, event.warning, event.reason, &event.message);
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

fn publish(
    shared: &Shared,
    job: &BroadcastJob,
    warning: bool,
    reason: &'static str,
    message: &str,
) {
    shared
        .events
        .record_for(job, EventRecord::new(warning, reason, message.to_owned()));
}
