//! The `Adaptive` schedule strategy (upstream `uniteddeployment_controller.go`:
//! `calculateSubsetsStatusForDefaultAdaptiveStrategy`; `allocator.go`: `getSubsetRunningReplicas`,
//! `isSubSetUnschedulable`; `GetTimeBeforePendingTimeout`).
//!
//! For every subset that has a workload:
//!
//! * a pod is *timed out* when it is pending, has no node, carries `PodScheduled=False` with reason
//!   `Unschedulable`, is not being deleted, and was created `rescheduleCriticalSeconds` (default 30) ago or
//!   longer; a pod that is unschedulable but younger is looked at again when it would time out;
//! * a subset whose `Schedulable` condition is `False` stays unschedulable until `unschedulableDuration`
//!   (default 300) seconds after that condition's transition, and is looked at again then; after it the
//!   condition turns `True` (reason `recover`);
//! * when the workload has fewer ready pods than pods and some pod timed out, the subset is unschedulable
//!   and its condition turns (or stays) `False` (reason `reschedule`);
//! * its *running* replicas are the workload's pods less the timed-out ones.
//!
//! [`super::allocation::allocate_with`] then keeps an unschedulable subset at its running replicas at most
//! (the rest goes to the following subsets, within their `maxReplicas`), and never takes running pods away
//! from a schedulable one. Like upstream, only the elastic rule (some subset with `minReplicas` or
//! `maxReplicas`) looks at it.
//!
//! With `reserveUnschedulablePods`, [`super::reservation`] decides instead: the timed-out pods are kept and
//! labelled reserved while temporary ones run in the following subsets.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::apps::v1beta1::{
    DEFAULT_RESCHEDULE_CRITICAL_SECONDS, DEFAULT_UNSCHEDULABLE_DURATION_SECONDS, UnitedDeployment,
    UnitedDeploymentScheduleStrategyType, UnitedDeploymentSubsetCondition,
    UnitedDeploymentSubsetConditionType,
};
use kruise_api::keys::united_deployment::RESERVED_POD_LABEL;

use super::workload::ObservedSubset;

/// What the adaptive strategy reads from one pod of a subset.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodSchedule {
    /// `metadata.name` (what a reserved label is patched on).
    pub name: String,
    /// `metadata.creationTimestamp` in milliseconds since the epoch (`None` when unset).
    pub created_ms: Option<i64>,
    /// Pending, without a node, not being deleted, and `PodScheduled=False` with reason `Unschedulable`.
    pub unschedulable: bool,
    /// Its `Ready` condition is `True`.
    pub ready: bool,
    /// It is being deleted.
    pub deleting: bool,
    /// Its `apps.kruise.io/united-deployment-reserved-pod` label: `Some(true)` for `"true"`, `Some(false)`
    /// for any other value, `None` without it.
    pub reserved_label: Option<bool>,
}

impl PodSchedule {
    /// Reads `pod`.
    #[must_use]
    pub fn of(pod: &Pod) -> Self {
        let status = pod.status.as_ref();
        let pending = status.and_then(|status| status.phase.as_deref()) == Some("Pending");
        let placed = pod
            .spec
            .as_ref()
            .and_then(|spec| spec.node_name.as_deref())
            .is_some_and(|node| !node.is_empty());
        let refused = status
            .and_then(|status| status.conditions.as_ref())
            .into_iter()
            .flatten()
            .any(|condition| {
                condition.type_ == "PodScheduled"
                    && condition.status == "False"
                    && condition.reason.as_deref() == Some("Unschedulable")
            });
        let ready = status
            .and_then(|status| status.conditions.as_ref())
            .into_iter()
            .flatten()
            .any(|condition| condition.type_ == "Ready" && condition.status == "True");
        Self {
            name: pod.metadata.name.clone().unwrap_or_default(),
            ready,
            deleting: pod.metadata.deletion_timestamp.is_some(),
            reserved_label: pod
                .metadata
                .labels
                .as_ref()
                .and_then(|labels| labels.get(RESERVED_POD_LABEL))
                .map(|value| value == "true"),
            created_ms: pod
                .metadata
                .creation_timestamp
                .as_ref()
                .map(|time| time.0.as_millisecond()),
            unschedulable: pending
                && !placed
                && refused
                && pod.metadata.deletion_timestamp.is_none(),
        }
    }
}

