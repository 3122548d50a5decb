//! The UnitedDeployment controller of kruise-manager: observes v1beta1 UnitedDeployments (the storage
//! version) and the workloads they control: StatefulSets and Deployments through an index of their shared
//! informers by the owner's UID, CloneSets and Advanced StatefulSets through a list per reconcile (their
//! controllers hold the one watch of those kinds, and a second would double it), plus their
//! ControllerRevisions; keeps the revision of the template (`revisions`), calls the sans-IO
//! [`kruise_schedule::united_deployment::plan`], and executes it (`subsets`): creates the missing
//! subset workloads (with create expectations for the watched kinds, so a stale cache never creates a
//! second one), replaces the ones whose revision, patch, replicas or partition changed, deletes the
//! workloads of removed subsets, of another kind or duplicated, records events, and writes the status
//! through the status subresource.
//!
//! It reconciles a UnitedDeployment when it changes, when one of its StatefulSets or Deployments changes,
//! when a pod with an `apps.kruise.io/subset-name` label that its selector's `matchLabels` match changes,
//! and every 2 s until the plan is settled (the subset workloads report what they were asked for), then
//! every minute. Under the `Adaptive` schedule strategy it reads the scheduling state of each subset's
//! pods from an index of the pod informer (`subset_pods`) and also comes back when a pending pod would time out or an
//! unschedulable subset recover; with `reserveUnschedulablePods` it labels the reserved pods
//! (`reserved_labels`) before it writes the workloads.
//!
//! ```no_run
//! use kruise_manager::united_deployment::UnitedDeploymentController;
//! use kruise_runtime::controllers::ControllerSet;
//!
//! let mut controllers = ControllerSet::new();
//! controllers.register(UnitedDeploymentController);
//! assert_eq!(controllers.names(), ["uniteddeployment"]);
//! ```

mod reconcile;
mod reserved_labels;
mod revisions;
mod subset_pods;
mod subsets;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use k8s_openapi::api::apps::v1::{ControllerRevision, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::UnitedDeployment;
use kruise_api::keys::united_deployment::SUBSET_NAME_LABEL;
use kruise_runtime::actions::ActionError;
use kruise_runtime::controllers::{
    ControllerContext, ControllerError, ControllerFuture, ManagedController,
};
use kruise_runtime::expectations::{DEFAULT_TIMEOUT, SharedExpectations};
use kruise_runtime::harness::{self, Retry};
use kruise_runtime::informer::object_namespace;
use kruise_runtime::{Change, Indexed, Informer};
use kruise_schedule::united_deployment::workload::WorkloadKind;
use kube::runtime::Controller;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};

use self::reconcile::{Shared, reconcile};
use self::subset_pods::subset_pods_by_namespace;
use crate::workload::owner::OwnerKind;

/// The owner kind of subset workloads and revisions.
pub const OWNER: OwnerKind = OwnerKind {
    kind: "UnitedDeployment",
    api_version: "apps.kruise.io/v1beta1",
};

/// The name of the owner-UID indexes this controller adds to the shared informers.
const OWNER_INDEX: &str = "uniteddeployment-uid";

/// The UnitedDeployment controller, registered in kruise-manager's
/// [`ControllerSet`](kruise_runtime::controllers::ControllerSet).
#[derive(Clone, Copy, Debug, Default)]
pub struct UnitedDeploymentController;

impl ManagedController for UnitedDeploymentController {
    fn name(&self) -> &str {
        "uniteddeployment"
    }

