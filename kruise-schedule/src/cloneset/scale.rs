//! The scale step (upstream `Scale` in `cloneset_scale.go`): cancel deletions on scale-up, create pods, delete
//! `PreparingDelete` and specified pods, and scale down by the deletion ranking.

use std::collections::{BTreeMap, HashMap};

use kruise_api::keys;
use kruise_lifecycle::DeleteDecision;

use super::action::{Action, ActionKind, Rule, SpecificKind};
use super::create;
use super::diff::Diff;
use super::error::Error;
use super::facts::{PodFacts, READY, SPECIFIED, UPDATED_FOR_SCALE};
use super::plan::Ctx;
use super::pod_source::WholePod;
use crate::planning::Target;
use crate::pod_view::{self, State};
use crate::sort::deletion::DeletionKey;
use crate::sort::{rankers, select};

/// The actions of the scale step, or `None` when it changes nothing (the update step runs then).
pub(crate) fn scale(ctx: &Ctx<'_>, diff: &Diff) -> Result<Option<Vec<Action>>, Error> {
    let pods = &ctx.facts.pods;
    let mut pre_deleting: Vec<&PodFacts> = pods
        .iter()
        .filter(|p| p.state == State::PreparingDelete)
        .collect();
    let mut specified: Vec<&PodFacts> = pods
        .iter()
        .filter(|p| p.has(SPECIFIED) && p.state != State::PreparingDelete)
        .collect();
    ctx.sort_by_name(&mut pre_deleting);
    ctx.sort_by_name(&mut specified);
    let num_to_delete = i64::try_from(pre_deleting.len() + specified.len()).unwrap_or(i64::MAX);

    // 1. A scale-up brings back pods waiting in PreparingDelete (unless a hook marks pods not ready).
    let mark_not_ready = ctx
        .input
        .cloneset
        .spec
        .lifecycle
        .as_ref()
        .is_some_and(kruise_api::lifecycle::Lifecycle::mark_pod_not_ready);
    if !mark_not_ready {
        let mut shortfall = ctx.settings.replicas - ctx.active_len() + num_to_delete;
        let mut actions = Vec::new();
        for pod in &pre_deleting {
            if shortfall <= 0 {
                break;
            }
            if pod.has(SPECIFIED) {
                continue;
            }
            if let Some(transition) = ctx.workload.cancel_delete(&ctx.pod(pod), ctx.input.now)? {
                actions.push(Action {
                    kind: ActionKind::Lifecycle {
                        pod: pod.index,
                        transition,
                    },
                    rule: Rule::CancelDelete { shortfall },
                });
            }
            shortfall -= 1;
        }
        if !actions.is_empty() {
            return Ok(Some(actions));
        }
    }

    // 2. Scale up.
    if diff.scale_up_num > 0 {
        let actions = create_pods(ctx, diff)?;
        return Ok((!actions.is_empty()).then_some(actions));
    }

    // 3. Pods already in PreparingDelete: delete those the hook released.
    let mut claims = ClaimIndex::default();
    let mut actions = Vec::new();
    for pod in &pre_deleting {
        delete(ctx, pod, Rule::PreDeleteReleased, &mut claims, &mut actions)?;
    }
    if !actions.is_empty() {
        return Ok(Some(actions));
    }

    // 4. Pods specified for deletion, within deleteReadyLimit for ready ones.
    let mut limit = diff.delete_ready_limit;
    for pod in &specified {
        let ready = pod.has(READY);
        if ready {
            if limit <= 0 {
                continue;
            }
            limit -= 1;
        }
        let rule = Rule::SpecifiedDelete {
            ready,
            remaining: limit,
        };
        delete(ctx, pod, rule, &mut claims, &mut actions)?;
    }
    if !actions.is_empty() {
        return Ok(Some(actions));
    }

    // 5. Scale down, old revisions first, by the deletion ranking.
    if diff.scale_down_num > 0 && num_to_delete == 0 {
        let (total, old_wanted) = (diff.scale_down_num, diff.scale_down_num_old_revision);
        let (old, new): (Vec<&PodFacts>, Vec<&PodFacts>) =
            pods.iter().partition(|p| !p.has(UPDATED_FOR_SCALE));
        let mut chosen = Vec::new();
        if old_wanted >= total {
            chosen.extend(choose(ctx, &old, total, Target::Current));
        } else if old_wanted > 0 {
            chosen.extend(choose(ctx, &old, old_wanted, Target::Current));
            chosen.extend(choose(ctx, &new, total - old_wanted, Target::Update));
        } else {
            chosen.extend(choose(ctx, &new, total, Target::Update));
        }
        let mut limit = diff.delete_ready_limit;
        for (pod, revision, rank, of) in chosen {
            let ready = pod.has(READY);
            if ready {
                if limit <= 0 {
                    continue;
                }
                limit -= 1;
            }
            let rule = Rule::ScaleDown {
                revision,
                rank,
                of,
                ready,
            };
            delete(ctx, pod, rule, &mut claims, &mut actions)?;
        }
        return Ok((!actions.is_empty()).then_some(actions));
    }
    Ok(None)
}

