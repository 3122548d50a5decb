//! The `Adaptive` strategy (upstream `rescheduleSubset`): a pod of a subset that stays unschedulable
//! (`PodScheduled=False`, reason `Unschedulable`, no node) for `rescheduleCriticalSeconds` is deleted, so
//! its workload creates a new one, and its subset gets `Schedulable=False`, which the pod webhook skips.
//! [`super::UNSCHEDULABLE_RECOVERY`] after the last such finding the subset is
//! `Schedulable=True` again. Subsets of an `Adaptive` WorkloadSpread always carry the condition.
//!
//! ```
//! use std::time::Duration;
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_schedule::spread::workload_spread::adaptive::stuck_pods;
//!
//! let pod: Pod = serde_json::from_value(serde_json::json!({"metadata": {"name": "p"},
//!     "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
//!         "reason": "Unschedulable", "lastTransitionTime": "2024-05-01T10:00:00Z"}]}})).unwrap();
//! let early = "2024-05-01T10:00:04Z".parse().unwrap();
//! assert_eq!(stuck_pods(&[&pod], Duration::from_secs(10), early), (vec![], Some(Duration::from_secs(6))));
//! let late = "2024-05-01T10:00:10Z".parse().unwrap();
//! assert_eq!(stuck_pods(&[&pod], Duration::from_secs(10), late), (vec![0], None));
//! ```

use std::borrow::Borrow;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::apps::v1beta1::WorkloadSpreadScheduleStrategyType;
use kruise_api::apps::v1beta1::{SUBSET_SCHEDULABLE, WorkloadSpreadScheduleStrategy};

use super::{DEFAULT_RESCHEDULE_CRITICAL_SECONDS, UNSCHEDULABLE_RECOVERY};

/// The reason of the subset condition when pods could not be scheduled.
pub const UNSCHEDULABLE_REASON: &str = "Unschedulable";
/// The reason of the subset condition otherwise.
pub const SCHEDULABLE_REASON: &str = "Schedulable";

/// How long a pod may stay unschedulable under `strategy`; `None` for `Fixed`. A negative or zero
/// `rescheduleCriticalSeconds` reschedules at once.
#[must_use]
pub fn critical_duration(strategy: &WorkloadSpreadScheduleStrategy) -> Option<Duration> {
    if strategy.type_ != Some(WorkloadSpreadScheduleStrategyType::Adaptive) {
        return None;
    }
    let seconds = strategy
        .adaptive
        .as_ref()
        .and_then(|adaptive| adaptive.reschedule_critical_seconds)
        .unwrap_or(DEFAULT_RESCHEDULE_CRITICAL_SECONDS);
    Some(Duration::from_secs(u64::try_from(seconds).unwrap_or(0)))
}

/// The indexes of `pods` unschedulable for `critical` or longer at `now`, and when the next one will be.
#[must_use]
pub fn stuck_pods<P: Borrow<Pod>>(
    pods: &[P],
    critical: Duration,
    now: Timestamp,
) -> (Vec<usize>, Option<Duration>) {
    let mut stuck = Vec::new();
    let mut again: Option<Duration> = None;
    for (index, pod) in pods.iter().enumerate() {
        let Some(since) = unschedulable_since(pod.borrow()) else {
            continue;
        };
        match left(since, critical, now) {
            None => stuck.push(index),
            Some(left) => again = Some(again.map_or(left, |again| again.min(left))),
        }
    }
    (stuck, again)
}

/// When the pod was found unschedulable, if it is.
fn unschedulable_since(pod: &Pod) -> Option<Timestamp> {
    let bound = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.node_name.as_deref())
        .is_some_and(|node| !node.is_empty());
    if bound || !kruise_api::pod::is_active(pod) {
        return None;
    }
    let scheduled = kruise_api::pod::condition(pod, "PodScheduled")?;
    if scheduled.status != "False" || scheduled.reason.as_deref() != Some(UNSCHEDULABLE_REASON) {
        return None;
    }
    scheduled
        .last_transition_time
        .as_ref()
        .map(|time| time.0)
        .or_else(|| pod.metadata.creation_timestamp.as_ref().map(|time| time.0))
}

/// Time left until `since + span` (`None` when it has come).
fn left(since: Timestamp, span: Duration, now: Timestamp) -> Option<Duration> {
    let span = SignedDuration::try_from(span).ok()?;
    let left = span.checked_sub(now.duration_since(since))?;
    (left > SignedDuration::ZERO)
        .then(|| Duration::try_from(left).ok())
        .flatten()
}

