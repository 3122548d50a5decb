//! The slot walk and the condemned pods (upstream `processReplica`, `processCondemned`): create
//! missing pods, delete finished ones, and in `OrderedReady` (monotonic) mode go one pod at a time, waiting
//! for each to be Running and available; delete condemned pods from the highest ordinal down.

use kruise_api::keys;

use super::action::{ActionKind, Condemned, Rule, SpecificKind};
use super::create::{claims_for, identity_matches, storage_matches, with_identity};
use super::error::Error;
use super::ordinals::ordinal_of;
use super::pass::Pass;
use super::plan::{Ctx, Occupant, Slot};
use super::retention::{is_stale, owners_to_write};
use super::wait::Wait;
use crate::int_or_percent::{Rounding, legacy_scaled};
use crate::planning::Target;
use crate::pod_view;

/// Whether the pass goes on to the update step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Go on.
    Continue,
    /// Stop the pass here (upstream returns).
    Exit,
}

/// Upstream `decreaseAndCheckMaxUnavailable`: spend one of the scale budget; whether it is used up.
fn spend(budget: &mut Option<i64>) -> bool {
    match budget {
        None => false,
        Some(left) => {
            *left -= 1;
            *left <= 0
        }
    }
}

/// The first unhealthy pod by ordinal, among the slots (pods to create count as unhealthy) and the
/// condemned pods; `None` when it is a pod to create or there is none.
fn first_unhealthy(ctx: &Ctx<'_>, slots: &[Slot], condemned: &[usize]) -> Option<usize> {
    let mut first: Option<(i64, Option<usize>)> = None;
    let mut consider = |ordinal: i64, pod: Option<usize>| {
        if first.is_none_or(|(best, _)| ordinal < best) {
            first = Some((ordinal, pod));
        }
    };
    for slot in slots {
        match slot.occupant {
            Occupant::New { .. } => consider(slot.ordinal, None),
            Occupant::Pod(index) if !ctx.health(index).healthy() => {
                consider(slot.ordinal, Some(index));
            }
            Occupant::Pod(_) => {}
        }
    }
    for &index in condemned.iter().rev() {
        if !ctx.health(index).healthy() {
            let ordinal = ctx
                .pod(index)
                .and_then(|pod| ordinal_of(pod_view::name(pod)))
                .map_or(i64::MAX, i64::from);
            consider(ordinal, Some(index));
        }
    }
    first.and_then(|(_, pod)| pod)
}

/// The slot walk, the claim owners of condemned pods, and the condemned deletions.
pub(crate) fn scale(
    ctx: &Ctx<'_>,
    pass: &mut Pass,
    slots: &[Slot],
    condemned: &[usize],
) -> Result<Flow, Error> {
    let first_unhealthy = first_unhealthy(ctx, slots, condemned);
    let replicas = ctx.range.replicas();
    let mut budget = match ctx
        .set
        .spec
        .scale_strategy
        .as_ref()
        .and_then(|s| s.max_unavailable.as_ref())
    {
        Some(value) => Some(
            legacy_scaled(value, replicas, Rounding::Down)
                .map_err(|error| Error::MaxUnavailable {
                    set: ctx.key.clone(),
                    error: error.in_field("spec.scaleStrategy.maxUnavailable"),
                })?
                .max(1),
        ),
        None => None,
    };
    for slot in slots {
        match replica(ctx, pass, slot, &mut budget)? {
            Step::Next => {}
            Step::Break => break,
            Step::Exit => return Ok(Flow::Exit),
        }
    }

    if ctx.input.options.auto_delete_pvc {
        for &index in condemned {
            claim_owners(ctx, pass, index, false);
        }
    }

    let monotonic = ctx.monotonic;
    for &index in condemned {
        let Some(pod) = ctx.pod(index) else {
            continue;
        };
        let health = ctx.health(index);
        let name = pod_view::name(pod).to_owned();
        if health.terminating {
            if monotonic {
                pass.wait(Wait::Terminating { pod: name });
                return Ok(Flow::Exit);
            }
            continue;
        }
        if monotonic && first_unhealthy != Some(index) && !health.available {
            pass.requeue.push(health.wait);
            pass.wait(Wait::CondemnedBlocked { pod: name });
            return Ok(Flow::Exit);
        }
        let ordinal = ordinal_of(&name).map_or(-1, i64::from);
        let why = if ordinal < ctx.range.start() {
            Condemned::BeforeStart
        } else if ctx.range.reserved().contains(ordinal) && ordinal < ctx.range.end() {
            Condemned::Reserved
        } else {
            Condemned::BeyondEnd
        };
        let (modified, _) = pass.delete(ctx, index, Rule::Condemned { ordinal, why })?;
        if monotonic && modified {
            pass.wait(Wait::CondemnedDeleted { pod: name });
            return Ok(Flow::Exit);
        }
    }
    Ok(Flow::Continue)
}

enum Step {
    Next,
    Break,
    Exit,
}