/// The first `count` pods of `group` in the deletion ranking, with their 1-based ranks and the group size.
fn choose<'f, 'a>(
    ctx: &Ctx<'a>,
    group: &[&'f PodFacts<'a>],
    count: i64,
    revision: Target,
) -> Vec<(&'f PodFacts<'a>, Target, usize, usize)> {
    let count = usize::try_from(count).unwrap_or(0).min(group.len());
    // The rankers read the group's pods by position.
    let pods: Vec<WholePod<'a>> = group.iter().map(|p| ctx.pod(p)).collect();
    let indexes: Vec<usize> = (0..group.len()).collect();
    let constraints: Vec<&str> = ctx
        .input
        .cloneset
        .spec
        .template
        .spec
        .as_ref()
        .and_then(|spec| spec.topology_spread_constraints.as_deref())
        .unwrap_or_default()
        .iter()
        .map(|c| c.topology_key.as_str())
        .collect();
    let ranks = if constraints.is_empty() {
        rankers::same_node(&pods, &indexes)
    } else {
        static NO_LABELS: BTreeMap<String, String> = BTreeMap::new();
        let nodes: HashMap<&str, &BTreeMap<String, String>> = ctx
            .input
            .nodes
            .iter()
            .filter_map(|node| {
                let labels = node.metadata.labels.as_ref().unwrap_or(&NO_LABELS);
                Some((node.metadata.name.as_deref()?, labels))
            })
            .collect();
        let lookup = |name: &str| nodes.get(name).copied();
        rankers::spread(&pods, &indexes, &constraints, &lookup)
    };
    let positions: Vec<usize> = (0..group.len()).collect();
    let first = select::first_k(positions, count, |&position| {
        let facts = group.get(position).copied();
        let rank = ranks.get(position).copied().unwrap_or(0.0);
        facts.map(|f| DeletionKey {
            active: ctx.facts.sort_key(f).1,
            available: Some(f.has(super::facts::AVAILABLE)),
            cost: ctx.facts.deletion_cost(f),
            rank,
        })
    });
    first
        .into_iter()
        .enumerate()
        .filter_map(|(i, position)| {
            group
                .get(position)
                .map(|pod| (*pod, revision, i + 1, group.len()))
        })
        .collect()
}

/// The claims of each instance id, built on first use.
#[derive(Default)]
struct ClaimIndex {
    by_id: Option<HashMap<String, Vec<usize>>>,
}