/// What the adaptive strategy decided about one subset.
#[derive(Clone, Debug, PartialEq)]
pub struct SubsetSchedulability {
    /// The subset may not grow beyond its running replicas.
    pub unschedulable: bool,
    /// Its pods that stayed unschedulable longer than `rescheduleCriticalSeconds`.
    pub pending: i32,
    /// With `reserveUnschedulablePods`: its reserved pods (0 otherwise).
    pub reserved: i32,
    /// Its workload's replicas as observed (`spec.replicas` of the workload).
    pub workload_replicas: i32,
    /// Its workload's pods less the pending ones (never below 0).
    pub running: i32,
    /// Its conditions to write (the previous ones with `Schedulable` updated).
    pub conditions: Vec<UnitedDeploymentSubsetCondition>,
}

/// The adaptive decision for a whole UnitedDeployment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schedulability {
    /// By subset name, for the subsets that have a workload.
    pub subsets: BTreeMap<String, SubsetSchedulability>,
    /// How soon to look again: the earliest time a pod would time out or a subset would recover.
    pub recheck_after: Option<Duration>,
    /// With `reserveUnschedulablePods`: the reserved labels to write, `(pod name, reserved)`.
    pub relabel: Vec<(String, bool)>,
}

/// Whether `ud` uses the `Adaptive` schedule strategy.
#[must_use]
pub fn is_adaptive(ud: &UnitedDeployment) -> bool {
    ud.spec.topology.schedule_strategy.type_ == UnitedDeploymentScheduleStrategyType::Adaptive
}

/// Whether `ud` uses the `Adaptive` schedule strategy with `reserveUnschedulablePods`.
#[must_use]
pub fn is_reserving(ud: &UnitedDeployment) -> bool {
    is_adaptive(ud)
        && ud
            .spec
            .topology
            .schedule_strategy
            .adaptive
            .as_ref()
            .is_some_and(|adaptive| adaptive.reserve_unschedulable_pods)
}

/// `(rescheduleCriticalSeconds, unschedulableDuration)` of `ud` in milliseconds, defaults filled in.
pub(super) fn durations_ms(ud: &UnitedDeployment) -> (i64, i64) {
    let adaptive = ud.spec.topology.schedule_strategy.adaptive.as_ref();
    let critical = adaptive
        .and_then(|adaptive| adaptive.reschedule_critical_seconds)
        .unwrap_or(DEFAULT_RESCHEDULE_CRITICAL_SECONDS);
    let duration = adaptive
        .and_then(|adaptive| adaptive.unschedulable_duration)
        .unwrap_or(DEFAULT_UNSCHEDULABLE_DURATION_SECONDS);
    (
        i64::from(critical.max(0)) * 1000,
        i64::from(duration.max(0)) * 1000,
    )
}

