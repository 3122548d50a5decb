//! The PersistentPodState controller of kruise-manager (upstream `pkg/controller/persistentpodstate`;
//! always on, as upstream, which has no feature gate for it). Two jobs, on the shared informers of
//! PersistentPodStates (v1alpha1, as upstream reads them), pods, nodes, StatefulSets (apps/v1) and
//! Advanced StatefulSets (v1beta1):
//!
//! * status: for each PersistentPodState, record where the target workload's Ready pods run (node name,
//!   the node's topology labels, chosen pod annotations) and drop records per the retention policy,
//!   written whole through the status subresource ([`kruise_schedule::persistent_pod_state::status`]);
//!   a PersistentPodState is looked at again when a pod of its workload, its workload, or a node changes;
//! * generation: a StatefulSet or Advanced StatefulSet annotated
//!   `kruise.io/auto-generate-persistent-pod-state: "true"` gets a PersistentPodState of its name, kept
//!   equal to what its annotations ask for, deleted when the annotation goes
//!   ([`kruise_schedule::persistent_pod_state::generated`]).
//!
//! The pod webhook's half is [`crate::webhook::persistent_pod_state`].
//!
//! ```no_run
//! use kruise_manager::persistent_pod_state::PersistentPodStateController;
//! use kruise_runtime::controllers::ControllerSet;
//!
//! let mut controllers = ControllerSet::new();
//! controllers.register(PersistentPodStateController);
//! assert_eq!(controllers.names(), ["persistentpodstate"]);
//! ```

mod generation;
mod status;
mod workloads;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_api::apps::v1alpha1::PersistentPodState;
use kruise_api::apps::v1beta1;
use kruise_runtime::Change;
use kruise_runtime::actions::ActionError;
use kruise_runtime::controllers::{
    ControllerContext, ControllerError, ControllerFuture, ManagedController,
};
use kruise_runtime::harness::{self, Retry};
use kruise_runtime::informer::controller_uid;
use kube::runtime::Controller;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};

use self::workloads::Workloads;
use crate::webhook::persistent_pod_state::PersistentPodStateStores;

/// The index of pods by their controller's UID.
const PODS_BY_OWNER: &str = "persistentpodstate-pods-by-owner";

/// The PersistentPodState controller, registered in kruise-manager's
/// [`ControllerSet`](kruise_runtime::controllers::ControllerSet).
#[derive(Clone, Copy, Debug, Default)]
pub struct PersistentPodStateController;

impl ManagedController for PersistentPodStateController {
    fn name(&self) -> &str {
        "persistentpodstate"
    }

