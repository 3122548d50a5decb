//! kruise-manager's ContainerRecreateRequest controller: runs [`controller::decide`] for every
//! request and executes its plan in order, each write guarded by the `resourceVersion` it was decided on
//! (a conflict: decide again from the newer object). Changes of a pod requeue its active requests, so the
//! snapshot follows the pod's containers at once. Register it with [`register`].

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::ContainerRecreateRequest;
use kruise_api::keys::crr as keys;
use kruise_lifecycle::container_recreate::controller::{self, Action as Step, not_ready_entry};
use kruise_lifecycle::not_ready;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use kruise_runtime::harness::{self, Retry, object_key};

use crate::actions::{self, ActionError};
use crate::controllers::{ControllerContext, ControllerError, ControllerSet};

/// The controller's name (metrics label, logs).
pub const NAME: &str = "containerrecreaterequest";

/// Why a reconcile failed (retried).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReconcileError {
    /// A write or read failed.
    #[error(transparent)]
    Action(#[from] ActionError),
    /// The pod's `KruisePodReady` message does not parse.
    #[error(transparent)]
    NotReady(#[from] kruise_lifecycle::Error),
}

impl Retry for ReconcileError {
    fn retry_after(&self) -> Duration {
        match self {
            Self::Action(action) => action.requeue_after(),
            Self::NotReady(_) => Duration::from_secs(5),
        }
    }

    fn is_conflict(&self) -> bool {
        matches!(self, Self::Action(ActionError::Conflict { .. }))
    }
}

struct Context {
    client: Client,
}

/// Adds the controller to `controllers`.
pub fn register(controllers: &mut ControllerSet) {
    controllers.register_fn(NAME, run);
}

/// The index of active requests by the UID of their pod.
const ACTIVE_BY_POD_UID: &str = "crr-active-pod-uid";

fn active_pod_uid(crr: &ContainerRecreateRequest) -> Vec<String> {
    let labels = crr.labels();
    if !labels.contains_key(keys::ACTIVE_LABEL) {
        return Vec::new();
    }
    labels
        .get(keys::POD_UID_LABEL)
        .cloned()
        .into_iter()
        .collect()
}

/// Runs the controller until the context's shutdown.
///
/// # Errors
/// Never (failures of single reconciles are retried); the signature is the controller set's.
pub async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let shared = Arc::new(Context {
        client: context.client.clone(),
    });
    let requests = context.informers.get::<ContainerRecreateRequest>();
    let active = requests.index(ACTIVE_BY_POD_UID, Arc::new(active_pod_uid));
    let pods = context.informers.get::<Pod>();
    let Some(store) = harness::synced_store(&requests, &context).await else {
        return Ok(());
    };
    let controller = Controller::for_shared_stream(requests.applied(), store)
        // A pod's containers restarting or becoming ready moves its active requests on (the snapshot).
        .watches_shared_stream(pods.objects(), move |pod: Arc<Pod>| {
            let uid = pod.metadata.uid.as_deref().unwrap_or_default();
            active
                .get(uid)
                .iter()
                .map(|crr| ObjectRef::from_obj(crr.as_ref()))
                .collect::<Vec<_>>()
        });
    harness::drive(controller, &context, reconcile, shared).await;
    Ok(())
}

async fn reconcile(
    crr: Arc<ContainerRecreateRequest>,
    context: Arc<Context>,
) -> Result<Action, ReconcileError> {
    sync(&crr, &context).await
}

