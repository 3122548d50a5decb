//! The `controller.kubernetes.io/pod-deletion-cost` WorkloadSpread gives the pods of each subset (upstream
//! `syncSubsetPodDeletionCost`), so that a workload that ranks by it (ReplicaSet, CloneSet) scales down the
//! surplus of subsets past their `maxReplicas` first, and later subsets before earlier ones:
//!
//! * of a subset with `n` subsets in all and index `i`, the pods within its limit (all of them without a
//!   limit) get `100 × (n - i)`, the surplus `-100 × (n - i)`;
//! * which pods are the surplus: the active pods in Kubernetes' `ActivePods` order, most stable first
//!   (scheduled, running, ready, ready the longest, fewest restarts, oldest); the first `limit` are kept.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_schedule::spread::workload_spread::deletion_cost::subset_costs;
//!
//! let pod = |name: &str, ready: &str| -> Pod { serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": name, "creationTimestamp": "2024-05-01T10:00:00Z"},
//!     "spec": {"nodeName": "n", "containers": []},
//!     "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": ready}]}})).unwrap() };
//! let pods = [pod("a", "True"), pod("b", "False"), pod("c", "True")];
//! // Subset 0 of 2, at most 2 pods: the not-ready one is the surplus.
//! assert_eq!(subset_costs(&pods, 2, 0, Some(2)), [200, -200, 200]);
//! assert_eq!(subset_costs(&pods, 2, 1, None), [100, 100, 100]);
//! ```

use std::borrow::Borrow;

use k8s_openapi::api::core::v1::Pod;

use crate::sort::active;

/// The cost unit upstream writes (`100` / `-100` for the last subset).
pub const COST_UNIT: i32 = 100;

/// The deletion cost of each of `pods` (the active pods of subset `index` of `subsets`), in their order.
#[must_use]
pub fn subset_costs<P: Borrow<Pod>>(
    pods: &[P],
    subsets: usize,
    index: usize,
    limit: Option<i32>,
) -> Vec<i32> {
    let weight = i32::try_from(subsets.saturating_sub(index))
        .unwrap_or(i32::MAX)
        .saturating_mul(COST_UNIT);
    let mut costs = vec![weight; pods.len()];
    let Some(limit) = limit.and_then(|limit| usize::try_from(limit).ok()) else {
        return costs;
    };
    if pods.len() <= limit {
        return costs;
    }
    let mut order: Vec<usize> = (0..pods.len()).collect();
    // ActivePods puts the least stable first; the most stable `limit` are the last ones.
    active::sort(pods, &mut order);
    let surplus = pods.len() - limit;
    for &position in order.iter().take(surplus) {
        if let Some(cost) = costs.get_mut(position) {
            *cost = -weight;
        }
    }
    costs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, node: Option<&str>, ready: bool) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "creationTimestamp": "2024-05-01T10:00:00Z"},
            "spec": {"nodeName": node, "containers": []},
            "status": {"phase": if node.is_some() { "Running" } else { "Pending" },
                "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}
        }))
        .unwrap()
    }

    #[test]
    fn the_least_stable_pods_are_the_surplus() {
        let pods = [
            pod("ready-1", Some("n"), true),
            pod("pending", None, false),
            pod("ready-2", Some("n"), true),
            pod("not-ready", Some("n"), false),
        ];
        assert_eq!(subset_costs(&pods, 3, 0, Some(2)), [300, -300, 300, -300]);
        assert_eq!(subset_costs(&pods, 3, 1, Some(3)), [200, -200, 200, 200]);
        assert_eq!(subset_costs(&pods, 3, 2, Some(4)), [100; 4]);
        assert_eq!(subset_costs(&pods, 3, 2, Some(0)), [-100; 4]);
        assert_eq!(subset_costs(&pods, 1, 0, None), [100; 4]);
        assert!(subset_costs::<Pod>(&[], 1, 0, Some(1)).is_empty());
    }
}
