//! The PodUnavailableBudget controller: keeps the status of every budget (v1alpha1, the storage version)
//! current with [`compute_status`], from the process's shared pod informer (no pod watch of its own; pods
//! are looked up by namespace) and, for a `targetRef`, the workload's `scale` subresource. A pod change
//! reconciles the budgets of its namespace that cover it; a budget is reconciled again when an entry of its
//! lists expires, and every [`RESYNC`] (a workload's replicas change without any pod changing).
//!
//! The status is replaced whole and conditionally (on the `resourceVersion` read): a webhook that spent a
//! unit in between makes the write conflict, and the next reconcile starts from its status.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::policy::{v1alpha1, v1beta1};
use kruise_runtime::harness::{self, Retry};
use kruise_runtime::{Indexed, Informer};
use kruise_schedule::protection::unavailable_budget::{
    BudgetError, budget_key, compute_status, expected_count, is_ignored,
};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Client, ResourceExt};

use super::budgets::{BudgetStores, covering, stored_status};
use super::workload_replicas::workload_replicas;
use crate::actions::{self, ActionError};
use crate::controllers::{ControllerContext, ControllerError, ControllerSet};

/// The controller's name (metrics label, logs).
pub const NAME: &str = "podunavailablebudget";

/// How often a budget is computed again without any change seen.
pub const RESYNC: Duration = Duration::from_secs(30);

/// The index of pods by namespace.
const PODS_BY_NAMESPACE: &str = "pod-namespace";

/// Why a reconcile failed (retried).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReconcileError {
    /// A read or write failed.
    #[error(transparent)]
    Action(#[from] ActionError),
    /// The budget's spec cannot be judged.
    #[error(transparent)]
    Budget(#[from] BudgetError),
    /// `spec.targetRef` does not name a workload.
    #[error(
        "PodUnavailableBudget {budget}: spec.targetRef: invalid value ({value}): needs apiVersion, kind and name"
    )]
    InvalidTarget {
        /// `namespace/name` of the budget.
        budget: String,
        /// The reference.
        value: String,
    },
}

impl Retry for ReconcileError {
    fn retry_after(&self) -> Duration {
        match self {
            Self::Action(action) => action.requeue_after(),
            // Fixed by editing the budget, which reconciles it again.
            Self::Budget(_) | Self::InvalidTarget { .. } => RESYNC,
        }
    }

    fn is_conflict(&self) -> bool {
        matches!(self, Self::Action(ActionError::Conflict { .. }))
    }
}

struct Context {
    client: Client,
    pods: Indexed<Pod>,
}

/// Adds the controller to `controllers`.
pub fn register(controllers: &mut ControllerSet) {
    controllers.register_fn(NAME, run);
}

/// The pods of `namespace`, by index.
fn pods_by_namespace(pods: &Informer<Pod>) -> Indexed<Pod> {
    pods.index(
        PODS_BY_NAMESPACE,
        Arc::new(|pod: &Pod| pod.metadata.namespace.clone().into_iter().collect()),
    )
}

/// Runs the controller until the context's shutdown.
///
/// # Errors
/// Never (failures of single reconciles are retried); the signature is the controller set's.
pub async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let stores = BudgetStores::shared(&context.informers);
    let pods = context.informers.get::<Pod>();
    let shared = Arc::new(Context {
        client: context.client.clone(),
        pods: pods_by_namespace(&pods),
    });
    let Some(store) = harness::synced_store(stores.informer(), &context).await else {
        return Ok(());
    };
    let budgets = stores.clone();
    let controller = Controller::for_shared_stream(stores.informer().applied(), store)
        .watches_shared_stream(pods.objects(), move |pod: Arc<Pod>| {
            let namespace = pod.metadata.namespace.clone().unwrap_or_default();
            budgets
                .in_namespace(&namespace)
                .iter()
                .filter(|stored| {
                    covering(&v1beta1::PodUnavailableBudget::from(stored.as_ref()), &pod)
                })
                .map(|stored| ObjectRef::from_obj(stored.as_ref()))
                .collect::<Vec<_>>()
        });
    harness::drive(controller, &context, reconcile, shared).await;
    Ok(())
}

async fn reconcile(
    stored: Arc<v1alpha1::PodUnavailableBudget>,
    context: Arc<Context>,
) -> Result<Action, ReconcileError> {
    let budget = v1beta1::PodUnavailableBudget::from(stored.as_ref());
    let key = budget_key(&budget);
    let namespace = stored.namespace().unwrap_or_default();
    let namespace_pods = context.pods.get(&namespace);
    let mut pods: Vec<&Pod> = Vec::new();
    for pod in &namespace_pods {
        if covering(&budget, pod) && !is_ignored(&budget, pod)? {
            pods.push(pod);
        }
    }
    let replicas = match (
        &budget.spec.target_reference,
        budget.spec.protect_total_replicas,
    ) {
        (Some(target), None) => {
            workload_replicas(&context.client, &key, &namespace, target).await?
        }
        _ => None,
    };
    let expected = expected_count(&budget, replicas, &pods);
    let computed = compute_status(&budget, &pods, expected, Timestamp::now())?;
    if budget.status.as_ref() != Some(&computed.status) {
        let api: Api<v1alpha1::PodUnavailableBudget> =
            Api::namespaced(context.client.clone(), &namespace);
        actions::replace_status(&api, stored.as_ref(), &stored_status(&computed.status)).await?;
        tracing::debug!(budget = %key, allowed = computed.status.unavailable_allowed,
            current = computed.status.current_available, desired = computed.status.desired_available,
            "status written");
    }
    // Just after the next expiry (the status keeps whole seconds).
    let next = computed
        .requeue_after
        .map_or(RESYNC, |after| (after + Duration::from_secs(1)).min(RESYNC));
    Ok(Action::requeue(next))
}
