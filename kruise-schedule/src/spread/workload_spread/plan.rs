//! One reconcile of the WorkloadSpread controller: the new status, the deletion costs to write, the pods
//! the `Adaptive` strategy deletes, and when to look again.

use std::borrow::Borrow;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{WorkloadSpread, WorkloadSpreadStatus, WorkloadSpreadSubsetStatus};
use kruise_api::keys::kubernetes::POD_DELETION_COST_ANNOTATION;

use super::WorkloadSpreadError;
use super::adaptive::{critical_duration, schedulable_conditions, stuck_pods};
use super::admission::spread_key;
use super::deletion_cost::subset_costs;
use super::matched::{matched_of, pod_key};
use super::max_replicas::subset_limit;
use super::status::{SubsetPods, subset_status};

/// What the controller observed.
#[derive(Clone, Debug)]
pub struct PlanInput<'a, P> {
    /// The WorkloadSpread.
    pub spread: &'a WorkloadSpread,
    /// The pods of its namespace whose annotation names it (any state); others are ignored.
    pub pods: &'a [P],
    /// The target workload's replicas (`None` when unknown: only a percentage `maxReplicas` needs it).
    pub workload_replicas: Option<i32>,
    /// The time of the reconcile.
    pub now: Timestamp,
}

/// What the controller does.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// The status to write (when it differs from the object's).
    pub status: WorkloadSpreadStatus,
    /// `(pod name, cost)` for the pods whose `controller.kubernetes.io/pod-deletion-cost` must change.
    pub deletion_costs: Vec<(String, String)>,
    /// Pods to delete so their workload recreates them in another subset (`Adaptive`).
    pub reschedule: Vec<String>,
    /// When to reconcile again (an in-flight entry expires, a pod may become stuck, a subset recovers).
    pub requeue_after: Option<Duration>,
}

/// Plans one reconcile (see the module doc of [`super`]).
///
/// # Errors
/// A subset's `maxReplicas` does not parse, or is a percentage while the workload's replicas are unknown.
pub fn plan<P: Borrow<Pod>>(input: &PlanInput<'_, P>) -> Result<Plan, WorkloadSpreadError> {
    let spread = input.spread;
    let name = spread.metadata.name.as_deref().unwrap_or_default();
    let key = spread_key(spread);
    let critical = critical_duration(&spread.spec.schedule_strategy);
    let old = spread.status.clone().unwrap_or_default();
    // The pods of this spread with their subset and key; pods with an unreadable annotation are skipped.
    let annotated: Vec<(&Pod, String, String)> = input
        .pods
        .iter()
        .map(Borrow::borrow)
        .filter_map(|pod| {
            let matched = matched_of(pod).ok().flatten()?;
            (matched.name == name).then(|| {
                let key = pod_key(pod, Some(&matched)).to_owned();
                (pod, matched.subset, key)
            })
        })
        .collect();
    let seen: Vec<&str> = annotated.iter().map(|(_, _, key)| key.as_str()).collect();
    let mut plan = Plan::default();
    let mut earliest = |again: Option<Duration>| {
        if let Some(again) = again {
            plan.requeue_after = Some(plan.requeue_after.map_or(again, |old| old.min(again)));
        }
    };
    let mut statuses = Vec::with_capacity(spread.spec.subsets.len());
    let mut costs = Vec::new();
    let mut reschedule = Vec::new();
    let subsets = spread.spec.subsets.len();
    for (index, subset) in spread.spec.subsets.iter().enumerate() {
        let limit = subset_limit(&key, subset, input.workload_replicas)?;
        let active: Vec<&(&Pod, String, String)> = annotated
            .iter()
            .filter(|(pod, in_subset, _)| {
                *in_subset == subset.name && kruise_api::pod::is_active(pod)
            })
            .collect();
        let previous = old
            .subset_statuses
            .iter()
            .find(|entry| entry.name == subset.name)
            .cloned()
            .unwrap_or_else(|| WorkloadSpreadSubsetStatus {
                name: subset.name.clone(),
                ..WorkloadSpreadSubsetStatus::default()
            });
        let pods = SubsetPods {
            active: active.iter().map(|(_, _, key)| key.as_str()).collect(),
            seen: seen.clone(),
        };
        let (mut status, again) = subset_status(&previous, &pods, limit, input.now);
        earliest(again);
        let active_pods: Vec<&Pod> = active.iter().map(|(pod, _, _)| *pod).collect();
        if let Some(critical) = critical {
            let (stuck, again) = stuck_pods(&active_pods, critical, input.now);
            earliest(again);
            let (conditions, again) = schedulable_conditions(
                &status.conditions,
                !stuck.is_empty(),
                spread.metadata.generation,
                input.now,
            );
            earliest(again);
            status.conditions = conditions;
            reschedule.extend(
                stuck
                    .iter()
                    .filter_map(|&at| active_pods.get(at))
                    .filter_map(|pod| pod.metadata.name.clone()),
            );
        }
        for (pod, cost) in active_pods
            .iter()
            .zip(subset_costs(&active_pods, subsets, index, limit))
        {
            let wanted = cost.to_string();
            if kruise_api::pod::annotation(pod, POD_DELETION_COST_ANNOTATION)
                != Some(wanted.as_str())
                && let Some(name) = &pod.metadata.name
            {
                costs.push((name.clone(), wanted));
            }
        }
        statuses.push(status);
    }
    plan.status = WorkloadSpreadStatus {
        observed_generation: spread.metadata.generation.unwrap_or_default(),
        subset_statuses: statuses,
        versioned_subset_statuses: old.versioned_subset_statuses,
    };
    plan.deletion_costs = costs;
    plan.reschedule = reschedule;
    Ok(plan)
}

#[cfg(test)]
mod tests;
