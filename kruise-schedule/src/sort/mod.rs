//! Pod orderings of the planners, deterministic: where upstream sorts with Go's unstable
//! sort, ties here are broken by pod name, so equal inputs always give equal orders.
//!
//! * [`active`]: the default update order (Kubernetes `ActivePods`): unscheduled, pending, not ready,
//!   recently ready, often restarted and young pods first.
//! * [`deletion`]: CloneSet's 8-rule scale-down ranking (`ActivePodsWithRanks`) with the pod-deletion-cost
//!   annotation, and [`rankers`]: the same-node and topology-spread rankers it uses.
//! * [`priority`]: the update priority sorter (`weightPriority` / `orderPriority`).
//! * [`scatter`]: the scatter sorter that spreads pods sharing a label across update batches.
//! * [`select`]: top-k selection, so that a planner that needs the first `k` of `n` pods pays `O(n + k log k)`
//!   instead of a full sort.
//!
//! Every function takes `&[Pod]` and works on indexes into it; nothing clones a pod.
//!
//! ```
//! use k8s_openapi::api::core::v1::{Pod, PodSpec, PodStatus};
//! use kruise_schedule::sort::active;
//!
//! let pod = |name: &str, node: &str, phase: &str| Pod {
//!     metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta { name: Some(name.into()), ..Default::default() },
//!     spec: Some(PodSpec { node_name: Some(node.into()), ..Default::default() }),
//!     status: Some(PodStatus { phase: Some(phase.into()), ..Default::default() }),
//!     ..Default::default()
//! };
//! let pods = [pod("a", "n1", "Running"), pod("b", "", "Pending"), pod("c", "n1", "Pending")];
//! let mut order = vec![0, 1, 2];
//! active::sort(&pods, &mut order);
//! assert_eq!(order, [1, 2, 0]); // unscheduled first, then pending, then running
//! ```

pub mod active;
pub mod deletion;
pub mod priority;
pub mod rankers;
pub mod scatter;
pub mod select;

use std::cmp::Ordering;

use k8s_openapi::jiff::Timestamp;

/// Go's `afterOrZero` as an order: a zero (absent) time first, then later times before earlier ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatestFirst(pub Option<Timestamp>);

impl Ord for LatestFirst {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self.0, other.0) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(a), Some(b)) => b.cmp(&a),
        }
    }
}

impl PartialOrd for LatestFirst {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Kubernetes' phase ordinal for pod orderings: `Pending` 0, `Unknown` 1, `Running` 2, anything else 0.
#[must_use]
pub fn phase_ordinal(phase: &str) -> u8 {
    match phase {
        "Unknown" => 1,
        "Running" => 2,
        _ => 0,
    }
}
