//! Which simulated nodes a pod may go to (the scheduler's node affinity filter, nothing more): a pod with a
//! `nodeSelector` or a required node affinity goes only to nodes whose labels (the registered ones plus
//! `--node-label`) match, read by [`kruise_schedule::daemonset::node_affinity::matches`]; and the
//! `PodScheduled=False`, reason `Unschedulable` condition of a pod that fits no node, written once (its
//! `lastTransitionTime` is when it was first found unschedulable, as kube-scheduler keeps it).
//!
//! ```
//! use k8s_openapi::api::core::v1::{Node, Pod};
//! use kruise_simulator::node_fit::{NodeFit, is_constrained};
//!
//! let node: Node = serde_json::from_value(serde_json::json!({"metadata": {"name": "n-0",
//!     "labels": {"zone": "a"}}})).unwrap();
//! let pod: Pod = serde_json::from_value(serde_json::json!({"spec": {"containers": [],
//!     "nodeSelector": {"zone": "b"}}})).unwrap();
//! let fit = NodeFit::new(vec![node]);
//! assert!(is_constrained(pod.spec.as_ref()));
//! assert!(!fit.fits(pod.spec.as_ref(), "n-0"));
//! ```

use std::collections::HashMap;

use k8s_openapi::api::core::v1::{Node, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_schedule::daemonset::node_affinity;
use serde_json::{Value, json};

/// The reason of the `PodScheduled=False` condition of a pod no node fits.
pub const UNSCHEDULABLE: &str = "Unschedulable";

/// The simulated nodes with their labels, by name.
#[derive(Clone, Debug, Default)]
pub struct NodeFit {
    nodes: HashMap<String, Node>,
}

impl NodeFit {
    /// The nodes as registered.
    #[must_use]
    pub fn new(nodes: Vec<Node>) -> Self {
        Self {
            nodes: nodes
                .into_iter()
                .filter_map(|node| Some((node.metadata.name.clone()?, node)))
                .collect(),
        }
    }

    /// Whether a pod of `spec` may go to `node` (an unknown node never fits).
    #[must_use]
    pub fn fits(&self, spec: Option<&PodSpec>, node: &str) -> bool {
        match (spec, self.nodes.get(node)) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(spec), Some(node)) => node_affinity::matches(spec, node),
        }
    }
}

/// Whether the pod restricts its nodes (a `nodeSelector` or required node affinity terms).
#[must_use]
pub fn is_constrained(spec: Option<&PodSpec>) -> bool {
    let Some(spec) = spec else {
        return false;
    };
    let selector = spec
        .node_selector
        .as_ref()
        .is_some_and(|map| !map.is_empty());
    let required = spec
        .affinity
        .as_ref()
        .and_then(|affinity| affinity.node_affinity.as_ref())
        .and_then(|node| {
            node.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .is_some_and(|required| !required.node_selector_terms.is_empty());
    selector || required
}

/// The status patch (strategic merge: conditions merge by type) that marks `pod` unschedulable at `now`;
/// `None` when it already is.
#[must_use]
pub fn unschedulable_patch(pod: &Pod, message: &str, now: Timestamp) -> Option<Value> {
    let marked = kruise_api::pod::condition(pod, "PodScheduled").is_some_and(|condition| {
        condition.status == "False" && condition.reason.as_deref() == Some(UNSCHEDULABLE)
    });
    (!marked).then(|| {
        json!({"status": {"conditions": [{
            "type": "PodScheduled", "status": "False", "reason": UNSCHEDULABLE,
            "message": message, "lastTransitionTime": Time(now),
        }]}})
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, zone: &str) -> Node {
        serde_json::from_value(json!({"metadata": {"name": name, "labels": {"zone": zone}}}))
            .unwrap()
    }

    fn spec(value: Value) -> PodSpec {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn required_terms_pick_the_nodes() {
        let fit = NodeFit::new(vec![node("a-0", "a"), node("b-0", "b")]);
        let in_a = spec(json!({"containers": [], "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}}));
        assert!(fit.fits(Some(&in_a), "a-0"));
        assert!(!fit.fits(Some(&in_a), "b-0"));
        let not_a = spec(json!({"containers": [], "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}]}}}}));
        assert!(!fit.fits(Some(&not_a), "a-0"));
        assert!(fit.fits(Some(&not_a), "b-0"));
        let no_zone = spec(json!({"containers": [], "affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}]}}}}));
        assert!(!fit.fits(Some(&no_zone), "a-0"));
        assert!(is_constrained(Some(&in_a)));
        assert!(!is_constrained(Some(&spec(json!({"containers": []})))));
        assert!(!fit.fits(None, "elsewhere"));
    }

    #[test]
    fn the_condition_is_written_once() {
        let now = Timestamp::from_second(1_700_000_000).unwrap();
        let pending: Pod = serde_json::from_value(json!({"metadata": {"name": "p"}})).unwrap();
        let patch = unschedulable_patch(&pending, "no node matches", now).unwrap();
        assert_eq!(patch["status"]["conditions"][0]["reason"], UNSCHEDULABLE);
        let marked: Pod =
            serde_json::from_value(json!({"metadata": {"name": "p"}, "status": {"conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}}))
            .unwrap();
        assert_eq!(unschedulable_patch(&marked, "no node matches", now), None);
    }
}
