//! Which simulated node a pending pod is bound to: round-robin or least-loaded, never past a node's pod
//! capacity; a pod whose required node affinity names one node (a daemon pod) goes to that node or stays
//! pending. The placement book-keeping is plain state fed by the caller (sans-IO): what the watch says is
//! bound where, what was just reserved, what went away.
//!
//! ```
//! use kruise_simulator::binding::{Placement, Strategy};
//!
//! let mut placement = Placement::new(Strategy::LeastLoaded, vec!["node-0".into(), "node-1".into()], 10);
//! placement.observe("default/busy-1", "node-0");
//! assert_eq!(placement.reserve("default/new"), Some("node-1".to_owned()));
//! placement.forget("default/busy-1");
//! assert_eq!(placement.load("node-0"), 0);
//! ```

use std::collections::HashMap;

/// How a node is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Strategy {
    /// Nodes in turn, skipping full ones.
    #[default]
    RoundRobin,
    /// The node with the fewest pods; ties go to the first in node order.
    LeastLoaded,
}

/// Where pods are placed, per node.
#[derive(Clone, Debug)]
pub struct Placement {
    strategy: Strategy,
    nodes: Vec<String>,
    max_pods: usize,
    loads: Vec<usize>,
    placed: HashMap<String, usize>,
    cursor: usize,
}

impl Placement {
    /// No pod placed yet on `nodes`, each holding at most `max_pods` pods.
    #[must_use]
    pub fn new(strategy: Strategy, nodes: Vec<String>, max_pods: usize) -> Self {
        let loads = vec![0; nodes.len()];
        Self {
            strategy,
            nodes,
            max_pods,
            loads,
            placed: HashMap::new(),
            cursor: 0,
        }
    }

    /// The node names, in order.
    #[must_use]
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    /// Whether `node` is one of ours.
    #[must_use]
    pub fn owns(&self, node: &str) -> bool {
        self.index(node).is_some()
    }

    /// Pods currently placed on `node`.
    #[must_use]
    pub fn load(&self, node: &str) -> usize {
        self.index(node)
            .and_then(|index| self.loads.get(index).copied())
            .unwrap_or_default()
    }

    /// Chooses a node for the pod `key` and counts it there; `None` when every node is full. A pod already
    /// placed keeps its node.
    pub fn reserve(&mut self, key: &str) -> Option<String> {
        if let Some(node) = self
            .placed
            .get(key)
            .and_then(|&index| self.nodes.get(index))
        {
            return Some(node.clone());
        }
        self.reserve_among(key, |_| true)
    }

    /// [`Placement::reserve`] among the nodes `eligible` accepts (the nodes a pod's required node affinity
    /// matches); `None` when none of them has room.
    pub fn reserve_among(&mut self, key: &str, eligible: impl Fn(&str) -> bool) -> Option<String> {
        if let Some(node) = self
            .placed
            .get(key)
            .and_then(|&index| self.nodes.get(index))
        {
            return Some(node.clone());
        }
        let eligible: Vec<bool> = self.nodes.iter().map(|node| eligible(node)).collect();
        let allowed = |index: usize| eligible.get(index).copied().unwrap_or(false);
        let index = match self.strategy {
            Strategy::RoundRobin => self.next_round_robin(&allowed)?,
            Strategy::LeastLoaded => self.least_loaded(&allowed)?,
        };
        self.place(key, index);
        self.nodes.get(index).cloned()
    }

    /// Counts the pod `key` on `node` (a pod whose required node affinity names its node, as daemon pods'
    /// does); `None` when `node` is not ours or is full. A pod already placed keeps its node.
    pub fn reserve_on(&mut self, key: &str, node: &str) -> Option<String> {
        if let Some(placed) = self
            .placed
            .get(key)
            .and_then(|&index| self.nodes.get(index))
        {
            return Some(placed.clone());
        }
        let index = self.index(node).filter(|&index| self.has_room(index))?;
        self.place(key, index);
        self.nodes.get(index).cloned()
    }

    /// Records that the pod `key` is bound to `node` (from the watch). Nodes that are not ours are ignored,
    /// and a pod seen on another node than reserved moves there.
    pub fn observe(&mut self, key: &str, node: &str) {
        match self.index(node) {
            Some(index) if self.placed.get(key) != Some(&index) => {
                self.forget(key);
                self.place(key, index);
            }
            Some(_) => {}
            None => self.forget(key),
        }
    }

    /// The pod `key` is gone (deleted, or its binding failed): free its place.
    pub fn forget(&mut self, key: &str) {
        if let Some(index) = self.placed.remove(key)
            && let Some(load) = self.loads.get_mut(index)
        {
            *load = load.saturating_sub(1);
        }
    }

    fn place(&mut self, key: &str, index: usize) {
        self.placed.insert(key.to_owned(), index);
        if let Some(load) = self.loads.get_mut(index) {
            *load += 1;
        }
    }