    fn run(&self, context: ControllerContext) -> ControllerFuture {
        Box::pin(run(context))
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UnitedDeploymentControllerError {
    /// A write was refused or conflicted.
    #[error(transparent)]
    Action(#[from] ActionError),
    /// The template's revision could not be kept.
    #[error("UnitedDeployment {united_deployment}: revision: {message}")]
    Revision {
        /// `namespace/name`.
        united_deployment: String,
        /// What failed.
        message: String,
    },
    /// Some subset workloads could not be written (the status says which).
    #[error("UnitedDeployment {united_deployment}: {message}")]
    Subsets {
        /// `namespace/name`.
        united_deployment: String,
        /// The failures, joined.
        message: String,
    },
}

impl Retry for UnitedDeploymentControllerError {
    fn retry_after(&self) -> Duration {
        match self {
            Self::Action(action) => action.requeue_after(),
            Self::Revision { .. } | Self::Subsets { .. } => Duration::from_secs(5),
        }
    }

    fn is_conflict(&self) -> bool {
        matches!(self, Self::Action(ActionError::Conflict { .. }))
    }
}

/// The informer of `K` indexed by the UID of the UnitedDeployment controlling each object.
fn owned<K>(informer: &Informer<K>) -> Indexed<K>
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    informer.index(OWNER_INDEX, Arc::new(|object: &K| OWNER.uid_keys(object)))
}

/// The UnitedDeployments to reconcile when a subset workload of `kind` changes, observing the change in
/// the expectations on the way.
fn owner_changes<K>(
    informer: &Informer<K>,
    kind: WorkloadKind,
    expectations: Arc<SharedExpectations>,
) -> BoxStream<'static, ObjectRef<UnitedDeployment>>
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    informer
        .subscribe()
        .filter_map(move |change: Change<K>| {
            let gone = change.is_deleted();
            let owner = change.object().and_then(|object| {
                expectations.observe_all(&OWNER.observed(kind.as_str(), object.as_ref(), gone));
                OWNER.reference_to::<UnitedDeployment, K>(object.as_ref())
            });
            futures::future::ready(owner)
        })
        .boxed()
}

/// The name of the index of UnitedDeployments by namespace.
const BY_NAMESPACE: &str = "uniteddeployments-by-namespace";

/// The UnitedDeployments of `pod`'s namespace whose selector's `matchLabels` it carries, when it belongs to
/// a subset (an over-approximation: extra reconciles are harmless). `by_namespace` is indexed by
/// [`object_namespace`], so a pod event looks at its own namespace's UnitedDeployments only.
fn owners_of_pod(
    pod: &Pod,
    by_namespace: &Indexed<UnitedDeployment>,
) -> Vec<ObjectRef<UnitedDeployment>> {
    let labels = pod.labels();
    if !labels.contains_key(SUBSET_NAME_LABEL) {
        return Vec::new();
    }
    let Some(namespace) = pod.metadata.namespace.as_deref() else {
        return Vec::new();
    };
    by_namespace
        .get(namespace)
        .iter()
        .filter(|ud| {
            ud.spec
                .selector
                .match_labels
                .iter()
                .flatten()
                .all(|(key, value)| labels.get(key) == Some(value))
        })
        .map(|ud| ObjectRef::from_obj(ud.as_ref()))
        .collect()
}

async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let informers = &context.informers;
    let statefulsets = informers.get::<StatefulSet>();
    let deployments = informers.get::<Deployment>();
    let revisions = informers.get::<ControllerRevision>();
    let pods = informers.get::<Pod>();
    let expectations = Arc::new(SharedExpectations::new(DEFAULT_TIMEOUT));
    let statefulsets_owned = owned(&statefulsets);
    let deployments_owned = owned(&deployments);
    let revisions_owned = owned(&revisions);
    let subset_pods = subset_pods_by_namespace(&pods);
    let uds = informers.get::<UnitedDeployment>();
    let uds_by_namespace = uds.index(BY_NAMESPACE, Arc::new(object_namespace::<UnitedDeployment>));
    for synced in [
        harness::synced_store(&statefulsets, &context)
            .await
            .is_some(),
        harness::synced_store(&deployments, &context)
            .await
            .is_some(),
        harness::synced_store(&revisions, &context).await.is_some(),
        harness::synced_store(&pods, &context).await.is_some(),
    ] {
        if !synced {
            return Ok(());
        }
    }
    let shared = Arc::new(Shared {
        client: context.client.clone(),
        statefulsets: statefulsets_owned,
        deployments: deployments_owned,
        revisions: revisions_owned,
        pods: subset_pods,
        expectations: expectations.clone(),
        events: context.event_sink("uniteddeployment-controller"),
    });
    let Some(store) = harness::synced_store(&uds, &context).await else {
        return Ok(());
    };
    let pod_changes = pods
        .subscribe()
        .flat_map(move |change: Change<Pod>| {
            let owners = change
                .object()
                .map(|pod| owners_of_pod(pod, &uds_by_namespace))
                .unwrap_or_default();
            futures::stream::iter(owners)
        })
        .boxed();
    let changes = futures::stream::select_all([
        owner_changes(
            &statefulsets,
            WorkloadKind::StatefulSet,
            expectations.clone(),
        ),
        owner_changes(&deployments, WorkloadKind::Deployment, expectations),
        pod_changes,
    ]);
    let controller = Controller::for_shared_stream(uds.applied(), store).reconcile_on(changes);
    harness::drive(controller, &context, reconcile, shared).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use kube::runtime::watcher::Event;

    use super::*;

    fn ud(name: &str, namespace: &str, app: &str) -> UnitedDeployment {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"selector": {"matchLabels": {"app": app}}}
        }))
        .unwrap()
    }

    fn pod(namespace: &str, labels: &serde_json::Value) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "namespace": namespace, "labels": labels}}))
        .unwrap()
    }

    #[test]
    fn a_subset_pod_concerns_the_united_deployments_whose_selector_it_carries() {
        let informer = Informer::new("uniteddeployments");
        let reader = informer.index(BY_NAMESPACE, Arc::new(object_namespace::<UnitedDeployment>));
        informer.apply(Event::Init);
        for object in [
            ud("web", "a", "web"),
            ud("api", "a", "api"),
            ud("web", "b", "web"),
        ] {
            informer.apply(Event::InitApply(object));
        }
        informer.apply(Event::InitDone);
        let names = |pod: &Pod| -> Vec<String> {
            owners_of_pod(pod, &reader)
                .into_iter()
                .map(|reference| {
                    format!(
                        "{}/{}",
                        reference.namespace.unwrap_or_default(),
                        reference.name
                    )
                })
                .collect()
        };
        let subset_pod = pod(
            "a",
            &serde_json::json!({"app": "web", SUBSET_NAME_LABEL: "zone-a"}),
        );
        assert_eq!(names(&subset_pod), ["a/web"]);
        let plain_pod = pod("a", &serde_json::json!({"app": "web"}));
        assert!(names(&plain_pod).is_empty(), "not a subset pod");
    }
}
