//! The status of a budget, computed from the pods it covers (upstream's PodUnavailableBudget controller,
//! `pkg/controller/podunavailablebudget`).
//!
//! The two lists of the status are kept as follows (times are the status's own, written when a deletion,
//! eviction or update was admitted):
//!
//! * `disruptedPods` (deleted or evicted): an entry is dropped once its pod is gone, finished
//!   (`Succeeded`/`Failed`) or being deleted (from then on the pod is not available anyway), or
//!   [`DELETION_TIMEOUT`] (2 minutes, upstream's `DeletionTimeout`) after its time: a deletion that was
//!   admitted but never happened gives its unit back. Until then the pod is not counted as available;
//! * `unavailablePods` (updated in place): an entry is dropped once its pod is gone, finished or being
//!   deleted, or once the pod is available again with its update applied (`InPlaceUpdateReady` absent or
//!   `True`, and the in-place update state says the update completed: [`kruise_inplace::completion`]) and
//!   the entry is older than [`UPDATE_SETTLE_TIME`] (10 seconds: the update may not have reached the pod
//!   yet when the entry is this young, so a pod that still looks untouched keeps it).
//!
//! `currentAvailable` counts the available pods ([`is_available`]) that are in neither list;
//! `desiredAvailable` and `totalReplicas` come from [`super::availability`]; `unavailableAllowed` is
//! `max(currentAvailable - desiredAvailable, 0)`. The status says when to look again: at the next time an
//! entry would expire.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::policy::v1beta1::{PodUnavailableBudget, PodUnavailableBudgetStatus};
use kruise_inplace::UpdateOptions;

use super::BudgetError;
use super::availability::{desired_available, is_available, protect_total_replicas};

/// How long a `disruptedPods` entry is kept while its pod is still there (upstream `DeletionTimeout`).
pub const DELETION_TIMEOUT: Duration = Duration::from_secs(120);

/// How long an `unavailablePods` entry is kept at least, while the update may not show on the pod yet.
pub const UPDATE_SETTLE_TIME: Duration = Duration::from_secs(10);

/// A computed status and when to compute it again.
#[derive(Clone, Debug, PartialEq)]
pub struct ComputedStatus {
    /// The status to write.
    pub status: PodUnavailableBudgetStatus,
    /// When an entry of one of its lists expires next (from `now`).
    pub requeue_after: Option<Duration>,
}

/// The number of pods a budget expects: `protectTotalReplicas` when set; else for a `targetRef` the
/// workload's replicas (`workload_replicas`, 0 when unknown); else the active pods among `pods`.
#[must_use]
pub fn expected_count(
    budget: &PodUnavailableBudget,
    workload_replicas: Option<i32>,
    pods: &[&Pod],
) -> i32 {
    if let Some(total) = protect_total_replicas(budget) {
        return total;
    }
    if budget.spec.target_reference.is_some() {
        return workload_replicas.unwrap_or(0).max(0);
    }
    let active = pods
        .iter()
        .filter(|pod| kruise_api::pod::is_active(pod))
        .count();
    i32::try_from(active).unwrap_or(i32::MAX)
}

/// The status of `budget` given the pods it covers and does not ignore (`pods`, all of its namespace),
/// `expected` ([`expected_count`]) and `now`. The lists start from the budget's current status.
///
/// # Errors
/// `maxUnavailable` or `minAvailable` does not scale.
pub fn compute_status(
    budget: &PodUnavailableBudget,
    pods: &[&Pod],
    expected: i32,
    now: Timestamp,
) -> Result<ComputedStatus, BudgetError> {
    let desired = desired_available(budget, expected)?;
    let previous = budget.status.clone().unwrap_or_default();
    let by_name: BTreeMap<&str, &Pod> = pods
        .iter()
        .filter_map(|pod| Some((pod.metadata.name.as_deref()?, *pod)))
        .collect();
    let mut next = Expiry::default();
    let disrupted: BTreeMap<String, Time> = previous
        .disrupted_pods
        .iter()
        .filter(|(name, time)| {
            let live = by_name
                .get(name.as_str())
                .is_some_and(|pod| kruise_api::pod::is_active(pod));
            live && next.keep_until(time, DELETION_TIMEOUT, now)
        })
        .map(|(name, time)| (name.clone(), time.clone()))
        .collect();
    let unavailable: BTreeMap<String, Time> = previous
        .unavailable_pods
        .iter()
        .filter(|(name, time)| {
            let Some(pod) = by_name
                .get(name.as_str())
                .filter(|pod| kruise_api::pod::is_active(pod))
            else {
                return false;
            };
            let settling = next.keep_until(time, UPDATE_SETTLE_TIME, now);
            settling || !is_updated_and_available(pod)
        })
        .map(|(name, time)| (name.clone(), time.clone()))
        .collect();
    let listed: BTreeSet<&str> = disrupted
        .keys()
        .chain(unavailable.keys())
        .map(String::as_str)
        .collect();
    let current = by_name
        .iter()
        .filter(|(name, pod)| !listed.contains(*name) && is_available(pod))
        .count();
    let current = i32::try_from(current).unwrap_or(i32::MAX);
    Ok(ComputedStatus {
        status: PodUnavailableBudgetStatus {
            observed_generation: budget.metadata.generation.unwrap_or_default(),
            disrupted_pods: disrupted,
            unavailable_pods: unavailable,
            unavailable_allowed: current.saturating_sub(desired).max(0),
            current_available: current,
            desired_available: desired,
            total_replicas: expected,
        },
        requeue_after: next.earliest,
    })
}

/// Whether an in-place updated pod is available again with its update applied.
fn is_updated_and_available(pod: &Pod) -> bool {
    is_available(pod)
        && kruise_api::pod::is_in_place_update_ready(pod)
        && kruise_inplace::completion::is_completed(pod, &UpdateOptions::default())
}

/// The earliest expiry of the entries kept.
#[derive(Default)]
struct Expiry {
    earliest: Option<Duration>,
}

impl Expiry {
    /// Whether an entry written at `time` is younger than `keep` at `now`; if so, remembers when it
    /// expires.
    fn keep_until(&mut self, time: &Time, keep: Duration, now: Timestamp) -> bool {
        let keep = SignedDuration::try_from(keep).unwrap_or(SignedDuration::MAX);
        let age = now.duration_since(time.0);
        let left = keep.checked_sub(age).unwrap_or(SignedDuration::ZERO);
        if left <= SignedDuration::ZERO {
            return false;
        }
        let left = Duration::try_from(left).unwrap_or(Duration::ZERO);
        self.earliest = Some(self.earliest.map_or(left, |earliest| earliest.min(left)));
        true
    }
}

#[cfg(test)]
mod tests;
