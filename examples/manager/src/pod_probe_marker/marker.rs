//! The PodProbeMarker controller (upstream's `ReconcilePodProbeMarker`): reconciles a marker when it
//! changes and when a pod of its namespace changes.
//!
//! 1. A marker being deleted: its probes are removed from every NodePodProbe that has them, then its
//!    finalizer `kruise.io/node-pod-probe-cleanup` is removed.
//! 2. Otherwise the finalizer is added, the marker's probes are merged into the NodePodProbe of each node
//!    running a pod it probes (the NodePodProbe is created when the node has none yet, rather than
//!    waiting for the NodePodProbe controller), and `status.matchedPods` and
//!    `status.observedGeneration` are written when they change.
//!
//! Writes are conditional on the `resourceVersion` read; a conflict is retried from the informers.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1alpha1::{
    NodePodProbe, NodePodProbeSpec, PodProbeMarker, PodProbeMarkerStatus,
};
use kruise_runtime::Indexed;
use kruise_runtime::actions::{self, ActionError};
use kruise_runtime::controllers::{ControllerContext, ControllerError};
use kruise_runtime::harness::{self, object_key};
use kruise_schedule::pod_probe::CLEANUP_FINALIZER;
use kruise_schedule::pod_probe::node_spec::{
    matching_pods, merge_marker, node_name, remove_marker,
};
use kube::api::Patch;
use kube::runtime::Controller;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use super::PodProbeError;

/// The controller's name.
pub const NAME: &str = "podprobemarker";

struct Shared {
    client: Client,
    /// The pods, by namespace.
    pods: Indexed<Pod>,
    node_probes: Store<NodePodProbe>,
}

/// Runs the controller until the context's shutdown.
///
/// # Errors
/// Never; the signature is the controller set's.
pub async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let pod_informer = context.informers.get::<Pod>();
    let pods = pod_informer.index(
        "podprobemarker-namespace",
        Arc::new(|pod: &Pod| pod.namespace().into_iter().collect()),
    );
    let node_probe_informer = context.informers.get::<NodePodProbe>();
    let marker_informer = context.informers.get::<PodProbeMarker>();
    let Some(node_probes) = harness::synced_store(&node_probe_informer, &context).await else {
        return Ok(());
    };
    let Some(store) = harness::synced_store(&marker_informer, &context).await else {
        return Ok(());
    };
    tokio::select! {
        () = pod_informer.wait_synced() => {}
        () = context.shutdown.clone().wait() => return Ok(()),
    }
    let shared = Arc::new(Shared {
        client: context.client.clone(),
        pods,
        node_probes,
    });
    let markers = store.clone();
    let controller = Controller::for_shared_stream(marker_informer.applied(), store)
        .watches_shared_stream(pod_informer.objects(), move |pod: Arc<Pod>| {
            let namespace = pod.namespace();
            markers
                .state()
                .iter()
                .filter(|marker| marker.namespace() == namespace)
                .map(|marker| ObjectRef::from_obj(marker.as_ref()))
                .collect::<Vec<_>>()
        });
    harness::drive(controller, &context, reconcile, shared).await;
    Ok(())
}

async fn reconcile(
    marker: Arc<PodProbeMarker>,
    shared: Arc<Shared>,
) -> Result<Action, PodProbeError> {
    let namespace = marker.namespace().unwrap_or_default();
    let name = marker.name_any();
    let markers: Api<PodProbeMarker> = Api::namespaced(shared.client.clone(), &namespace);
    let has_finalizer = marker.finalizers().iter().any(|f| f == CLEANUP_FINALIZER);
    if marker.metadata.deletion_timestamp.is_some() {
        if has_finalizer {
            remove_from_node_probes(&shared, &namespace, &name).await?;
            let kept: Vec<&String> = marker
                .finalizers()
                .iter()
                .filter(|f| *f != CLEANUP_FINALIZER)
                .collect();
            set_finalizers(&markers, &marker, &kept).await?;
            tracing::info!(marker = %object_key(marker.as_ref()), "removed its probes from the NodePodProbes");
        }
        return Ok(Action::await_change());
    }
    if !has_finalizer {
        let mut finalizers: Vec<&String> = marker.finalizers().iter().collect();
        let added = CLEANUP_FINALIZER.to_owned();
        finalizers.push(&added);
        set_finalizers(&markers, &marker, &finalizers).await?;
        // The finalizer write changes the marker: the next reconcile carries on from there.
        return Ok(Action::await_change());
    }
    let pods = shared.pods.get(&namespace);
    let pods: Vec<&Pod> = pods.iter().map(AsRef::as_ref).collect();
    let matched = matching_pods(&marker, &pods);
    let mut by_node: BTreeMap<&str, Vec<&Pod>> = BTreeMap::new();
    for pod in &matched {
        by_node.entry(node_name(pod)).or_default().push(pod);
    }
    for (node, pods) in &by_node {
        merge_into_node_probe(&shared, &marker, node, pods).await?;
    }
    let status = PodProbeMarkerStatus {
        observed_generation: marker.metadata.generation.unwrap_or_default(),
        matched_pods: i64::try_from(matched.len()).unwrap_or(i64::MAX),
    };
    if marker.status.as_ref() != Some(&status) {
        actions::replace_status(&markers, marker.as_ref(), &status).await?;
    }
    Ok(Action::await_change())
}

async fn merge_into_node_probe(
    shared: &Shared,
    marker: &PodProbeMarker,
    node: &str,
    pods: &[&Pod],
) -> Result<(), ActionError> {
    let api: Api<NodePodProbe> = Api::all(shared.client.clone());
    match shared.node_probes.get(&ObjectRef::new(node)) {
        Some(current) => {
            let spec = merge_marker(&current.spec, marker, pods);
            if spec != current.spec {
                let mut updated = (*current).clone();
                updated.spec = spec;
                actions::replace(&api, &updated).await?;
                tracing::info!(marker = %object_key(marker), %node, "merged its probes into the NodePodProbe");
            }
        }
        None => {
            let spec = merge_marker(&NodePodProbeSpec::default(), marker, pods);
            actions::create(&api, &NodePodProbe::new(node, spec)).await?;
            tracing::info!(marker = %object_key(marker), %node, "created the NodePodProbe");
        }
    }
    Ok(())
}

async fn remove_from_node_probes(
    shared: &Shared,
    namespace: &str,
    marker: &str,
) -> Result<(), ActionError> {
    let api: Api<NodePodProbe> = Api::all(shared.client.clone());
    for current in shared.node_probes.state() {
        let spec = remove_marker(&current.spec, namespace, marker);
        if spec != current.spec {
            let mut updated = (*current).clone();
            updated.spec = spec;
            actions::replace(&api, &updated).await?;
        }
    }
    Ok(())
}

/// Sets the marker's finalizers, conditional on the `resourceVersion` read.
async fn set_finalizers(
    api: &Api<PodProbeMarker>,
    marker: &PodProbeMarker,
    finalizers: &[&String],
) -> Result<(), ActionError> {
    let patch = json!({"metadata": {
        "finalizers": finalizers,
        "resourceVersion": marker.resource_version(),
    }});
    actions::patch(
        api,
        &object_key(marker),
        &marker.name_any(),
        None,
        &Patch::Merge(&patch),
    )
    .await
    .map(drop)
}
