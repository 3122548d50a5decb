//! Turning "delete these pods, create pods on these nodes" into actions (upstream `syncNodes`): deletions
//! the preDelete hook holds become `PreparingDelete`; creations and deletions are each capped at
//! `burstReplicas`; creations go in slow-start batches of 1, 2, 4, ….

use super::action::{Action, ActionKind, Rule};
use super::error::Error;
use super::plan::Ctx;
use kruise_lifecycle::DeleteDecision;

/// A pod to delete (index into the facts) or a node to create a pod on, with the rule.
pub(crate) struct Wanted<'n> {
    pub(crate) deletes: Vec<(usize, Rule)>,
    pub(crate) creates: Vec<(&'n str, Rule)>,
}

impl Wanted<'_> {
    pub(crate) fn new() -> Self {
        Self {
            deletes: Vec::new(),
            creates: Vec::new(),
        }
    }
}

pub(crate) fn sync_nodes(
    ctx: &Ctx<'_>,
    wanted: Wanted<'_>,
    burst: i64,
) -> Result<Vec<Action>, Error> {
    let burst = usize::try_from(burst).unwrap_or(0);
    let mut actions = Vec::new();
    let mut deletes = Vec::with_capacity(wanted.deletes.len());
    for (position, rule) in wanted.deletes {
        let Some(facts) = ctx.facts.pod(position) else {
            continue;
        };
        match ctx.workload.delete_wanted(facts.pod, ctx.input.now)? {
            DeleteDecision::Delete => deletes.push((facts.index, rule)),
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
        }
    }
    let mut batch = 0u32;
    let mut batch_size = 1usize;
    let mut in_batch = 0usize;
    for (node, rule) in wanted.creates.into_iter().take(burst) {
        if in_batch == batch_size {
            batch += 1;
            batch_size *= 2;
            in_batch = 0;
        }
        in_batch += 1;
        actions.push(Action {
            kind: ActionKind::CreatePod {
                pod: Box::new(ctx.template.for_node(node)),
                batch,
                node: Some(node.to_owned()),
            },
            rule,
        });
    }
    for (pod, rule) in deletes.into_iter().take(burst) {
        actions.push(Action {
            kind: ActionKind::DeletePod { pod },
            rule,
        });
    }
    Ok(actions)
}
