//! The Job sidecar terminator in kruise-manager (upstream `pkg/controller/sidecarterminator`): for every pod,
//! runs [`kruise_sidecar::terminator::decide`] and executes the plan in upstream's order: swap the image of `..._WITH_IMAGE` sidecars in place (a strategic merge patch
//! of the pod's containers), set the pod's terminal phase with the `SidecarTerminated` condition, then create
//! the ContainerRecreateRequest `sidecar-termination-<pod uid>` (owned by the pod, `forceRecreate`,
//! `failurePolicy: Ignore`) that makes kruise-daemon stop the other sidecars.

use kruise_runtime::actions::is_conflict;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::ContainerRecreateRequest;
use kruise_api::keys::crr as crr_keys;
use kruise_sidecar::terminator::{decide, terminated_condition};
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use kruise_runtime::Informer;
use kruise_runtime::harness::{self, object_key};
use kube::runtime::reflector::ObjectRef;

use crate::actions::ActionError;
use crate::controllers::{ControllerContext, ControllerError, ControllerSet};

/// The controller's name.
pub const NAME: &str = "sidecarterminator";

struct Context {
    client: Client,
    nodes: Informer<Node>,
}

/// Adds the controller to `controllers`.
pub fn register(controllers: &mut ControllerSet) {
    controllers.register_fn(NAME, run);
}

/// Runs the controller until the context's shutdown.
///
/// # Errors
/// Never; the signature is the controller set's.
pub async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let nodes = context.informers.get::<Node>();
    let pods = context.informers.get::<Pod>();
    // Whether a pod runs on a virtual kubelet is read from the node informer: wait for its first list.
    if harness::synced_store(&nodes, &context).await.is_none() {
        return Ok(());
    }
    let shared = Arc::new(Context {
        client: context.client.clone(),
        nodes,
    });
    // The shared pod informer keeps pods packed (no kube-runtime store): the controller owns a store of
    // the pods it may act on, those that pass the cheap filter of `sync`.
    let (store, candidates) = pods.applied_where(|pod| decide(pod, false).is_some());
    let controller = Controller::for_shared_stream(candidates, store);
    harness::drive(controller, &context, reconcile, shared).await;
    Ok(())
}

async fn reconcile(pod: Arc<Pod>, context: Arc<Context>) -> Result<Action, ActionError> {
    sync(&pod, &context).await
}

fn on_virtual_kubelet(nodes: &Informer<Node>, pod: &Pod) -> bool {
    let Some(node) = pod.spec.as_ref().and_then(|spec| spec.node_name.as_deref()) else {
        return false;
    };
    nodes
        .get(&ObjectRef::new(node))
        .and_then(|node| {
            node.metadata
                .labels
                .as_ref()?
                .get(crr_keys::VIRTUAL_KUBELET_TYPE_LABEL)
                .cloned()
        })
        .is_some_and(|value| value == crr_keys::VIRTUAL_KUBELET_TYPE)
}

async fn sync(pod: &Pod, context: &Context) -> Result<Action, ActionError> {
    // Cheap filters first: only finished-or-finishing Job-like pods with sidecars are looked at closely.
    if decide(pod, false).is_none() {
        return Ok(Action::await_change());
    }
    let virtual_kubelet = on_virtual_kubelet(&context.nodes, pod);
    let Some(plan) = decide(pod, virtual_kubelet) else {
        return Ok(Action::await_change());
    };
    let namespace = pod.namespace().unwrap_or_default();
    let pods: Api<Pod> = Api::namespaced(context.client.clone(), &namespace);
    let failed = |error| ActionError::from_kube(object_key(pod), error);
    if !plan.swap_images.is_empty() {
        let containers: Vec<_> = plan
            .swap_images
            .iter()
            .map(|(name, image)| json!({"name": name, "image": image}))
            .collect();
        let patch = json!({"metadata": {"resourceVersion": pod.resource_version()}, "spec": {"containers": containers}});
        pods.patch(
            &pod.name_any(),
            &PatchParams::default(),
            &Patch::Strategic(&patch),
        )
        .await
        .map_err(failed)?;
        tracing::info!(pod = %object_key(pod), swaps = ?plan.swap_images, "swapped sidecar images to end them");
    }
    if let Some(terminal) = plan.terminate {
        let patch = json!({"metadata": {"resourceVersion": pod.resource_version()}, "status": {
            "phase": terminal.phase(),
            "conditions": [terminated_condition(Timestamp::now())],
        }});
        match pods
            .patch_status(
                &pod.name_any(),
                &PatchParams::default(),
                &Patch::Strategic(&patch),
            )
            .await
        {
            Ok(_) => {
                tracing::info!(pod = %object_key(pod), phase = terminal.phase(), "main containers done: ended the pod");
            }
            // A newer pod (the image patch above, or kubelet): decide again from it.
            Err(error) if is_conflict(&error) => {
                return Ok(Action::requeue(Duration::from_millis(100)));
            }
            Err(error) => return Err(failed(error)),
        }
    }
    let Some(crr) = plan.recreate_request(pod) else {
        return Ok(Action::await_change());
    };
    let crrs: Api<ContainerRecreateRequest> = Api::namespaced(context.client.clone(), &namespace);
    let name = plan.crr_name(pod);
    match crrs.create(&PostParams::default(), &crr).await {
        Ok(_) => {
            tracing::info!(pod = %object_key(pod), sidecars = ?plan.kill, request = %name, "asked kruise-daemon to stop the sidecars");
        }
        Err(error) if is_conflict(&error) => {}
        Err(error) => return Err(ActionError::from_kube(name, error)),
    }
    Ok(Action::await_change())
}