/// Upstream `processReplica` for one slot.
fn replica(
    ctx: &Ctx<'_>,
    pass: &mut Pass,
    slot: &Slot,
    budget: &mut Option<i64>,
) -> Result<Step, Error> {
    let monotonic = ctx.monotonic;
    let index = match &slot.occupant {
        Occupant::New { pod, revision } => {
            return create(ctx, pass, slot, pod, *revision, budget);
        }
        Occupant::Pod(index) => *index,
    };
    let Some(pod) = ctx.pod(index) else {
        return Ok(Step::Next);
    };
    let health = ctx.health(index);
    let name = pod_view::name(pod).to_owned();
    if health.finished {
        if !health.terminating {
            pass.delete(
                ctx,
                index,
                Rule::RecreateFinished {
                    phase: pod_view::phase(pod).to_owned(),
                },
            )?;
        }
        pass.wait(Wait::FinishedPod { pod: name });
        return Ok(Step::Exit);
    }
    if health.pending {
        pass.create_missing_claims(ctx, pod, slot.ordinal, &Rule::MissingClaim)?;
    }
    if health.terminating {
        if monotonic {
            pass.wait(Wait::Terminating { pod: name });
            return Ok(Step::Exit);
        }
        if spend(budget) {
            return Ok(Step::Break);
        }
    }
    pass.refresh(ctx, index)?;
    if (monotonic || budget.is_some()) && !health.available {
        if monotonic {
            pass.requeue.push(health.wait);
            pass.wait(Wait::NotAvailable { pod: name });
            return Ok(Step::Exit);
        }
        if spend(budget) {
            pass.requeue.push(health.wait);
            return Ok(Step::Break);
        }
    }
    if !identity_matches(ctx.set, pod) || !storage_matches(ctx.set, pod) {
        if !storage_matches(ctx.set, pod) {
            pass.create_missing_claims(ctx, pod, slot.ordinal, &Rule::Identity)?;
        }
        pass.push(
            ActionKind::Specific(SpecificKind::UpdateIdentity {
                pod: index,
                updated: Box::new(with_identity(
                    ctx.set,
                    pod,
                    ctx.input.options.pod_index_label,
                )),
            }),
            Rule::Identity,
        );
    }
    if ctx.input.options.auto_delete_pvc {
        claim_owners(ctx, pass, index, true);
    }
    Ok(Step::Next)
}

/// Creates the pod of an empty slot (its missing claims first).
fn create(
    ctx: &Ctx<'_>,
    pass: &mut Pass,
    slot: &Slot,
    pod: &k8s_openapi::api::core::v1::Pod,
    revision: Target,
    budget: &mut Option<i64>,
) -> Result<Step, Error> {
    let name = pod_view::name(pod).to_owned();
    if ctx.input.options.auto_delete_pvc {
        for (_, claim) in claims_for(ctx.set, slot.ordinal) {
            let claim_name = claim.metadata.name.as_deref().unwrap_or("");
            if let Some((_, existing)) = ctx.claim(claim_name)
                && is_stale(ctx.set, &name, existing)
            {
                pass.wait(Wait::StaleClaim {
                    pod: name,
                    claim: claim_name.to_owned(),
                });
                return Ok(Step::Exit);
            }
        }
    }
    let rule = Rule::CreateMissing {
        ordinal: slot.ordinal,
        slot: slot.index,
        revision,
    };
    pass.create_missing_claims(ctx, pod, slot.ordinal, &rule)?;
    pass.push(
        ActionKind::CreatePod {
            pod: Box::new(pod.clone()),
            batch: 0,
            node: None,
        },
        rule,
    );
    if ctx.monotonic {
        pass.wait(Wait::Created { pod: name });
        return Ok(Step::Exit);
    }
    if spend(budget) {
        return Ok(Step::Break);
    }
    Ok(Step::Next)
}

/// Upstream `UpdatePodClaimForRetentionPolicy`: fix the owner references of the pod's existing claims.
fn claim_owners(ctx: &Ctx<'_>, pass: &mut Pass, index: usize, in_range: bool) {
    let Some(pod) = ctx.pod(index) else {
        return;
    };
    let Some(ordinal) = ordinal_of(pod_view::name(pod)) else {
        return;
    };
    for (_, claim) in claims_for(ctx.set, i64::from(ordinal)) {
        let name = claim.metadata.name.as_deref().unwrap_or("");
        if let Some((claim_index, existing)) = ctx.claim(name)
            && let Some(owner_references) = owners_to_write(ctx.set, pod, existing, in_range)
        {
            pass.push(
                ActionKind::Specific(SpecificKind::UpdateClaimOwners {
                    claim: claim_index,
                    owner_references,
                }),
                Rule::ClaimRetention,
            );
        }
    }
}

/// Whether the pod carries `apps.kruise.io/specified-delete` (any value).
pub(crate) fn is_specified_delete(pod: &k8s_openapi::api::core::v1::Pod) -> bool {
    kruise_api::pod::label(pod, keys::cloneset::SPECIFIED_DELETE_LABEL).is_some()
}
