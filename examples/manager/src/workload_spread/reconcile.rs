//! One reconcile: observe, plan, execute.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::WorkloadSpread;
use kruise_api::keys::kubernetes::POD_DELETION_COST_ANNOTATION;
use kruise_runtime::Indexed;
use kruise_runtime::actions::{self, is_not_found};
use kruise_runtime::events::{EventRecord, EventSink};
use kruise_runtime::harness::object_key;
use kruise_schedule::spread::workload_spread::{PlanInput, plan};
use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use kube::runtime::controller::Action;
use kube::{Api, Client, ResourceExt};

use super::WorkloadSpreadControllerError;
use super::target_replicas::target_replicas;

/// How long to wait before looking again at a WorkloadSpread that cannot be planned (bad `maxReplicas`).
const INVALID_RECHECK: std::time::Duration = std::time::Duration::from_secs(60);

/// What every reconcile shares.
pub(super) struct Shared {
    pub(super) client: Client,
    /// Pods by `namespace/workloadspread` of their annotation.
    pub(super) pods: Indexed<Pod>,
    pub(super) events: EventSink,
}

pub(super) async fn reconcile(
    spread: Arc<WorkloadSpread>,
    shared: Arc<Shared>,
) -> Result<Action, WorkloadSpreadControllerError> {
    if spread.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let key = object_key(spread.as_ref());
    let namespace = spread.namespace().unwrap_or_default();
    let pods = shared.pods.get(&key);
    let needs_replicas = spread
        .spec
        .subsets
        .iter()
        .any(|subset| matches!(subset.max_replicas, Some(IntOrString::String(_))));
    let workload_replicas = if needs_replicas {
        target_replicas(&shared.client, &namespace, &spread.spec.target_reference)
            .await
            .map_err(|message| WorkloadSpreadControllerError::Api {
                spread: key.clone(),
                message: format!("reading the target workload: {message}"),
            })?
    } else {
        None
    };
    let input = PlanInput {
        spread: spread.as_ref(),
        pods: &pods,
        workload_replicas,
        now: Timestamp::now(),
    };
    let plan = match plan(&input) {
        Ok(plan) => plan,
        Err(error) => {
            tracing::warn!(workloadspread = %key, %error, "cannot plan");
            shared.events.record_for(
                spread.as_ref(),
                EventRecord::new(true, "InvalidSpec", error.to_string()),
            );
            return Ok(Action::requeue(INVALID_RECHECK));
        }
    };
    let spreads: Api<WorkloadSpread> = Api::namespaced(shared.client.clone(), &namespace);
    if spread.status.as_ref() != Some(&plan.status) {
        actions::replace_status(&spreads, spread.as_ref(), &plan.status).await?;
    }
    let pod_api: Api<Pod> = Api::namespaced(shared.client.clone(), &namespace);
    for (pod, cost) in &plan.deletion_costs {
        let patch =
            serde_json::json!({"metadata": {"annotations": {POD_DELETION_COST_ANNOTATION: cost}}});
        match pod_api
            .patch(pod, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => tracing::debug!(workloadspread = %key, %pod, %cost, "pod deletion cost"),
            Err(error) if is_not_found(&error) => {}
            Err(error) => {
                return Err(WorkloadSpreadControllerError::Api {
                    spread: key,
                    message: format!("patching the deletion cost of pod {pod}: {error}"),
                });
            }
        }
    }
    for name in &plan.reschedule {
        let uid = pods
            .iter()
            .find(|pod| pod.metadata.name.as_deref() == Some(name.as_str()))
            .and_then(|pod| pod.metadata.uid.clone());
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid,
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        match pod_api.delete(name, &params).await {
            Ok(_) => {
                tracing::info!(workloadspread = %key, pod = %name, "deleted an unschedulable pod so its workload recreates it");
                shared.events.record_for(
                    spread.as_ref(),
                    EventRecord::new(
                        false,
                        "RescheduleUnschedulablePod",
                        format!("deleted pod {name}: unschedulable past rescheduleCriticalSeconds"),
                    ),
                );
            }
            Err(error) if is_not_found(&error) || actions::is_conflict(&error) => {}
            Err(error) => {
                return Err(WorkloadSpreadControllerError::Api {
                    spread: key,
                    message: format!("deleting unschedulable pod {name}: {error}"),
                });
            }
        }
    }
    Ok(plan
        .requeue_after
        .map_or_else(Action::await_change, Action::requeue))
}
