//! One status reconcile: observe the target workload, its active pods and their nodes, and write the
//! status [`kruise_schedule::persistent_pod_state::status::next_status`] makes of them.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_api::apps::v1alpha1::PersistentPodState;
use kruise_runtime::Indexed;
use kruise_runtime::actions;
use kruise_schedule::persistent_pod_state::status::{StatusInput, next_status};
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client, ResourceExt};

use super::PersistentPodStateError;
use super::workloads::Workloads;

/// When to look again at a state one of whose pods runs on a node not in the store yet.
const NODE_RETRY: Duration = Duration::from_secs(5);

/// What every status reconcile shares.
pub(super) struct Shared {
    pub(super) client: Client,
    pub(super) workloads: Workloads,
    /// Pods by their controller's UID.
    pub(super) pods: Indexed<Pod>,
    pub(super) nodes: Store<Node>,
}

/// Not finished and not being deleted (upstream `IsPodActive`).
fn is_active(pod: &Pod) -> bool {
    let phase = pod
        .status
        .as_ref()
        .and_then(|status| status.phase.as_deref())
        .unwrap_or_default();
    pod.metadata.deletion_timestamp.is_none() && phase != "Succeeded" && phase != "Failed"
}

pub(super) async fn reconcile(
    state: Arc<PersistentPodState>,
    shared: Arc<Shared>,
) -> Result<Action, PersistentPodStateError> {
    if state.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let namespace = state.namespace().unwrap_or_default();
    let found = shared
        .workloads
        .find(&namespace, &state.spec.target_reference);
    let pods: Vec<Pod> = found
        .as_ref()
        .map(|found| {
            shared
                .pods
                .get(&found.uid)
                .iter()
                .filter(|pod| pod.namespace().as_deref() == Some(namespace.as_str()))
                .filter(|pod| is_active(pod))
                .map(|pod| (**pod).clone())
                .collect()
        })
        .unwrap_or_default();
    let mut node_labels = BTreeMap::new();
    let mut missing_node = false;
    for node in pods
        .iter()
        .filter_map(|pod| pod.spec.as_ref()?.node_name.as_deref())
    {
        match shared.nodes.get(&ObjectRef::new(node)) {
            Some(found) => {
                node_labels.insert(
                    node.to_owned(),
                    found.metadata.labels.clone().unwrap_or_default(),
                );
            }
            None => missing_node = true,
        }
    }
    let status = next_status(&StatusInput {
        spec: &state.spec,
        previous: state.status.as_ref(),
        generation: state.metadata.generation.unwrap_or_default(),
        workload: found.as_ref().map(|found| &found.view),
        pods: &pods,
        node_labels: &node_labels,
    });
    if state.status.as_ref() != Some(&status) {
        let api: Api<PersistentPodState> = Api::namespaced(shared.client.clone(), &namespace);
        actions::replace_status(&api, state.as_ref(), &status).await?;
        tracing::info!(
            state = %format!("{namespace}/{}", state.name_any()),
            pods = status.pod_states.len(),
            "wrote the pod states"
        );
    }
    Ok(if missing_node {
        Action::requeue(NODE_RETRY)
    } else {
        Action::await_change()
    })
}