async fn sync(crr: &ContainerRecreateRequest, context: &Context) -> Result<Action, ReconcileError> {
    let namespace = crr.namespace().unwrap_or_default();
    let crrs: Api<ContainerRecreateRequest> = Api::namespaced(context.client.clone(), &namespace);
    let pods: Api<Pod> = Api::namespaced(context.client.clone(), &namespace);
    let pod = pods
        .get_opt(&crr.spec.pod_name)
        .await
        .map_err(|source| ActionError::Api {
            object: format!("{namespace}/{}", crr.spec.pod_name),
            source,
        })?;
    let now = Timestamp::now();
    let plan = controller::decide(crr, pod.as_ref(), now);
    for step in plan.actions {
        match step {
            Step::ReleaseNotReady { remove_key } => {
                if remove_key && let Some(pod) = &pod {
                    let change = not_ready::remove_not_ready_key(pod, &not_ready_entry(crr), now)?;
                    write_pod_conditions(&pods, pod, &change).await?;
                }
                let finalizers: Vec<String> = crr
                    .finalizers()
                    .iter()
                    .filter(|finalizer| *finalizer != keys::UNREADY_ACQUIRED_KEY)
                    .cloned()
                    .collect();
                patch_metadata(&crrs, crr, json!({"finalizers": finalizers})).await?;
                return Ok(Action::requeue(Duration::from_millis(100)));
            }
            Step::RemoveActiveLabel => {
                patch_metadata(&crrs, crr, json!({"labels": {keys::ACTIVE_LABEL: null}})).await?;
            }
            Step::Delete => {
                actions::delete(&crrs, crr).await?;
                tracing::info!(crr = %object_key(crr), "deleted after its TTL");
            }
            Step::Complete(message) => {
                tracing::info!(crr = %object_key(crr), %message, "completing");
                let time = Time(Timestamp::from_second(now.as_second()).unwrap_or(now));
                actions::merge_status(
                    &crrs,
                    crr,
                    &json!({"phase": "Completed", "completionTime": time, "message": message}),
                )
                .await?;
            }
            Step::SyncSnapshot(snapshot) => {
                actions::merge_status(&crrs, crr, &json!({"containerStatusSnapshot": snapshot}))
                    .await?;
                return Ok(Action::requeue(Duration::from_millis(100)));
            }
            Step::AcquireNotReady {
                has_gate,
                condition,
            } => {
                let mut finalizers = crr.finalizers().to_vec();
                if !finalizers.iter().any(|f| f == keys::UNREADY_ACQUIRED_KEY) {
                    finalizers.push(keys::UNREADY_ACQUIRED_KEY.to_owned());
                    patch_metadata(&crrs, crr, json!({"finalizers": finalizers})).await?;
                    // The next pass (on the newer request) goes on with the pod and the condition.
                    return Ok(Action::requeue(Duration::from_millis(100)));
                }
                if has_gate && let Some(pod) = &pod {
                    let change = not_ready::add_not_ready_key(pod, &not_ready_entry(crr), now)?;
                    write_pod_conditions(&pods, pod, &change).await?;
                }
                let mut conditions = crr.status.clone().unwrap_or_default().conditions;
                conditions.push(condition);
                actions::merge_status(&crrs, crr, &json!({"conditions": conditions})).await?;
                tracing::info!(crr = %object_key(crr), "pod held not-ready for the unready grace");
            }
        }
    }
    Ok(plan
        .requeue_after
        .map_or_else(Action::await_change, Action::requeue))
}

async fn write_pod_conditions(
    pods: &Api<Pod>,
    pod: &Pod,
    change: &kruise_lifecycle::StatusChange,
) -> Result<(), ActionError> {
    if change.is_empty() {
        return Ok(());
    }
    let mut updated = pod.clone();
    change.apply_to(&mut updated);
    let conditions = updated
        .status
        .and_then(|status| status.conditions)
        .unwrap_or_default();
    actions::merge_status(pods, pod, &json!({"conditions": conditions})).await?;
    Ok(())
}

/// A merge patch of the request's metadata guarded by its `resourceVersion`.
async fn patch_metadata(
    api: &Api<ContainerRecreateRequest>,
    crr: &ContainerRecreateRequest,
    mut metadata: serde_json::Value,
) -> Result<(), ActionError> {
    if let Some(object) = metadata.as_object_mut() {
        object.insert("resourceVersion".into(), json!(crr.resource_version()));
    }
    api.patch(
        &crr.name_any(),
        &PatchParams::default(),
        &Patch::Merge(&json!({"metadata": metadata})),
    )
    .await
    .map(drop)
    .map_err(|error| ActionError::from_kube(object_key(crr), error))
}
