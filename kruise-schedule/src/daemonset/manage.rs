//! The manage step (upstream `manage` / `podsShouldBeOnNode`): one daemon pod on every node that should run
//! it, none elsewhere.
//!
//! Per existing node, by name:
//! * should run and has no pod at all (not even a terminating one) → create one;
//! * may continue running → failed pods and `PreparingDelete` pods go; of the rest, without surge all but
//!   the oldest go; with surge the oldest pod at the update revision and the oldest older pod may stay, the
//!   old one going once it is not ready or the new one is available, and a node left with no live pod
//!   gets a new one;
//! * may not continue running → every pod goes.
//!
//! Pods not yet scheduled whose node is gone are deleted. With `scaleStrategy.partitionedScaling` and a
//! non-zero partition, creations are limited to `desired - newPods - partition`, lexicographically first
//! nodes first.

use std::time::Duration;

use super::action::{Action, Rule};
use super::error::Error;
use super::facts::{NodeEntry, PodFacts, by_age};
use super::plan::{Ctx, Requeue};
use super::sync_nodes::{Wanted, sync_nodes};

pub(crate) fn manage(ctx: &Ctx<'_>, requeue: &mut Requeue) -> Result<Vec<Action>, Error> {
    let facts = &ctx.facts;
    let mut wanted = Wanted::new();
    let mut new_pods = 0i64;
    for entry in facts.nodes.values() {
        if !entry.exists() {
            for &position in &entry.pods {
                if let Some(pod) = facts.pod(position)
                    && !pod.scheduled
                    && !pod.terminating
                {
                    wanted.deletes.push((position, Rule::NodeGone));
                }
            }
            continue;
        }
        if facts
            .new_and_old(entry)
            .is_some_and(|slots| slots.new.is_some())
        {
            new_pods += 1;
        }
        pods_should_be_on_node(ctx, entry, &mut wanted, requeue);
    }
    limit_creations(ctx, &mut wanted, new_pods)?;
    sync_nodes(ctx, wanted, ctx.settings.burst_replicas()?)
}

fn pods_should_be_on_node<'n>(
    ctx: &Ctx<'_>,
    entry: &NodeEntry<'n>,
    wanted: &mut Wanted<'n>,
    requeue: &mut Requeue,
) {
    let facts = &ctx.facts;
    let fit = &entry.fit;
    if fit.should_run && entry.pods.is_empty() {
        wanted
            .creates
            .push((entry.name, Rule::MissingPod { partitioned: None }));
        return;
    }
    if !fit.should_continue_running {
        let reason = fit
            .reason
            .as_ref()
            .map_or_else(String::new, ToString::to_string);
        for &position in &entry.pods {
            if facts.pod(position).is_some_and(|p| !p.terminating) {
                wanted.deletes.push((
                    position,
                    Rule::NodeIneligible {
                        reason: reason.clone(),
                    },
                ));
            }
        }
        return;
    }
    let mut running: Vec<&PodFacts<'_>> = Vec::new();
    for &position in &entry.pods {
        let Some(pod) = facts.pod(position) else {
            continue;
        };
        if pod.terminating {
            continue;
        }
        if pod.failed {
            wanted.deletes.push((position, Rule::FailedPod));
        } else if pod.pre_deleting {
            wanted.deletes.push((position, Rule::PreparingDelete));
        } else {
            running.push(pod);
        }
    }
    running.sort_by(|a, b| by_age(a, b));
    if !ctx.settings.allow_surge() {
        let Some((kept, excess)) = running.split_first() else {
            return;
        };
        for pod in excess {
            wanted.deletes.push((
                pod.position,
                Rule::ExcessPod {
                    kept: kept.name().to_owned(),
                },
            ));
        }
        return;
    }
    if running.len() <= 1 {
        if running.is_empty() && fit.should_run {
            wanted
                .creates
                .push((entry.name, Rule::MissingPod { partitioned: None }));
        }
        return;
    }
    let (mut oldest_new, mut oldest_old) = (None, None);
    for pod in running {
        let slot = if pod.updated {
            &mut oldest_new
        } else {
            &mut oldest_old
        };
        if slot.is_none() {
            *slot = Some(pod);
        } else {
            wanted.deletes.push((pod.position, Rule::ExcessSurgePod));
        }
    }
    if let (Some(new), Some(old)) = (oldest_new, oldest_old) {
        let min_ready = ctx.settings.min_ready_seconds;
        if !old.ready {
            wanted.deletes.push((old.position, Rule::OldPodNotReady));
        } else if new.available {
            wanted.deletes.push((old.position, Rule::NewPodAvailable));
        } else if new.ready && min_ready > 0 {
            requeue.push(available_in(new, min_ready, ctx));
        }
    }
}

/// How long until a ready pod has been ready for `min_ready` seconds (the whole period when the transition
/// time is unknown).
fn available_in(pod: &PodFacts<'_>, min_ready: i32, ctx: &Ctx<'_>) -> Duration {
    let whole = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0));
    match pod.conditions.ready_since {
        None => whole,
        Some(since) => {
            let elapsed = ctx.now.duration_since(since);
            let elapsed = Duration::try_from(elapsed).unwrap_or(Duration::ZERO);
            whole.saturating_sub(elapsed)
        }
    }
}

/// `GetNodesNeedingPods`: with partitioned scaling and a non-zero partition, only `desired - newPods -
/// partition` creations, on the lexicographically first nodes (the list is in name order already).
fn limit_creations(ctx: &Ctx<'_>, wanted: &mut Wanted<'_>, new_pods: i64) -> Result<(), Error> {
    let settings = &ctx.settings;
    if !(settings.rolling_type
        && settings.rolling.is_some()
        && settings.has_partition()
        && settings.partitioned_scaling)
    {
        return Ok(());
    }
    let desired = ctx.facts.desired;
    let partition = settings.partition_over(desired)?;
    if partition == 0 {
        return Ok(());
    }
    let partition = partition.clamp(0, desired.max(0));
    let allowed = (desired - new_pods - partition).max(0);
    wanted
        .creates
        .truncate(usize::try_from(allowed).unwrap_or(usize::MAX));
    for (_, rule) in &mut wanted.creates {
        *rule = Rule::MissingPod {
            partitioned: Some(allowed),
        };
    }
    Ok(())
}
