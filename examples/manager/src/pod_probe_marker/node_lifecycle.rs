//! One NodePodProbe per node, named after it (upstream's NodePodProbe controller creates it when the
//! node appears and deletes it when the node goes): follows the shared Node informer, creates the
//! NodePodProbe of every node that has none, and deletes it when the node is deleted or being deleted.
//! A failed write is logged and tried again on the node's next change (nodes change with every
//! heartbeat).

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Node;
use kruise_api::apps::v1alpha1::{NodePodProbe, NodePodProbeSpec};
use kruise_runtime::actions::{self, ActionError};
use kruise_runtime::shutdown::Shutdown;
use kruise_runtime::{Change, Informer};
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client, ResourceExt};

/// Follows `nodes` until `shutdown`, keeping one NodePodProbe per node.
pub async fn run(
    client: Client,
    nodes: Informer<Node>,
    node_probes: Store<NodePodProbe>,
    shutdown: Shutdown,
) {
    let api: Api<NodePodProbe> = Api::all(client);
    let mut changes = Box::pin(nodes.subscribe());
    loop {
        let change = tokio::select! {
            change = changes.next() => change,
            () = shutdown.clone().wait() => None,
        };
        let Some(change) = change else {
            return;
        };
        let (node, gone) = match change {
            Change::Applied(node) => {
                let gone = node.metadata.deletion_timestamp.is_some();
                (node, gone)
            }
            Change::Deleted(node) => (node, true),
            Change::Listed => continue,
        };
        sync_node(&api, &node_probes, &node, gone).await;
    }
}

async fn sync_node(
    api: &Api<NodePodProbe>,
    node_probes: &Store<NodePodProbe>,
    node: &Arc<Node>,
    gone: bool,
) {
    let name = node.name_any();
    let existing = node_probes.get(&ObjectRef::new(&name));
    let result = match (existing, gone) {
        (None, false) => {
            actions::create(api, &NodePodProbe::new(&name, NodePodProbeSpec::default()))
                .await
                .map(|_| tracing::info!(node = %name, "created the NodePodProbe"))
        }
        (Some(probe), true) if probe.metadata.deletion_timestamp.is_none() => {
            actions::delete(api, &probe).await.map(
                |()| tracing::info!(node = %name, "deleted the NodePodProbe of a deleted node"),
            )
        }
        _ => Ok(()),
    };
    match result {
        // Created meanwhile (by the PodProbeMarker controller), or changed since read: the store catches up.
        Ok(()) | Err(ActionError::Conflict { .. }) => {}
        Err(error) => {
            tracing::warn!(%error, node = %name, "keeping the node's NodePodProbe failed");
        }
    }
}