/// Deletes `pod` (and its claims), or holds it in `PreparingDelete` while its preDelete hook holds it.
fn delete(
    ctx: &Ctx<'_>,
    facts: &PodFacts,
    rule: Rule,
    claims: &mut ClaimIndex,
    actions: &mut Vec<Action>,
) -> Result<(), Error> {
    let pod = ctx.pod(facts);
    let pod: &k8s_openapi::api::core::v1::Pod = &pod;
    match ctx.workload.delete_wanted(pod, ctx.input.now)? {
        DeleteDecision::Hold(transition) => {
            if !transition.is_noop() {
                actions.push(Action {
                    kind: ActionKind::Lifecycle {
                        pod: facts.index,
                        transition,
                    },
                    rule,
                });
            }
        }
        DeleteDecision::Delete => {
            actions.push(Action {
                kind: ActionKind::DeletePod { pod: facts.index },
                rule,
            });
            let id = kruise_api::pod::label(pod, keys::cloneset::INSTANCE_ID_LABEL).unwrap_or("");
            if id.is_empty() {
                return Ok(());
            }
            let by_id = claims.by_id.get_or_insert_with(|| {
                let mut map: HashMap<String, Vec<usize>> = HashMap::new();
                for (index, claim) in ctx.input.claims.iter().enumerate() {
                    if let Some(id) = claim
                        .metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get(keys::cloneset::INSTANCE_ID_LABEL))
                    {
                        map.entry(id.clone()).or_default().push(index);
                    }
                }
                map
            });
            for &claim in by_id.get(id).into_iter().flatten() {
                actions.push(Action {
                    kind: ActionKind::Specific(SpecificKind::DeleteClaim { claim }),
                    rule: Rule::ClaimOfDeletedPod {
                        pod: pod_view::name(pod).to_owned(),
                    },
                });
            }
        }
    }
    Ok(())
}

/// Creates `scaleUpLimit` pods, at most `Options::max_creations_per_plan` of them (the next plans create
/// the rest): `scaleUpNumOldRevision` of them (at most) at the current revision, first.
fn create_pods(ctx: &Ctx<'_>, diff: &Diff) -> Result<Vec<Action>, Error> {
    let cap = ctx.input.options.max_creations_per_plan.max(1);
    let count = usize::try_from(diff.scale_up_limit).unwrap_or(0).min(cap);
    if count == 0 {
        return Ok(Vec::new());
    }
    let current_count = usize::try_from(diff.scale_up_num_old_revision)
        .unwrap_or(0)
        .min(count);
    let cloneset = ctx.input.cloneset;
    let active: Vec<&str> = ctx
        .facts
        .pods
        .iter()
        .map(|p| ctx.facts.instance_id(p))
        .collect();
    let ids = create::instance_ids(
        cloneset,
        count,
        &active,
        ctx.input.claims,
        cloneset.spec.scale_strategy.enable_pvc_reuse,
        ctx.input.ids,
    )?;
    let existing: std::collections::HashSet<&str> = ctx
        .input
        .claims
        .iter()
        .filter_map(|claim| claim.metadata.name.as_deref())
        .collect();
    let current_template = if current_count > 0 {
        Some(ctx.current_template()?)
    } else {
        None
    };
    let mut actions = Vec::new();
    for (position, (id, reused_claim)) in ids.iter().enumerate() {
        let (revision, target, template) = if position < current_count {
            let template = current_template
                .as_deref()
                .unwrap_or(&cloneset.spec.template);
            (ctx.input.revisions.current, Target::Current, template)
        } else {
            (
                ctx.input.revisions.update,
                Target::Update,
                &cloneset.spec.template,
            )
        };
        let rule = Rule::ScaleUp {
            revision: target,
            wanted: diff.scale_up_num,
            limit: diff.scale_up_limit,
            reused_claim: *reused_claim,
        };
        for claim in create::claims_for(cloneset, id) {
            if claim
                .metadata
                .name
                .as_deref()
                .is_some_and(|name| existing.contains(name))
            {
                continue;
            }
            actions.push(Action {
                kind: ActionKind::CreateClaim {
                    claim: Box::new(claim),
                },
                rule: rule.clone(),
            });
        }
        let pod = create::new_pod(
            cloneset,
            template,
            revision,
            id,
            ctx.revision_labels(),
            &ctx.workload,
            ctx.input.now,
        );
        actions.push(Action {
            kind: ActionKind::CreatePod {
                pod: Box::new(pod),
                batch: create::batch_of(position),
                node: None,
            },
            rule,
        });
    }
    Ok(actions)
}
