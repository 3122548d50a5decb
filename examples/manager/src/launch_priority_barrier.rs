//! The container launch priority controller of kruise-manager (upstream
//! `pkg/controller/containerlaunchpriority`): for every pod whose containers wait on a launch barrier (the
//! `KRUISE_CONTAINER_BARRIER` env the pod webhook injects), not yet marked complete and not all ready, it
//! creates the `<pod>-barrier` ConfigMap (owned by the pod, so it goes with it), adds the next priority's
//! `p_<priority>: "true"` key once the containers of higher priority are ready, and sets
//! `apps.kruise.io/container-launch-priority-completed: "true"` on the pod when the last key is in. The
//! decisions are [`kruise_inplace::launch_barrier`]'s; pods come from the shared informer (only those the
//! controller acts on are kept).
//!
//! The barrier is read with one GET per pass, not from a ConfigMap informer: only pods still starting
//! their containers are reconciled, a few passes each, while an informer would hold every ConfigMap of
//! the cluster in memory.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kruise_api::keys::launch_priority::{
    BARRIER_CONFIG_MAP_SUFFIX, LAUNCH_PRIORITY_COMPLETED_ANNOTATION,
};
use kruise_inplace::launch_barrier::{self, BarrierStep};
use kruise_runtime::actions::{is_conflict, is_not_found};
use kruise_runtime::harness::{self, object_key};
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use crate::actions::ActionError;
use crate::controllers::{ControllerContext, ControllerError, ControllerSet};

/// The controller's name.
pub const NAME: &str = "containerlaunchpriority";

struct Context {
    client: Client,
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
    let pods = context.informers.get::<Pod>();
    let shared = Arc::new(Context {
        client: context.client.clone(),
    });
    let (store, candidates) = pods.applied_where(launch_barrier::wants_attention);
    let controller = Controller::for_shared_stream(candidates, store);
    harness::drive(controller, &context, reconcile, shared).await;
    Ok(())
}

/// The name of a pod's barrier ConfigMap.
#[must_use]
pub fn barrier_name(pod_name: &str) -> String {
    format!("{pod_name}{BARRIER_CONFIG_MAP_SUFFIX}")
}

/// The barrier ConfigMap of `pod`, owned by it, without data.
#[must_use]
pub fn new_barrier(pod: &Pod) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(barrier_name(&pod.name_any())),
            namespace: pod.namespace(),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "Pod".into(),
                name: pod.name_any(),
                uid: pod.metadata.uid.clone().unwrap_or_default(),
                ..OwnerReference::default()
            }]),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

async fn reconcile(pod: Arc<Pod>, context: Arc<Context>) -> Result<Action, ActionError> {
    if !launch_barrier::wants_attention(&pod) || pod.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let namespace = pod.namespace().unwrap_or_default();
    let config_maps: Api<ConfigMap> = Api::namespaced(context.client.clone(), &namespace);
    let name = barrier_name(&pod.name_any());
    let failed = |error| ActionError::from_kube(format!("ConfigMap {namespace}/{name}"), error);
    let data: BTreeMap<String, String> = match config_maps.get_opt(&name).await.map_err(failed)? {
        Some(barrier) => barrier.data.unwrap_or_default(),
        None => {
            match config_maps
                .create(&PostParams::default(), &new_barrier(&pod))
                .await
            {
                Ok(_) => {
                    tracing::info!(pod = %object_key(pod.as_ref()), barrier = %name, "created the launch barrier");
                }
                Err(error) if is_conflict(&error) => {}
                Err(error) => return Err(failed(error)),
            }
            BTreeMap::new()
        }
    };
    let BarrierStep { add, completed } = launch_barrier::decide(&pod, &data);
    if let Some(key) = add {
        let patch = json!({"data": {key.clone(): "true"}});
        config_maps
            .patch(&name, &PatchParams::default(), &Patch::Strategic(&patch))
            .await
            .map_err(failed)?;
        tracing::info!(pod = %object_key(pod.as_ref()), barrier = %name, %key, "released the next launch priority");
    }
    if completed {
        let pods: Api<Pod> = Api::namespaced(context.client.clone(), &namespace);
        let patch =
            json!({"metadata": {"annotations": {LAUNCH_PRIORITY_COMPLETED_ANNOTATION: "true"}}});
        match pods
            .patch(
                &pod.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
        {
            Ok(_) => {
                tracing::info!(pod = %object_key(pod.as_ref()), "every launch priority released");
            }
            Err(error) if is_not_found(&error) => {}
            Err(error) => return Err(ActionError::from_kube(object_key(pod.as_ref()), error)),
        }
    }
    Ok(Action::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_barrier_is_owned_by_its_pod() {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "web-0", "namespace": "ns", "uid": "u-1"},
        }))
        .unwrap();
        let barrier = new_barrier(&pod);
        assert_eq!(barrier.metadata.name.as_deref(), Some("web-0-barrier"));
        assert_eq!(barrier.metadata.namespace.as_deref(), Some("ns"));
        let owner = &barrier.metadata.owner_references.unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()),
            ("Pod", "web-0", "u-1")
        );
        assert!(barrier.data.is_none());
    }
}