    fn has_room(&self, index: usize) -> bool {
        self.loads
            .get(index)
            .is_some_and(|&load| load < self.max_pods)
    }

    fn next_round_robin(&mut self, allowed: &dyn Fn(usize) -> bool) -> Option<usize> {
        let count = self.nodes.len();
        let index = (0..count)
            .map(|step| (self.cursor + step) % count)
            .find(|&index| allowed(index) && self.has_room(index))?;
        self.cursor = (index + 1) % count;
        Some(index)
    }

    fn least_loaded(&self, allowed: &dyn Fn(usize) -> bool) -> Option<usize> {
        (0..self.nodes.len())
            .filter(|&index| allowed(index) && self.has_room(index))
            .min_by_key(|&index| (self.loads.get(index).copied().unwrap_or_default(), index))
    }

    fn index(&self, node: &str) -> Option<usize> {
        self.nodes.iter().position(|name| name == node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nodes(count: usize) -> Vec<String> {
        (0..count).map(|index| format!("node-{index}")).collect()
    }

    #[test]
    fn round_robin_takes_nodes_in_turn_and_skips_full_ones() {
        let mut placement = Placement::new(Strategy::RoundRobin, nodes(3), 2);
        let chosen: Vec<_> = (0..6)
            .map(|pod| placement.reserve(&format!("p{pod}")).unwrap())
            .collect();
        assert_eq!(
            chosen,
            ["node-0", "node-1", "node-2", "node-0", "node-1", "node-2"]
        );
        assert_eq!(placement.reserve("p6"), None, "all nodes full");
        placement.forget("p4");
        assert_eq!(placement.reserve("p7").as_deref(), Some("node-1"));
    }

    #[test]
    fn least_loaded_fills_the_emptiest_node_first() {
        let mut placement = Placement::new(Strategy::LeastLoaded, nodes(3), 10);
        placement.observe("a", "node-0");
        placement.observe("b", "node-0");
        placement.observe("c", "node-2");
        assert_eq!(placement.reserve("x").as_deref(), Some("node-1"));
        assert_eq!(placement.reserve("y").as_deref(), Some("node-1"));
        assert_eq!(
            placement.reserve("z").as_deref(),
            Some("node-2"),
            "node-2 has the fewest pods now"
        );
    }

    #[test]
    fn reserving_twice_keeps_the_node_and_observing_moves_it() {
        let mut placement = Placement::new(Strategy::RoundRobin, nodes(2), 5);
        assert_eq!(placement.reserve("p").as_deref(), Some("node-0"));
        assert_eq!(placement.reserve("p").as_deref(), Some("node-0"));
        assert_eq!(placement.load("node-0"), 1);
        placement.observe("p", "node-1");
        assert_eq!((placement.load("node-0"), placement.load("node-1")), (0, 1));
        placement.observe("p", "somebody-elses-node");
        assert_eq!(placement.load("node-1"), 0);
        assert!(!placement.owns("somebody-elses-node"));
    }

    #[test]
    fn a_pod_pinned_to_a_node_goes_there_or_nowhere() {
        let mut placement = Placement::new(Strategy::RoundRobin, nodes(3), 1);
        assert_eq!(
            placement.reserve_on("d1", "node-2").as_deref(),
            Some("node-2")
        );
        assert_eq!(
            placement.reserve_on("d1", "node-2").as_deref(),
            Some("node-2")
        );
        assert_eq!(placement.load("node-2"), 1);
        assert_eq!(placement.reserve_on("d2", "node-2"), None, "node-2 is full");
        assert_eq!(placement.reserve_on("d3", "elsewhere"), None, "not ours");
        assert_eq!(placement.reserve("p").as_deref(), Some("node-0"));
    }

    #[test]
    fn only_eligible_nodes_are_chosen() {
        let mut placement = Placement::new(Strategy::RoundRobin, nodes(4), 1);
        let odd = |node: &str| node.ends_with('1') || node.ends_with('3');
        assert_eq!(placement.reserve_among("a", odd).as_deref(), Some("node-1"));
        assert_eq!(placement.reserve_among("b", odd).as_deref(), Some("node-3"));
        assert_eq!(
            placement.reserve_among("c", odd),
            None,
            "both odd nodes are full"
        );
        assert_eq!(placement.reserve_among("d", |_| false), None);
        let mut placement = Placement::new(Strategy::LeastLoaded, nodes(3), 5);
        assert_eq!(
            placement
                .reserve_among("x", |node| node == "node-2")
                .as_deref(),
            Some("node-2")
        );
    }

    #[test]
    fn no_nodes_means_no_placement() {
        let mut placement = Placement::new(Strategy::RoundRobin, Vec::new(), 5);
        assert_eq!(placement.reserve("p"), None);
        let mut placement = Placement::new(Strategy::LeastLoaded, Vec::new(), 5);
        assert_eq!(placement.reserve("p"), None);
    }
}
