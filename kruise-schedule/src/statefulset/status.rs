//! The status an Advanced StatefulSet plan writes (upstream `updateStatus`, `computeReplicaStatus`,
//! `updatePVCStatus` and `completeRollingUpdate`).

use kruise_api::apps::v1beta1::StatefulSetStatus;

use super::ordinals::ordinal_of;
use super::pass::Pass;
use super::plan::{Counted, Ctx, Occupant};
use super::volume_claims;
use crate::pod_view;
use crate::selector_string::selector_string;

/// The status after the pass: counts over the pods in slots and the condemned pods (pods to create and pods
/// without an ordinal are not counted), minus the pods the update step deleted or started to update in
/// place; then, with `RollingUpdate`, the rollout completes when every pod is updated and ready.
pub(crate) fn status(ctx: &Ctx<'_>, counted: Counted<'_>, pass: &Pass) -> StatefulSetStatus {
    let set = ctx.set;
    let old = set.status.as_ref();
    let revisions = ctx.input.revisions;
    let mut status = StatefulSetStatus {
        observed_generation: set.metadata.generation.unwrap_or(0),
        current_revision: revisions.current.to_owned(),
        update_revision: revisions.update.to_owned(),
        collision_count: Some(old.and_then(|s| s.collision_count).unwrap_or(0)),
        label_selector: selector_string(&set.spec.selector),
        ..StatefulSetStatus::default()
    };
    let mut count = |index: usize| {
        let Some(pod) = ctx.pod(index) else {
            return;
        };
        let health = ctx.health(index);
        let at_update = pod_view::revision_is(pod, revisions.update);
        if health.created {
            status.replicas += 1;
        }
        if health.running_ready {
            status.ready_replicas += 1;
            if at_update {
                status.updated_ready_replicas += 1;
                if health.available {
                    status.updated_available_replicas += 1;
                }
            }
            if health.available {
                status.available_replicas += 1;
            }
        }
        if health.created && !health.terminating {
            if pod_view::revision_is(pod, revisions.current) {
                status.current_replicas += 1;
            }
            if at_update {
                status.updated_replicas += 1;
            }
        }
    };
    match counted {
        Counted::AllPods => {
            (0..ctx.input.pods.len()).for_each(&mut count);
            let ordinals = ctx
                .input
                .pods
                .iter()
                .filter_map(|pod| ordinal_of(pod_view::name(pod)).map(i64::from));
            status.volume_claims = volume_claims::status(ctx, ordinals);
        }
        Counted::Split(slots, condemned) => {
            for slot in slots {
                if let Occupant::Pod(index) = slot.occupant {
                    count(index);
                }
            }
            condemned.iter().copied().for_each(&mut count);
            // Upstream counts the claims of every kept slot, a pod about to be created included.
            status.volume_claims = volume_claims::status(ctx, slots.iter().map(|s| s.ordinal));
        }
    }
    status.current_replicas -= pass.current_gone;
    status.updated_replicas -= pass.updated_gone;
    if ctx.rolling_type()
        && status.updated_replicas == status.replicas
        && status.ready_replicas == status.replicas
    {
        status.current_replicas = status.updated_replicas;
        status.current_revision.clone_from(&status.update_revision);
    }
    status
}
