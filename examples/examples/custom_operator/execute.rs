//! Carrying out a plan, action after action in the planned order, stopping at the first failure (the next
//! reconcile plans again from what the API server then has). Each action is logged with the planner's rule
//! for it before it is sent.
//!
//! kruise-manager does more (`examples/manager/src/cloneset/execute.rs`): it creates each slow-start batch
//! concurrently, patches several pods at once, and records expectations and Events.

use std::collections::HashMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_inplace::{Subresource, Write};
use kruise_lifecycle::PodChange;
use kruise_schedule::cloneset::{Action, ActionKind, Plan};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Resource as _, ResourceExt as _};
use serde_json::Value;

use crate::error::ReconcileError;
use crate::fleet::{FIELD_MANAGER, PodFleet};

/// The fleet a plan is carried out for, and the pods the plan's indexes refer to.
pub struct Target<'a> {
    /// The fleet (owner of the new pods).
    pub fleet: &'a PodFleet,
    /// `namespace/name` of the fleet.
    pub key: &'a str,
    /// The pod API of the fleet's namespace.
    pub api: &'a Api<Pod>,
    /// The pods the plan was made from.
    pub pods: &'a [Pod],
    /// The time the plan was made at.
    pub now: Timestamp,
}

/// Executes `plan`'s actions for `target` in order.
///
/// # Errors
/// The first request that failed; the actions before it stand.
pub async fn execute(target: &Target<'_>, plan: &Plan) -> Result<(), ReconcileError> {
    // The pods as this plan's own writes left them, so that a second write to a pod starts from the first.
    let mut written: HashMap<usize, Pod> = HashMap::new();
    for action in &plan.actions {
        println!(
            "{}: {} {}: {}",
            target.key,
            action.kind.name(),
            action.object_name(target.pods, &[]),
            action.reason()
        );
        let Some(index) = action.kind.pod() else {
            create(target, action).await?;
            continue;
        };
        let Some(pod) = written
            .get(&index)
            .or_else(|| target.pods.get(index))
            .cloned()
        else {
            continue;
        };
        if let ActionKind::DeletePod { .. } = action.kind {
            delete(target, &pod).await?;
        } else if let Some(updated) = patch(target, plan, &action.kind, &pod).await? {
            written.insert(index, updated);
        }
    }
    Ok(())
}

/// Creates the pod of a scale-up, owned by the fleet instead of the CloneSet the planner was given.
async fn create(target: &Target<'_>, action: &Action) -> Result<(), ReconcileError> {
    let ActionKind::CreatePod { pod, .. } = &action.kind else {
        // Claims: a PodFleet has no volume claim templates, so the planner plans none.
        return Ok(());
    };
    let mut pod = (**pod).clone();
    pod.metadata.owner_references = target
        .fleet
        .controller_owner_ref(&())
        .map(|owner| vec![owner]);
    target
        .api
        .create(&PostParams::default(), &pod)
        .await
        .map_err(|source| api_error(target, "create", &pod, source))?;
    Ok(())
}

/// Deletes a pod (the planner chose it for scale-down or for recreation at the new revision).
async fn delete(target: &Target<'_>, pod: &Pod) -> Result<(), ReconcileError> {
    match target
        .api
        .delete(&pod.name_any(), &DeleteParams::default())
        .await
    {
        // Already gone: what the plan wanted.
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(source) => Err(api_error(target, "delete", pod, source)),
        Ok(_) => Ok(()),
    }
}

/// Sends the writes of an action on an existing pod; returns the pod as the last write left it.
async fn patch(
    target: &Target<'_>,
    plan: &Plan,
    kind: &ActionKind,
    pod: &Pod,
) -> Result<Option<Pod>, ReconcileError> {
    match kind {
        // Start an in-place update: `kruise_inplace::apply` renders the JSON patches (InPlaceUpdateReady to
        // False on the status, then the new image, revision label and update state on the pod), each testing
        // the resourceVersion of the pod it was rendered from.
        ActionKind::UpdateInPlace { .. } => {
            let Some(outcome) = kind.in_place_outcome(pod, target.now, &plan.update_options) else {
                return Ok(None);
            };
            let outcome = outcome.map_err(|source| ReconcileError::InPlace {
                fleet: target.key.to_owned(),
                pod: pod.name_any(),
                source,
            })?;
            send_json(target, pod, &outcome.writes).await
        }
        // The next step of an in-place update (InPlaceUpdateReady back to True once the kubelet restarted
        // the container), rendered by the planner.
        ActionKind::RefreshInPlace { outcome, .. } => send_json(target, pod, &outcome.writes).await,
        // A lifecycle state change (`PreparingNormal` → `Normal` after creation, `Updated` → `Normal`, …).
        ActionKind::Lifecycle { transition, .. } => {
            send_lifecycle(target, pod, &transition.change).await
        }
        // A label (`apps.kruise.io/specified-delete` to recreate a pod at the new revision, say).
        other => match other
            .metadata_change()
            .and_then(|change| change.strategic_merge_patch())
        {
            Some(patch) => strategic(target, pod, None, &patch).await.map(Some),
            None => Ok(None),
        },
    }
}

/// Sends RFC 6902 patches of `kruise_inplace`, each to its subresource.
async fn send_json(
    target: &Target<'_>,
    pod: &Pod,
    writes: &[Write],
) -> Result<Option<Pod>, ReconcileError> {
    let params = patch_params();
    let name = pod.name_any();
    let mut last = None;
    for write in writes {
        let patch = Patch::Json::<()>(write.patch.clone());
        let sent = match write.subresource {
            Subresource::Pod => target.api.patch(&name, &params, &patch).await,
            Subresource::Status => target.api.patch_status(&name, &params, &patch).await,
            Subresource::Resize => {
                target
                    .api
                    .patch_subresource("resize", &name, &params, &patch)
                    .await
            }
        };
        last = Some(sent.map_err(|source| api_error(target, "patch", pod, source))?);
    }
    Ok(last)
}

/// Sends a lifecycle change: conditions through the `status` subresource first, then the labels.
async fn send_lifecycle(
    target: &Target<'_>,
    pod: &Pod,
    change: &PodChange,
) -> Result<Option<Pod>, ReconcileError> {
    let mut last = None;
    if let Some(patch) = change.status.strategic_merge_patch(pod) {
        last = Some(strategic(target, pod, Some("status"), &patch).await?);
    }
    if let Some(patch) = change.metadata.strategic_merge_patch() {
        last = Some(strategic(target, pod, None, &patch).await?);
    }
    Ok(last)
}

/// A strategic-merge patch of the pod or of one of its subresources.
async fn strategic(
    target: &Target<'_>,
    pod: &Pod,
    subresource: Option<&str>,
    patch: &Value,
) -> Result<Pod, ReconcileError> {
    let params = patch_params();
    let name = pod.name_any();
    let patch = Patch::Strategic(patch);
    let sent = match subresource {
        Some(subresource) => {
            target
                .api
                .patch_subresource(subresource, &name, &params, &patch)
                .await
        }
        None => target.api.patch(&name, &params, &patch).await,
    };
    sent.map_err(|source| api_error(target, "patch", pod, source))
}

/// Patches name this operator as their field manager.
fn patch_params() -> PatchParams {
    PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    }
}

fn api_error(target: &Target<'_>, verb: &str, pod: &Pod, source: kube::Error) -> ReconcileError {
    ReconcileError::Api {
        fleet: target.key.to_owned(),
        what: format!(
            "{verb} pod {}/{}",
            pod.namespace().unwrap_or_default(),
            pod.name_any()
        ),
        source,
    }
}