/// Decides which subsets are unschedulable (see the module documentation). `subsets` are the workloads
/// kept, by subset name; `pods` the pods of each subset; the previous conditions come from `ud`'s status.
#[must_use]
pub fn schedulability(
    ud: &UnitedDeployment,
    subsets: &BTreeMap<String, ObservedSubset>,
    pods: &BTreeMap<String, Vec<PodSchedule>>,
    now: &Time,
) -> Schedulability {
    let now_ms = now.0.as_millisecond();
    let (critical_ms, duration_ms) = durations_ms(ud);
    let mut decision = Schedulability::default();
    let mut recheck = Recheck::from(now_ms);
    for (name, observed) in subsets {
        let mut conditions = previous_conditions(ud, name);
        let mut unschedulable = false;
        if let Some(marked) = schedulable_condition(&conditions).filter(|c| c.status == "False") {
            let since = marked
                .last_transition_time
                .as_ref()
                .map_or(now_ms, |time| time.0.as_millisecond());
            let recover_at = since.saturating_add(duration_ms);
            if now_ms < recover_at {
                unschedulable = true;
                recheck.at(recover_at);
            } else {
                let message = format!(
                    "unschedulable subset recovered after {} seconds",
                    duration_ms / 1000
                );
                set_schedulable(&mut conditions, "True", "recover", &message, now);
            }
        }
        let mut pending = 0;
        if observed.counts.ready < observed.counts.replicas {
            for pod in pods.get(name).into_iter().flatten() {
                if !pod.unschedulable {
                    continue;
                }
                let deadline = pod.created_ms.unwrap_or(now_ms).saturating_add(critical_ms);
                if deadline <= now_ms {
                    pending += 1;
                } else {
                    recheck.at(deadline);
                }
            }
            if pending > 0 {
                unschedulable = true;
                let message = "timeout pending pods found";
                set_schedulable(&mut conditions, "False", "reschedule", message, now);
                recheck.at(now_ms.saturating_add(duration_ms));
            }
        }
        decision.subsets.insert(
            name.clone(),
            SubsetSchedulability {
                unschedulable,
                pending,
                reserved: 0,
                workload_replicas: observed.replicas,
                running: (observed.counts.replicas - pending).max(0),
                conditions,
            },
        );
    }
    decision.recheck_after = recheck.after();
    decision
}

/// The earliest instant after `now` (milliseconds since the epoch) at which a decision should be taken
/// again.
#[derive(Clone, Copy, Debug)]
pub(super) struct Recheck {
    now_ms: i64,
    earliest_ms: Option<i64>,
}

impl From<i64> for Recheck {
    fn from(now_ms: i64) -> Self {
        Self {
            now_ms,
            earliest_ms: None,
        }
    }
}

impl Recheck {
    /// Asks for a look at `at_ms`; instants not after now are ignored.
    pub(super) fn at(&mut self, at_ms: i64) {
        if at_ms > self.now_ms {
            self.earliest_ms = Some(
                self.earliest_ms
                    .map_or(at_ms, |earliest| earliest.min(at_ms)),
            );
        }
    }

    /// How long from now until the earliest look asked for, if any.
    pub(super) fn after(self) -> Option<Duration> {
        self.earliest_ms.map(|at| {
            Duration::from_millis(u64::try_from(at.saturating_sub(self.now_ms)).unwrap_or(0))
        })
    }
}

/// The conditions `ud`'s status holds for the subset `name` (none when it has no status for it).
pub(super) fn previous_conditions(
    ud: &UnitedDeployment,
    name: &str,
) -> Vec<UnitedDeploymentSubsetCondition> {
    ud.status
        .as_ref()
        .and_then(|status| status.subset_statuses.iter().find(|s| s.name == name))
        .map(|status| status.conditions.clone())
        .unwrap_or_default()
}

fn schedulable_condition(
    conditions: &[UnitedDeploymentSubsetCondition],
) -> Option<&UnitedDeploymentSubsetCondition> {
    conditions
        .iter()
        .find(|condition| condition.type_ == UnitedDeploymentSubsetConditionType::Schedulable)
}

/// Sets the subset's `Schedulable` condition: the transition time changes only with the status.
pub(super) fn set_schedulable(
    conditions: &mut Vec<UnitedDeploymentSubsetCondition>,
    value: &str,
    reason: &str,
    message: &str,
    now: &Time,
) {
    let transition = schedulable_condition(conditions)
        .filter(|existing| existing.status == value)
        .and_then(|existing| existing.last_transition_time.clone())
        .unwrap_or_else(|| now.clone());
    conditions
        .retain(|condition| condition.type_ != UnitedDeploymentSubsetConditionType::Schedulable);
    conditions.push(UnitedDeploymentSubsetCondition {
        type_: UnitedDeploymentSubsetConditionType::Schedulable,
        status: value.to_owned(),
        last_transition_time: Some(transition),
        reason: reason.to_owned(),
        message: message.to_owned(),
    });
}

#[cfg(test)]
mod tests;
