//! Which nodes the rolling update may touch, in order (upstream `filterDaemonPodsNodeToUpdate`).
//!
//! The nodes that should run the pod are taken by name, descending, and classified:
//! * **updated**: a pod at the update revision, or more than one pod of a kind;
//! * **updating**: no old pod, or it is `PreparingDelete`;
//! * **selected**: matches `rollingUpdate.selector`;
//! * **rest**.
//!
//! The order is updated, updating, then selected when a selector is set (the rest are never updated), else
//! the rest; it is cut to `nodes - partition` (nothing when that is ≤ 0). So the partition keeps the
//! lexicographically first nodes at their old revision.

use std::collections::BTreeMap;

use kruise_api::label_selector;

use super::error::Error;
use super::plan::Ctx;

/// How a node was classified.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeClass {
    /// It has a pod at the update revision (or more than one pod of a kind).
    Updated,
    /// Its old pod is gone or `PreparingDelete`.
    Updating,
    /// It matches `rollingUpdate.selector`.
    Selected,
    /// None of the above.
    Rest,
}

/// The nodes the rolling update may touch, in order, with their class.
pub(crate) fn update_order<'a>(
    ctx: &Ctx<'a>,
    partition: i64,
) -> Result<Vec<(&'a str, NodeClass)>, Error> {
    let facts = &ctx.facts;
    let selector = ctx
        .settings
        .rolling
        .filter(|_| ctx.settings.rolling_type)
        .and_then(|r| r.selector.as_ref());
    if let Some(selector) = selector {
        label_selector::validate(selector).map_err(|source| Error::InvalidSelector {
            daemonset: ctx.settings.key.clone(),
            source,
        })?;
    }
    let empty = BTreeMap::new();
    let (mut updated, mut updating, mut selected, mut rest) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut total = 0i64;
    for entry in facts.nodes.values().rev() {
        let Some(node) = entry.node.filter(|_| entry.fit.should_run) else {
            continue;
        };
        total += 1;
        let class = match facts.new_and_old(entry) {
            None => NodeClass::Updated,
            Some(slots) if slots.new.is_some() => NodeClass::Updated,
            Some(slots) if facts.nil_or_pre_deleting(slots.old) => NodeClass::Updating,
            Some(_) => match selector {
                Some(selector)
                    if label_selector::matches(
                        selector,
                        node.metadata.labels.as_ref().unwrap_or(&empty),
                    )
                    .unwrap_or(false) =>
                {
                    NodeClass::Selected
                }
                _ => NodeClass::Rest,
            },
        };
        let list = match class {
            NodeClass::Updated => &mut updated,
            NodeClass::Updating => &mut updating,
            NodeClass::Selected => &mut selected,
            NodeClass::Rest => &mut rest,
        };
        list.push((entry.name, class));
    }
    let mut order = updated;
    order.append(&mut updating);
    if selector.is_some() {
        order.append(&mut selected);
    } else {
        order.append(&mut rest);
    }
    let max_update = total - partition;
    if max_update <= 0 {
        return Ok(Vec::new());
    }
    order.truncate(usize::try_from(max_update).unwrap_or(usize::MAX));
    Ok(order)
}