/// The subset's conditions after this reconcile: `Schedulable=False` (transition now) when pods were found
/// stuck, `True` once [`UNSCHEDULABLE_RECOVERY`] has passed since it became `False`, else as they were
/// (`True` added when absent); and when the recovery is due.
#[must_use]
pub fn schedulable_conditions(
    old: &[Condition],
    found_stuck: bool,
    generation: Option<i64>,
    now: Timestamp,
) -> (Vec<Condition>, Option<Duration>) {
    let mut conditions: Vec<Condition> = old
        .iter()
        .filter(|condition| condition.type_ != SUBSET_SCHEDULABLE)
        .cloned()
        .collect();
    let current = old
        .iter()
        .find(|condition| condition.type_ == SUBSET_SCHEDULABLE);
    let condition = |status: &str, reason: &str, message: &str| Condition {
        type_: SUBSET_SCHEDULABLE.to_owned(),
        status: status.to_owned(),
        last_transition_time: Time(now),
        message: message.to_owned(),
        observed_generation: generation,
        reason: reason.to_owned(),
    };
    let (next, again) = match current {
        _ if found_stuck => (
            condition(
                "False",
                UNSCHEDULABLE_REASON,
                "pods of the subset stayed unschedulable past rescheduleCriticalSeconds",
            ),
            Some(UNSCHEDULABLE_RECOVERY),
        ),
        Some(current) if current.status == "False" => {
            match left(current.last_transition_time.0, UNSCHEDULABLE_RECOVERY, now) {
                Some(left) => (current.clone(), Some(left)),
                None => (condition("True", SCHEDULABLE_REASON, ""), None),
            }
        }
        Some(current) => (current.clone(), None),
        None => (condition("True", SCHEDULABLE_REASON, ""), None),
    };
    conditions.push(next);
    (conditions, again)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    fn pending(name: &str, since: i64, reason: &str, node: Option<&str>) -> Pod {
        serde_json::from_value(serde_json::json!({"metadata": {"name": name},
            "spec": {"nodeName": node, "containers": []},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                "reason": reason, "lastTransitionTime": Time(at(since))}]}}))
        .unwrap()
    }

    #[test]
    fn only_pods_unschedulable_long_enough_are_stuck() {
        let pods = [
            pending("old", -20, "Unschedulable", None),
            pending("young", -3, "Unschedulable", None),
            pending("other-reason", -20, "SchedulerError", None),
            pending("bound", -20, "Unschedulable", Some("n")),
        ];
        let (stuck, again) = stuck_pods(&pods, Duration::from_secs(10), at(0));
        assert_eq!(stuck, [0]);
        assert_eq!(again, Some(Duration::from_secs(7)));
    }

    #[test]
    fn the_condition_goes_false_then_recovers() {
        let (found, again) = schedulable_conditions(&[], true, Some(2), at(0));
        assert_eq!(
            (found[0].status.as_str(), again),
            ("False", Some(UNSCHEDULABLE_RECOVERY))
        );
        let (kept, again) = schedulable_conditions(&found, false, Some(2), at(100));
        assert_eq!(kept, found);
        assert_eq!(again, Some(Duration::from_secs(200)));
        let (recovered, again) = schedulable_conditions(&found, false, Some(2), at(300));
        assert_eq!((recovered[0].status.as_str(), again), ("True", None));
        let (fresh, _) = schedulable_conditions(&[], false, None, at(0));
        assert_eq!(fresh[0].status, "True");
        let (same, _) = schedulable_conditions(&fresh, false, None, at(50));
        assert_eq!(same, fresh, "no churn while schedulable");
    }

    #[test]
    fn critical_duration_only_for_adaptive() {
        let fixed = WorkloadSpreadScheduleStrategy::default();
        assert_eq!(critical_duration(&fixed), None);
        let adaptive: WorkloadSpreadScheduleStrategy =
            serde_json::from_value(serde_json::json!({"type": "Adaptive"})).unwrap();
        assert_eq!(critical_duration(&adaptive), Some(Duration::from_secs(30)));
        let quick: WorkloadSpreadScheduleStrategy = serde_json::from_value(
            serde_json::json!({"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 10}}),
        )
        .unwrap();
        assert_eq!(critical_duration(&quick), Some(Duration::from_secs(10)));
    }
}
