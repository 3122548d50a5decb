//! CloneSet's scale-down ranking (upstream `ActivePodsWithRanks` in `pkg/controller/cloneset/utils/pod_sorter.go`);
//! "smaller" is deleted first:
//!
//! 1. unscheduled before scheduled (only when exactly one has no node);
//! 2. `Pending` < `Unknown` < `Running` (other phases count as `Pending`);
//! 3. not available (lifecycle-aware, when an availability is given) before available, then not ready
//!    before ready;
//! 4. lower `controller.kubernetes.io/pod-deletion-cost` first ([`deletion_cost`]);
//! 5. higher rank first ([`super::rankers`]);
//! 6. when both are ready, the more recently ready first (a zero time counts as the most recent);
//! 7. more container restarts first;
//! 8. newer pods first (a zero creation time first);
//! 9. (kruise-rs) ties by pod name.

use std::cmp::Ordering;

use k8s_openapi::api::core::v1::Pod;
use kruise_api::keys::kubernetes::POD_DELETION_COST_ANNOTATION;

use super::active::ActiveKey;

/// The value of the `controller.kubernetes.io/pod-deletion-cost` annotation as Kubernetes reads it: an int32
/// whose first character is `-`, `1`-`9`, or which is exactly `"0"`; anything else (absent, `+5`, `007`, out of
/// range) is 0.
///
/// ```
/// use kruise_schedule::sort::deletion::parse_deletion_cost;
///
/// assert_eq!(parse_deletion_cost("-100"), -100);
/// assert_eq!(parse_deletion_cost("+5"), 0);
/// assert_eq!(parse_deletion_cost("007"), 0);
/// assert_eq!(parse_deletion_cost("2147483648"), 0);
/// ```
#[must_use]
pub fn parse_deletion_cost(value: &str) -> i32 {
    let valid_first = match value.as_bytes().first() {
        Some(b'-' | b'1'..=b'9') => true,
        Some(b'0') => value == "0",
        _ => false,
    };
    if !valid_first {
        return 0;
    }
    value.parse().unwrap_or(0)
}

/// The deletion cost of `pod` ([`parse_deletion_cost`] of its annotation, 0 without it).
#[must_use]
pub fn deletion_cost(pod: &Pod) -> i32 {
    kruise_api::pod::annotation(pod, POD_DELETION_COST_ANNOTATION).map_or(0, parse_deletion_cost)
}

/// The sort key of one pod in the scale-down ranking; compare keys with `Ord`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeletionKey<'a> {
    /// The readings shared with the `ActivePods` order (rules 1, 2, 3b, 6, 7, 8 and the name).
    pub active: ActiveKey<'a>,
    /// Rule 3a: lifecycle-aware availability, when the ranking uses one (`None` skips the rule).
    pub available: Option<bool>,
    /// Rule 4: the deletion cost.
    pub cost: i32,
    /// Rule 5: the rank (higher is deleted first).
    pub rank: f64,
}

impl<'a> DeletionKey<'a> {
    /// The key of `pod` with the given availability (`None`: rule 3a skipped) and rank.
    #[must_use]
    pub fn of(pod: &'a Pod, available: Option<bool>, rank: f64) -> Self {
        Self {
            active: ActiveKey::of(pod),
            available,
            cost: deletion_cost(pod),
            rank,
        }
    }
}

impl Eq for DeletionKey<'_> {}

impl Ord for DeletionKey<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (&self.active, &other.active);
        a.scheduled
            .cmp(&b.scheduled)
            .then(a.phase.cmp(&b.phase))
            .then_with(|| match (self.available, other.available) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => Ordering::Equal,
            })
            .then(a.ready.cmp(&b.ready))
            .then(self.cost.cmp(&other.cost))
            .then_with(|| other.rank.total_cmp(&self.rank))
            .then_with(|| {
                if a.ready && b.ready {
                    a.ready_since.cmp(&b.ready_since)
                } else {
                    Ordering::Equal
                }
            })
            .then(a.restarts.cmp(&b.restarts))
            .then(a.created.cmp(&b.created))
            .then(a.name.cmp(b.name))
    }
}

impl PartialOrd for DeletionKey<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
