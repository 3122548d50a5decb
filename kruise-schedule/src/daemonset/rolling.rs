//! The rolling update (upstream `rollingUpdate`), run on the nodes [`super::update_order`] allows, in that
//! order. `PreparingDelete` pods count as missing.
//!
//! **maxSurge = 0**: a node counts as unavailable when it has more than one pod of a kind, no live pod, both
//! a live old and a live new pod, or a new pod that is not available (twice when that pod is also
//! `PreparingDelete`). Old pods that are unavailable are replaced at once; available ones are replaced while
//! the unavailable nodes stay under `maxUnavailable`. With `InPlaceIfPossible` the chosen pods are updated in
//! place when possible (at most `burstReplicas`), the others deleted.
//!
//! **maxSurge > 0**: a node with an old pod and no new one gets a new pod at once when the old pod is
//! unavailable, otherwise while the nodes surging (more than one pod of a kind, or a new pod not yet
//! available or `PreparingDelete`) stay under `maxSurge`. Once the new pod is available the old pod is
//! deleted.

use super::action::{Action, Rule};
use super::error::Error;
use super::in_place::InPlace;
use super::plan::{Ctx, Requeue};
use super::settings::Budgets;
use super::sync_nodes::{Wanted, sync_nodes};
use super::update_order::NodeClass;
use crate::planning::UpdateHow;

pub(crate) fn rolling_update(
    ctx: &Ctx<'_>,
    budgets: &Budgets,
    order: &[(&str, NodeClass)],
    requeue: &mut Requeue,
) -> Result<Vec<Action>, Error> {
    if budgets.max_surge == 0 {
        without_surge(ctx, budgets, order, requeue)
    } else {
        with_surge(ctx, budgets, order)
    }
}

fn without_surge(
    ctx: &Ctx<'_>,
    budgets: &Budgets,
    order: &[(&str, NodeClass)],
    requeue: &mut Requeue,
) -> Result<Vec<Action>, Error> {
    let facts = &ctx.facts;
    let mut unavailable_nodes = 0i64;
    let mut replacements = Vec::new();
    let mut candidates = Vec::new();
    for (position, (name, _)) in order.iter().enumerate() {
        let Some(entry) = facts.nodes.get(name) else {
            continue;
        };
        let Some(slots) = facts.new_and_old(entry) else {
            unavailable_nodes += 1;
            continue;
        };
        let old_gone = facts.nil_or_pre_deleting(slots.old);
        let new_gone = facts.nil_or_pre_deleting(slots.new);
        if old_gone == new_gone {
            unavailable_nodes += 1;
            continue;
        }
        if let Some(new) = slots.new.and_then(|p| facts.pod(p)) {
            if !new.available {
                unavailable_nodes += 1;
            }
            if new.pre_deleting {
                unavailable_nodes += 1;
            }
            continue;
        }
        let Some(old) = slots.old.and_then(|p| facts.pod(p)) else {
            continue;
        };
        if old.available {
            candidates.push((old.position, position + 1));
        } else {
            replacements.push((old.position, position + 1));
        }
    }
    let remaining = (budgets.max_unavailable - unavailable_nodes).max(0);
    let take = usize::try_from(remaining).unwrap_or(usize::MAX);
    let chosen = replacements
        .into_iter()
        .map(|pick| (pick, true))
        .chain(candidates.into_iter().take(take).map(|pick| (pick, false)));
    let rule = |position, unavailable, how| Rule::Replace {
        unavailable,
        position,
        max_unavailable: budgets.max_unavailable,
        unavailable_nodes,
        how,
    };
    let mut wanted = Wanted::new();
    let mut actions = Vec::new();
    if ctx.settings.in_place {
        let mut in_place = InPlace::new(ctx);
        let mut updates = 0i64;
        for ((pod, position), unavailable) in chosen {
            let Some(facts) = facts.pod(pod) else {
                continue;
            };
            match in_place.spec_for(facts) {
                Ok(spec) => {
                    if updates >= budgets.burst_replicas {
                        continue;
                    }
                    updates += 1;
                    in_place.update(
                        facts,
                        spec,
                        rule(position, unavailable, UpdateHow::InPlace),
                        &mut actions,
                        requeue,
                    )?;
                }
                Err(reason) => wanted.deletes.push((
                    pod,
                    rule(position, unavailable, UpdateHow::RecreateRequired(reason)),
                )),
            }
        }
    } else {
        for ((pod, position), unavailable) in chosen {
            wanted
                .deletes
                .push((pod, rule(position, unavailable, UpdateHow::RecreatePolicy)));
        }
    }
    actions.extend(sync_nodes(ctx, wanted, budgets.burst_replicas)?);
    Ok(actions)
}

fn with_surge(
    ctx: &Ctx<'_>,
    budgets: &Budgets,
    order: &[(&str, NodeClass)],
) -> Result<Vec<Action>, Error> {
    let facts = &ctx.facts;
    let mut surging = 0i64;
    let mut wanted = Wanted::new();
    let mut allowed = Vec::new();
    let mut candidates = Vec::new();
    for (name, _) in order {
        let Some(entry) = facts.nodes.get(name) else {
            continue;
        };
        let Some(slots) = facts.new_and_old(entry) else {
            surging += 1;
            continue;
        };
        if facts.nil_or_pre_deleting(slots.old) {
            continue;
        }
        let Some(old) = slots.old.and_then(|p| facts.pod(p)) else {
            continue;
        };
        match slots.new.and_then(|p| facts.pod(p)) {
            None => {
                if old.available {
                    candidates.push(entry.name);
                } else {
                    allowed.push(entry.name);
                }
            }
            Some(new) => {
                if !new.available || new.pre_deleting {
                    surging += 1;
                } else {
                    wanted.deletes.push((old.position, Rule::NewPodAvailable));
                }
            }
        }
    }
    let remaining = (budgets.max_surge - surging).max(0);
    let take = usize::try_from(remaining).unwrap_or(usize::MAX);
    let rule = |unavailable| Rule::Surge {
        unavailable,
        max_surge: budgets.max_surge,
        surging,
    };
    wanted
        .creates
        .extend(allowed.into_iter().map(|node| (node, rule(true))));
    wanted.creates.extend(
        candidates
            .into_iter()
            .take(take)
            .map(|node| (node, rule(false))),
    );
    sync_nodes(ctx, wanted, budgets.burst_replicas)
}
