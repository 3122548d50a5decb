//! The NodePodProbe controller (upstream's `ReconcileNodePodProbe`): reconciles a NodePodProbe when it
//! changes (kruise-daemon writes its status), when a pod of its node changes, and when any marker changes.
//!
//! 1. A NodePodProbe whose node does not exist (deleted while kruise-manager was not running) is deleted.
//! 2. The pods of the spec that no longer exist, are inactive or have another UID are dropped from it.
//! 3. For each live pod of the status, the results become its pod conditions (a strategic merge patch of
//!    `pods/status`) and its marker labels and annotations (a merge patch of the pod), each written only
//!    when it changes something ([`kruise_schedule::pod_probe::pod_marking`]).
//!
//! One NodePodProbe per node is created and deleted with the node by [`super::node_lifecycle`], which
//! runs next to this controller.

use std::sync::Arc;

use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_api::apps::v1alpha1::{NodePodProbe, PodProbeMarker, PodProbeStatus};
use kruise_runtime::Informer;
use kruise_runtime::actions::{self, ActionError};
use kruise_runtime::controllers::{ControllerContext, ControllerError};
use kruise_runtime::harness::{self, object_key};
use kruise_schedule::pod_probe::node_spec::{node_name, retain_live_pods};
use kruise_schedule::pod_probe::pod_marking::{condition_patch, marking, metadata_patch};
use kube::api::Patch;
use kube::runtime::Controller;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client, ResourceExt};

use super::{PodProbeError, node_lifecycle};

/// The controller's name.
pub const NAME: &str = "nodepodprobe";

struct Shared {
    client: Client,
    pods: Informer<Pod>,
    nodes: Store<Node>,
    markers: Store<PodProbeMarker>,
}

/// Runs the controller (and [`node_lifecycle`]) until the context's shutdown.
///
/// # Errors
/// Never; the signature is the controller set's.
pub async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let pods = context.informers.get::<Pod>();
    let node_informer = context.informers.get::<Node>();
    let marker_informer = context.informers.get::<PodProbeMarker>();
    let node_probe_informer = context.informers.get::<NodePodProbe>();
    let Some(nodes) = harness::synced_store(&node_informer, &context).await else {
        return Ok(());
    };
    let Some(markers) = harness::synced_store(&marker_informer, &context).await else {
        return Ok(());
    };
    let Some(store) = harness::synced_store(&node_probe_informer, &context).await else {
        return Ok(());
    };
    tokio::select! {
        () = pods.wait_synced() => {}
        () = context.shutdown.clone().wait() => return Ok(()),
    }
    let lifecycle = node_lifecycle::run(
        context.client.clone(),
        node_informer,
        store.clone(),
        context.shutdown.clone(),
    );
    let every_probe = store.clone();
    let controller = Controller::for_shared_stream(node_probe_informer.applied(), store)
        .watches_shared_stream(pods.objects(), |pod: Arc<Pod>| {
            let node = node_name(&pod);
            (!node.is_empty()).then(|| ObjectRef::<NodePodProbe>::new(node))
        })
        .watches_shared_stream(marker_informer.objects(), move |_marker| {
            every_probe
                .state()
                .iter()
                .map(|probe| ObjectRef::from_obj(probe.as_ref()))
                .collect::<Vec<_>>()
        });
    let shared = Arc::new(Shared {
        client: context.client.clone(),
        pods,
        nodes,
        markers,
    });
    tokio::join!(
        harness::drive(controller, &context, reconcile, shared),
        lifecycle
    );
    Ok(())
}

/// The pod a NodePodProbe entry names, when it exists with that UID and is active.
fn live_pod(pods: &Informer<Pod>, namespace: &str, name: &str, uid: &str) -> Option<Arc<Pod>> {
    pods.get(&ObjectRef::new(name).within(namespace))
        .filter(|pod| pod.uid().as_deref() == Some(uid) && kruise_api::pod::is_active(pod))
}

async fn reconcile(probe: Arc<NodePodProbe>, shared: Arc<Shared>) -> Result<Action, PodProbeError> {
    if probe.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let api: Api<NodePodProbe> = Api::all(shared.client.clone());
    if shared
        .nodes
        .get(&ObjectRef::new(&probe.name_any()))
        .is_none()
    {
        actions::delete(&api, &probe).await?;
        tracing::info!(node = %probe.name_any(), "deleted the NodePodProbe of a node that is gone");
        return Ok(Action::await_change());
    }
    let spec = retain_live_pods(&probe.spec, |entry| {
        live_pod(&shared.pods, &entry.namespace, &entry.name, &entry.uid).is_some()
    });
    if spec != probe.spec {
        let mut updated = (*probe).clone();
        updated.spec = spec;
        actions::replace(&api, &updated).await?;
        tracing::info!(node = %probe.name_any(), "dropped the probes of pods that are gone");
    }
    for status in probe
        .status
        .iter()
        .flat_map(|status| status.pod_probe_statuses.iter())
    {
        let Some(pod) = live_pod(&shared.pods, &status.namespace, &status.name, &status.uid) else {
            continue;
        };
        mark_pod(&shared, &pod, status).await?;
    }
    Ok(Action::await_change())
}

async fn mark_pod(shared: &Shared, pod: &Pod, status: &PodProbeStatus) -> Result<(), ActionError> {
    let markers: Vec<Arc<PodProbeMarker>> = shared
        .markers
        .state()
        .into_iter()
        .filter(|marker| {
            marker.namespace().as_deref() == Some(status.namespace.as_str())
                && marker.metadata.deletion_timestamp.is_none()
        })
        .collect();
    let wanted = marking(status, |name| {
        markers
            .iter()
            .find(|marker| marker.name_any() == name)
            .map(AsRef::as_ref)
    });
    let api: Api<Pod> = Api::namespaced(shared.client.clone(), &status.namespace);
    let subject = object_key(pod);
    if let Some(patch) = condition_patch(pod, &wanted) {
        ignore_gone(
            actions::patch(
                &api,
                &subject,
                &status.name,
                Some("status"),
                &Patch::Strategic(&patch),
            )
            .await,
        )?;
        tracing::info!(pod = %subject, %patch, "wrote probe conditions");
    }
    if let Some(patch) = metadata_patch(pod, &wanted) {
        ignore_gone(
            actions::patch(&api, &subject, &status.name, None, &Patch::Merge(&patch)).await,
        )?;
        tracing::info!(pod = %subject, %patch, "wrote probe markers");
    }
    Ok(())
}

/// A pod deleted meanwhile is no failure.
fn ignore_gone(result: Result<Pod, ActionError>) -> Result<(), ActionError> {
    match result {
        Ok(_) | Err(ActionError::NotFound { .. }) => Ok(()),
        Err(error) => Err(error),
    }
}
