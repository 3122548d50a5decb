//! The WorkloadSpread controller of kruise-manager (gate `WorkloadSpread`): observes v1beta1
//! WorkloadSpreads and the pods whose `apps.kruise.io/matched-workloadspread` annotation names them (an
//! index of the shared pod informer), calls the sans-IO [`kruise_schedule::spread::workload_spread::plan`],
//! and executes it: the status (conditional on the `resourceVersion` it decided on, like the pod webhook's
//! writes), the `controller.kubernetes.io/pod-deletion-cost` of each pod, the deletion of pods the
//! `Adaptive` strategy reschedules, and a requeue at the next expiry. The target workload is read only for a
//! percentage `maxReplicas` ([`target_replicas`]).
//!
//! ```no_run
//! use kruise_manager::workload_spread::WorkloadSpreadController;
//! use kruise_runtime::controllers::ControllerSet;
//!
//! let mut controllers = ControllerSet::new();
//! controllers.register(WorkloadSpreadController);
//! assert_eq!(controllers.names(), ["workloadspread"]);
//! ```

mod reconcile;
pub mod target_replicas;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::WorkloadSpread;
use kruise_runtime::Change;
use kruise_runtime::actions::ActionError;
use kruise_runtime::controllers::{
    ControllerContext, ControllerError, ControllerFuture, ManagedController,
};
use kruise_runtime::harness::{self, Retry};
use kruise_schedule::spread::workload_spread::matched::matched_of;
use kube::ResourceExt;
use kube::runtime::Controller;
use kube::runtime::reflector::ObjectRef;

use self::reconcile::{Shared, reconcile};

/// The WorkloadSpread controller, registered in kruise-manager's
/// [`ControllerSet`](kruise_runtime::controllers::ControllerSet) when the gate is on.
#[derive(Clone, Copy, Debug, Default)]
pub struct WorkloadSpreadController;

impl ManagedController for WorkloadSpreadController {
    fn name(&self) -> &str {
        "workloadspread"
    }

    fn run(&self, context: ControllerContext) -> ControllerFuture {
        Box::pin(run(context))
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WorkloadSpreadControllerError {
    /// A write was refused or conflicted.
    #[error(transparent)]
    Action(#[from] ActionError),
    /// Any other API failure.
    #[error("WorkloadSpread {spread}: {message}")]
    Api {
        /// `namespace/name`.
        spread: String,
        /// What failed.
        message: String,
    },
}

impl Retry for WorkloadSpreadControllerError {
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

/// The index key of a pod: `namespace/workloadspread` of its annotation.
fn spread_of_pod(pod: &Pod) -> Option<String> {
    let matched = matched_of(pod).ok().flatten()?;
    Some(format!(
        "{}/{}",
        pod.namespace().unwrap_or_default(),
        matched.name
    ))
}

async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let pod_informer = context.informers.get::<Pod>();
    let pods = pod_informer.index(
        "workloadspread",
        Arc::new(|pod: &Pod| spread_of_pod(pod).into_iter().collect()),
    );
    let pod_changes = pod_informer.subscribe().filter_map(|change| {
        std::future::ready(match change {
            Change::Applied(pod) | Change::Deleted(pod) => Some(pod),
            Change::Listed => None,
        })
    });
    let shared = Arc::new(Shared {
        client: context.client.clone(),
        pods,
        events: context.event_sink("workloadspread-controller"),
    });
    let spread_informer = context.informers.get::<WorkloadSpread>();
    let Some(store) = harness::synced_store(&spread_informer, &context).await else {
        return Ok(());
    };
    let controller = Controller::for_shared_stream(spread_informer.applied(), store)
        .watches_shared_stream(pod_changes, |pod: Arc<Pod>| {
            let matched = matched_of(&pod).ok().flatten();
            matched.map(|matched| {
                ObjectRef::<WorkloadSpread>::new(&matched.name)
                    .within(&pod.namespace().unwrap_or_default())
            })
        });
    harness::drive(controller, &context, reconcile, shared).await;
    Ok(())
}
