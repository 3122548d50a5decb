//! The rankers of CloneSet's scale-down ranking (rule 5 of [`super::deletion`]); a higher rank is deleted
//! first.
//!
//! * [`same_node`]: on every node with at least two of the pods, the pods are ordered by the ranking without
//!   ranks and without availability, the last one is dropped, and the `i`-th of the `n` kept gets rank `n - i`
//!   (the most deletable pod on a crowded node ranks highest).
//! * [`spread`]: used when the template has `topologySpreadConstraints`. For each constraint's topology key,
//!   the nodes of the pods are grouped by that label's value (nodes without the label, or unknown nodes, are
//!   left out); within each group the pods are ordered by the ranking (with the same-node ranks as rule 5,
//!   except for the `kubernetes.io/hostname` key) and the `i`-th of `n` adds `(n - i) × ln(groups + 2)` to its
//!   rank.
//!
//! Ranks are returned per position of `indexes`; upstream keys them by pod UID, which offline inputs may lack.

use std::borrow::Borrow;
use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::core::v1::Pod;

use super::deletion::DeletionKey;
use crate::pod_view;

/// The node label Kubernetes uses for a node's host name.
pub const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// Same-node ranks of the pods at `indexes` (one rank per position of `indexes`).
#[must_use]
pub fn same_node<P: Borrow<Pod>>(pods: &[P], indexes: &[usize]) -> Vec<f64> {
    let mut ranks = vec![0.0; indexes.len()];
    let mut by_node: HashMap<&str, Vec<usize>> = HashMap::new();
    for (position, &index) in indexes.iter().enumerate() {
        let Some(pod) = pods.get(index) else { continue };
        let node = pod_view::node_name(pod.borrow());
        if !node.is_empty() {
            by_node.entry(node).or_default().push(position);
        }
    }
    for mut positions in by_node.into_values() {
        if positions.len() <= 1 {
            continue;
        }
        sort_positions(pods, indexes, &mut positions, None);
        positions.pop();
        let kept = positions.len();
        for (i, position) in positions.into_iter().enumerate() {
            if let Some(rank) = ranks.get_mut(position) {
                #[allow(clippy::cast_precision_loss)]
                let value = (kept - i) as f64;
                *rank = value;
            }
        }
    }
    ranks
}

/// Topology-spread ranks of the pods at `indexes` for the constraints' topology keys, with `node_labels`
/// giving the labels of a node by name (`None`: the node is unknown and its pods are left out).
#[must_use]
pub fn spread<'n, P: Borrow<Pod>>(
    pods: &[P],
    indexes: &[usize],
    topology_keys: &[&str],
    node_labels: &dyn Fn(&str) -> Option<&'n BTreeMap<String, String>>,
) -> Vec<f64> {
    let mut ranks = vec![0.0; indexes.len()];
    let node_ranks = same_node(pods, indexes);
    // Nodes in order of first appearance, with the positions of their pods.
    let mut nodes: Vec<(&str, &BTreeMap<String, String>, Vec<usize>)> = Vec::new();
    let mut node_slot: HashMap<&str, usize> = HashMap::new();
    for (position, &index) in indexes.iter().enumerate() {
        let Some(pod) = pods.get(index) else { continue };
        let node = pod_view::node_name(pod.borrow());
        if node.is_empty() {
            continue;
        }
        if let Some(&slot) = node_slot.get(node) {
            if let Some(entry) = nodes.get_mut(slot) {
                entry.2.push(position);
            }
            continue;
        }
        let Some(labels) = node_labels(node) else {
            continue;
        };
        node_slot.insert(node, nodes.len());
        nodes.push((node, labels, vec![position]));
    }
    for key in topology_keys {
        let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for (_, labels, positions) in &nodes {
            if let Some(value) = labels.get(*key) {
                groups
                    .entry(value.as_str())
                    .or_default()
                    .extend_from_slice(positions);
            }
        }
        #[allow(clippy::cast_precision_loss)]
        let weight = ((groups.len() + 2) as f64).ln();
        let inner = (*key != HOSTNAME_LABEL).then_some(node_ranks.as_slice());
        for mut positions in groups.into_values() {
            sort_positions(pods, indexes, &mut positions, inner);
            let size = positions.len();
            for (i, position) in positions.into_iter().enumerate() {
                if let Some(rank) = ranks.get_mut(position) {
                    #[allow(clippy::cast_precision_loss)]
                    let value = (size - i) as f64;
                    *rank += value * weight;
                }
            }
        }
    }
    ranks
}

/// Orders positions of `indexes` by the ranking without availability, with the given ranks (or none).
fn sort_positions<P: Borrow<Pod>>(
    pods: &[P],
    indexes: &[usize],
    positions: &mut [usize],
    ranks: Option<&[f64]>,
) {
    positions.sort_by_cached_key(|&position| {
        let rank = ranks
            .and_then(|ranks| ranks.get(position))
            .copied()
            .unwrap_or(0.0);
        let key = indexes
            .get(position)
            .and_then(|&index| pods.get(index))
            .map(|pod| DeletionKey::of(pod.borrow(), None, rank));
        (key.is_none(), key, position)
    });
}
