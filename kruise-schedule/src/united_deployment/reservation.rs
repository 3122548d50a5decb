//! The `Adaptive` schedule strategy with `reserveUnschedulablePods` (upstream
//! `uniteddeployment_controller.go`: `calculateSubsetsStatusForReservedAdaptiveStrategy`,
//! `patchReservedStatusChangedPods`; `allocator.go`: `reservationAllocator`).
//!
//! For every subset that has a workload, a pod is *reserved* when
//!
//! * it is unschedulable (as [`super::adaptive`] reads it) and was created `rescheduleCriticalSeconds` ago
//!   or longer (a younger one is looked at again when it would time out), or
//! * it already carries `apps.kruise.io/united-deployment-reserved-pod: "true"`, is not being deleted and
//!   is not ready yet: a reserved pod that got a node stays reserved until it is ready, so its temporary
//!   substitutes are not removed before it can take over.
//!
//! A subset with reserved pods is unschedulable (`Schedulable=False`, reason `reschedule`, "reserved pods
//! found"); one without is schedulable (`Schedulable=True`, reason `reschedule`, "no reserved pods"). The
//! pods whose reserved state changed get the label written (`"true"`, or `"false"` on a pod labelled
//! `"true"` before). `unschedulableDuration` plays no part: a subset is schedulable again as soon as its
//! reserved pods are ready (or gone).
//!
//! [`super::allocation::allocate_reserving`] then keeps an unschedulable subset at its workload's replicas,
//! its reserved pods not counted, so the missing number is created in the following subsets (temporary
//! pods); once it has no reserved pod it takes its share again and the temporary pods are scaled away.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::apps::v1beta1::UnitedDeployment;

use super::adaptive::{
    PodSchedule, Recheck, Schedulability, SubsetSchedulability, durations_ms, previous_conditions,
    set_schedulable,
};
use super::workload::ObservedSubset;

/// Whether `pod` is reserved at `now_ms` given the critical time (see the module documentation), and
/// when a still young unschedulable pod would time out.
fn reserved_at(pod: &PodSchedule, now_ms: i64, critical_ms: i64) -> (bool, Option<i64>) {
    if pod.reserved_label == Some(true) && !pod.deleting && !pod.ready {
        return (true, None);
    }
    if !pod.unschedulable {
        return (false, None);
    }
    let deadline = pod.created_ms.unwrap_or(now_ms).saturating_add(critical_ms);
    if deadline <= now_ms {
        (true, None)
    } else {
        (false, Some(deadline))
    }
}

/// Decides the reserved pods and the unschedulable subsets (see the module documentation). `subsets` are
/// the workloads kept, by subset name; `pods` the pods of each subset; the previous conditions come from
/// `ud`'s status.
#[must_use]
pub fn reservation(
    ud: &UnitedDeployment,
    subsets: &BTreeMap<String, ObservedSubset>,
    pods: &BTreeMap<String, Vec<PodSchedule>>,
    now: &Time,
) -> Schedulability {
    let now_ms = now.0.as_millisecond();
    let (critical_ms, _) = durations_ms(ud);
    let mut decision = Schedulability::default();
    let mut recheck = Recheck::from(now_ms);
    for (name, observed) in subsets {
        let mut conditions = previous_conditions(ud, name);
        let mut reserved = 0;
        for pod in pods.get(name).into_iter().flatten() {
            let (is_reserved, deadline) = reserved_at(pod, now_ms, critical_ms);
            if let Some(at) = deadline {
                recheck.at(at);
            }
            if is_reserved {
                reserved += 1;
            }
            let labelled = pod.reserved_label == Some(true);
            if is_reserved != labelled && !pod.deleting && !pod.name.is_empty() {
                decision.relabel.push((pod.name.clone(), is_reserved));
            }
        }
        if reserved > 0 {
            set_schedulable(
                &mut conditions,
                "False",
                "reschedule",
                "reserved pods found",
                now,
            );
        } else {
            set_schedulable(
                &mut conditions,
                "True",
                "reschedule",
                "no reserved pods",
                now,
            );
        }
        decision.subsets.insert(
            name.clone(),
            SubsetSchedulability {
                unschedulable: reserved > 0,
                pending: 0,
                reserved,
                workload_replicas: observed.replicas,
                running: (observed.counts.replicas - reserved).max(0),
                conditions,
            },
        );
    }
    decision.recheck_after = recheck.after();
    decision
}

#[cfg(test)]
mod tests;