    fn run(&self, context: ControllerContext) -> ControllerFuture {
        Box::pin(run(context))
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PersistentPodStateError {
    /// A write was refused or conflicted.
    #[error(transparent)]
    Action(#[from] ActionError),
}

impl Retry for PersistentPodStateError {
    fn retry_after(&self) -> Duration {
        match self {
            Self::Action(action) => action.requeue_after(),
        }
    }

    fn is_conflict(&self) -> bool {
        matches!(self, Self::Action(ActionError::Conflict { .. }))
    }
}

async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let state_informer = context.informers.get::<PersistentPodState>();
    let states = PersistentPodStateStores::from_informer(&state_informer);
    let pod_informer = context.informers.get::<Pod>();
    let pods = pod_informer.index(PODS_BY_OWNER, Arc::new(controller_uid::<Pod>));
    let node_informer = context.informers.get::<Node>();
    let set_informer = context.informers.get::<apps::StatefulSet>();
    let advanced_informer = context.informers.get::<v1beta1::StatefulSet>();
    let Some(state_store) = harness::synced_store(&state_informer, &context).await else {
        return Ok(());
    };
    let Some(sets) = harness::synced_store(&set_informer, &context).await else {
        return Ok(());
    };
    let Some(advanced) = harness::synced_store(&advanced_informer, &context).await else {
        return Ok(());
    };
    let Some(nodes) = harness::synced_store(&node_informer, &context).await else {
        return Ok(());
    };
    tokio::select! {
        () = pod_informer.wait_synced() => {}
        () = context.shutdown.clone().wait() => return Ok(()),
    }
    let workloads = Workloads {
        sets: sets.clone(),
        advanced: advanced.clone(),
    };
    let status_shared = Arc::new(status::Shared {
        client: context.client.clone(),
        workloads: workloads.clone(),
        pods,
        nodes,
    });
    let generation_shared = Arc::new(generation::Shared {
        client: context.client.clone(),
        states: state_store.clone(),
    });

    // A pod of a StatefulSet changed or went: its workload's PersistentPodState.
    let by_pod = states.clone();
    let pod_changes = pod_informer.subscribe().flat_map(move |change| {
        let found = change
            .object()
            .map(|pod| states_of_pod(pod, &by_pod))
            .unwrap_or_default();
        futures::stream::iter(found)
    });
    // A workload changed (scaled, deleted): the PersistentPodStates targeting it.
    let by_set = states.clone();
    let set_changes = set_informer.subscribe().flat_map(move |change| {
        let found = change
            .object()
            .map(|set| states_of_workload(set.as_ref(), &by_set))
            .unwrap_or_default();
        futures::stream::iter(found)
    });
    let by_advanced = states.clone();
    let advanced_changes = advanced_informer.subscribe().flat_map(move |change| {
        let found = change
            .object()
            .map(|set| states_of_workload(set.as_ref(), &by_advanced))
            .unwrap_or_default();
        futures::stream::iter(found)
    });
    // A node appeared or its labels changed (a pod on a node not seen yet was skipped): every state.
    let every_state = state_store.clone();
    let mut node_labels = HashMap::new();
    let node_changes = node_informer.subscribe().flat_map(move |change| {
        let changed = match change {
            Change::Applied(node) => {
                let labels = node.metadata.labels.clone().unwrap_or_default();
                node_labels.insert(node.name_any(), labels.clone()) != Some(labels)
            }
            Change::Deleted(node) => {
                node_labels.remove(&node.name_any());
                false
            }
            Change::Listed => false,
        };
        let all: Vec<ObjectRef<PersistentPodState>> = if changed {
            every_state
                .state()
                .iter()
                .map(|state| ObjectRef::from_obj(state.as_ref()))
                .collect()
        } else {
            Vec::new()
        };
        futures::stream::iter(all)
    });
    let status_controller = Controller::for_shared_stream(state_informer.applied(), state_store)
        .reconcile_on(pod_changes)
        .reconcile_on(set_changes)
        .reconcile_on(advanced_changes)
        .reconcile_on(node_changes);
    let sets_controller = Controller::for_shared_stream(set_informer.applied(), sets);
    let advanced_controller = Controller::for_shared_stream(advanced_informer.applied(), advanced);
    tokio::join!(
        harness::drive(
            status_controller,
            &context,
            status::reconcile,
            status_shared
        ),
        harness::drive(
            sets_controller,
            &context,
            generation::reconcile::<apps::StatefulSet>,
            Arc::clone(&generation_shared)
        ),
        harness::drive(
            advanced_controller,
            &context,
            generation::reconcile::<v1beta1::StatefulSet>,
            generation_shared
        ),
    );
    Ok(())
}

/// The PersistentPodStates following the workload that controls `pod`.
fn states_of_pod(
    pod: &Pod,
    states: &PersistentPodStateStores,
) -> Vec<ObjectRef<PersistentPodState>> {
    let Some(workload) = kruise_schedule::persistent_pod_state::injection::owner_workload(pod)
    else {
        return Vec::new();
    };
    let namespace = pod.namespace().unwrap_or_default();
    targeting(states, &namespace, &workload)
}

/// The PersistentPodStates following `workload`.
fn states_of_workload<K: Resource<DynamicType = ()>>(
    workload: &K,
    states: &PersistentPodStateStores,
) -> Vec<ObjectRef<PersistentPodState>> {
    let reference = kruise_api::apps::v1beta1::TargetReference {
        api_version: K::api_version(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        name: workload.meta().name.clone().unwrap_or_default(),
    };
    let namespace = workload.meta().namespace.clone().unwrap_or_default();
    targeting(states, &namespace, &reference)
}

fn targeting(
    states: &PersistentPodStateStores,
    namespace: &str,
    workload: &kruise_api::apps::v1beta1::TargetReference,
) -> Vec<ObjectRef<PersistentPodState>> {
    states
        .in_namespace(namespace)
        .iter()
        .filter(|state| {
            kruise_schedule::persistent_pod_state::same_workload(
                &state.spec.target_reference,
                workload,
            )
        })
        .map(|state| ObjectRef::from_obj(state.as_ref()))
        .collect()
}

#[cfg(test)]
mod tests {
    use kruise_runtime::Informer;
    use kube::runtime::watcher::Event;
    use serde_json::json;

    use super::*;

    fn stores(states: &[(&str, &str, &str, &str)]) -> PersistentPodStateStores {
        let informer = Informer::new("persistentpodstates");
        informer.apply(Event::Init);
        for (namespace, name, api_version, target) in states {
            informer.apply(Event::InitApply(
                serde_json::from_value(json!({
                    "metadata": {"name": name, "namespace": namespace},
                    "spec": {"targetRef": {"apiVersion": api_version, "kind": "StatefulSet", "name": target}},
                }))
                .unwrap(),
            ));
        }
        informer.apply(Event::InitDone);
        PersistentPodStateStores::from_informer(&informer)
    }

    fn names(found: &[ObjectRef<PersistentPodState>]) -> Vec<&str> {
        found
            .iter()
            .map(|reference| reference.name.as_str())
            .collect()
    }

    fn all() -> PersistentPodStateStores {
        stores(&[
            ("prod", "web-state", "apps.kruise.io/v1alpha1", "web"),
            ("prod", "native-web", "apps/v1", "web"),
            ("prod", "db-state", "apps.kruise.io/v1beta1", "db"),
            ("test", "web-state", "apps.kruise.io/v1beta1", "web"),
        ])
    }

    #[test]
    fn a_pod_change_concerns_the_states_of_its_controller() {
        let states = all();
        let pod = |api_version: &str, kind: &str, controller: bool| -> Pod {
            serde_json::from_value(json!({"metadata": {"name": "web-0", "namespace": "prod",
                "ownerReferences": [{"apiVersion": api_version, "kind": kind, "name": "web",
                    "uid": "u", "controller": controller}]}}))
            .unwrap()
        };
        let rows = [
            (
                pod("apps.kruise.io/v1beta1", "StatefulSet", true),
                vec!["web-state"],
            ),
            (pod("apps/v1", "StatefulSet", true), vec!["native-web"]),
            (pod("apps.kruise.io/v1beta1", "StatefulSet", false), vec![]),
            (pod("apps.kruise.io/v1alpha1", "CloneSet", true), vec![]),
        ];
        for (pod, expected) in rows {
            assert_eq!(names(&states_of_pod(&pod, &states)), expected, "{pod:?}");
        }
    }

    #[test]
    fn a_workload_change_concerns_the_states_targeting_it() {
        let states = all();
        let advanced: v1beta1::StatefulSet = serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "prod"}, "spec": {"selector": {}, "template": {}}}))
        .unwrap();
        assert_eq!(
            names(&states_of_workload(&advanced, &states)),
            ["web-state"]
        );
        let native: apps::StatefulSet = serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "prod"}, "spec": {"selector": {}, "template": {}}}))
        .unwrap();
        assert_eq!(names(&states_of_workload(&native, &states)), ["native-web"]);
        let elsewhere: v1beta1::StatefulSet = serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "staging"}, "spec": {"selector": {}, "template": {}}}))
        .unwrap();
        assert!(states_of_workload(&elsewhere, &states).is_empty());
    }
}
