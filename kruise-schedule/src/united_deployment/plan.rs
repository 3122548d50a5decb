//! One reconcile of a UnitedDeployment as a pure decision (upstream `Reconcile`, `manageSubsets`,
//! `manageSubsetProvision`): which subset workloads to create, update and delete, and the status to write
//! when all of it succeeds.
//!
//! * Workloads of a kind other than the template's, duplicates of a subset (all but the oldest), and the
//!   workloads of subsets no longer in the topology are deleted.
//! * A subset without a workload gets one ([`super::desired`]).
//! * A workload whose revision label, patch annotation, replicas or partition differ from what the subset
//!   wants is updated: CloneSets, Advanced StatefulSets and Deployments take the whole desired spec;
//!   Kubernetes StatefulSets, whose other fields are immutable, take the template, replicas and update
//!   strategy. Labels and annotations are merged.
//! * Under the `Adaptive` schedule strategy, [`super::adaptive`] decides which subsets are unschedulable
//!   from their pods; the allocation moves their replicas on, their `Schedulable` conditions are written,
//!   and [`Plan::recheck_after`] says when a pod would time out or a subset recover. With
//!   `reserveUnschedulablePods`, [`super::reservation`] decides instead and
//!   [`super::allocation::allocate_reserving`] allocates; [`Plan::relabel`] lists the reserved labels to
//!   write, and the status counts the reserved pods (`reservedPods`, per subset too) and leaves them out
//!   of `replicas`.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::apps::v1beta1::{
    UnitedDeployment, UnitedDeploymentConditionType, UnitedDeploymentStatus,
};

use super::UnitedDeploymentError;
use super::adaptive::{PodSchedule, is_adaptive, is_reserving, schedulability};
use super::allocation::{allocate_reserving, allocate_with};
use super::desired::{SubsetShape, desired_workload};
use super::native_spec::{stateful_set_spec, stateful_set_spec_mut};
use super::partitions::partitions;
use super::reservation::reservation;
use super::status::{StatusInput, set_condition, status};
use super::workload::{ObservedSubset, SubsetWorkload, WorkloadKind};

/// What one reconcile starts from.
#[derive(Clone, Copy, Debug)]
pub struct PlanInput<'a> {
    /// The UnitedDeployment.
    pub united_deployment: &'a UnitedDeployment,
    /// Every workload it controls, of any of the four kinds.
    pub workloads: &'a [SubsetWorkload],
    /// The name of its update revision (the ControllerRevision of its current template).
    pub update_revision: &'a str,
    /// The collision count that revision was named with.
    pub collision_count: i32,
    /// The time written into changed conditions, and the clock of the `Adaptive` strategy.
    pub now: &'a Time,
    /// What the `Adaptive` strategy reads from the pods of each subset, by subset name (ignored under
    /// `Fixed`).
    pub pods: &'a BTreeMap<String, Vec<PodSchedule>>,
}

/// A workload to delete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deletion {
    /// Its kind.
    pub kind: WorkloadKind,
    /// Its name.
    pub name: String,
    /// Why: `kind changed`, `duplicate of subset X`, `subset X removed`.
    pub reason: String,
}

/// An event to record on the UnitedDeployment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedEvent {
    /// Warning rather than Normal.
    pub warning: bool,
    /// The reason.
    pub reason: &'static str,
    /// The message.
    pub message: String,
}

/// What one reconcile does.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Subset workloads to create (with `generateName`).
    pub create: Vec<SubsetWorkload>,
    /// Subset workloads to replace: the observed object (name, `resourceVersion`) with the wanted fields.
    pub update: Vec<SubsetWorkload>,
    /// Subset workloads to delete.
    pub delete: Vec<Deletion>,
    /// Events to record.
    pub events: Vec<PlannedEvent>,
    /// The status to write when every write succeeds (conditions `SubsetProvisioned` and `SubsetUpdated`
    /// `True` when there was something to do); on failures the caller sets them `False`.
    pub status: UnitedDeploymentStatus,
    /// Nothing to write and every subset workload has caught up with what it was asked for (its status
    /// describes its generation, all its replicas exist and are ready, and those above its partition are
    /// updated): the status will not change until something else does.
    pub settled: bool,
    /// Under the `Adaptive` strategy: how soon to reconcile again, when a pod would time out or an
    /// unschedulable subset recover.
    pub recheck_after: Option<Duration>,
    /// With `reserveUnschedulablePods`: the pods whose `apps.kruise.io/united-deployment-reserved-pod`
    /// label to write, `(pod name, reserved)`; written before the workloads.
    pub relabel: Vec<(String, bool)>,
}

/// Decides one reconcile (see the module documentation).
///
/// # Errors
/// The template names no kind, the subsets' replicas are invalid or do not add up, or a subset's patch
/// does not apply; nothing should be written then but a Warning event.
pub fn plan(input: &PlanInput<'_>) -> Result<Plan, UnitedDeploymentError> {
    let ud = input.united_deployment;
    let kind =
        WorkloadKind::of_template(&ud.spec.template).ok_or(UnitedDeploymentError::NoTemplate)?;
    let mut plan = Plan {
        create: Vec::new(),
        update: Vec::new(),
        delete: Vec::new(),
        events: Vec::new(),
        status: UnitedDeploymentStatus::default(),
        settled: false,
        recheck_after: None,
        relabel: Vec::new(),
    };
    let adaptive = is_adaptive(ud);
    let reserving = is_reserving(ud);
    let kept = keep_one_per_subset(input.workloads, kind, &mut plan.delete);
    let current: BTreeMap<String, i32> = kept
        .iter()
        .map(|(subset, (_, observed))| (subset.clone(), observed.replicas))
        .collect();
    let schedulable = adaptive.then(|| {
        let observed: BTreeMap<String, ObservedSubset> = kept
            .iter()
            .map(|(subset, (_, observed))| (subset.clone(), observed.clone()))
            .collect();
        if reserving {
            reservation(ud, &observed, input.pods, input.now)
        } else {
            schedulability(ud, &observed, input.pods, input.now)
        }
    });
    let replicas = match &schedulable {
        Some(decided) if reserving => allocate_reserving(&ud.spec, &decided.subsets)?,
        decided => allocate_with(
            &ud.spec,
            &current,
            decided.as_ref().map(|decided| &decided.subsets),
        )?,
    };
    let partitions = partitions(&ud.spec, &replicas);
    let mut created_subsets = 0;
    for subset in &ud.spec.topology.subsets {
        let shape = SubsetShape {
            subset,
            revision: input.update_revision,
            replicas: replicas.get(&subset.name).copied().unwrap_or(0),
            partition: partitions.get(&subset.name).copied().unwrap_or(0),
        };
        let desired = desired_workload(ud, shape)?;
        match kept.get(&subset.name) {
            None => {
                created_subsets += 1;
                plan.create.push(desired);
            }
            Some((existing, observed)) => {
                // Compared as read back from the desired object, so a kind without a partition
                // (Deployment, an `OnDelete` StatefulSet) never looks changed.
                let wanted = desired.observe();
                let differs = observed.revision != wanted.revision
                    || observed.patch != wanted.patch
                    || observed.replicas != wanted.replicas
                    || observed.partition != wanted.partition;
                if differs {
                    plan.update.push(updated(existing, desired));
                }
            }
        }
    }
    for (subset, (_, observed)) in &kept {
        if !ud.spec.topology.subsets.iter().any(|s| &s.name == subset) {
            plan.delete.push(Deletion {
                kind: observed.kind,
                name: observed.name.clone(),
                reason: format!("subset {subset} removed"),
            });
        }
    }
    let caught_up = kept.values().all(|(_, observed)| {
        let wanted = replicas
            .get(observed.subset.as_deref().unwrap_or_default())
            .copied();
        let partition = partitions
            .get(observed.subset.as_deref().unwrap_or_default())
            .copied()
            .unwrap_or(0);
        observed.status_current
            && Some(observed.counts.replicas) == wanted
            && observed.counts.ready == observed.counts.replicas
            && observed.counts.updated >= observed.counts.replicas - partition
    });
    plan.settled =
        caught_up && plan.create.is_empty() && plan.update.is_empty() && plan.delete.is_empty();
    let observed: BTreeMap<String, ObservedSubset> = kept
        .into_iter()
        .filter(|(subset, _)| ud.spec.topology.subsets.iter().any(|s| &s.name == subset))
        .map(|(subset, (_, observed))| (subset, observed))
        .collect();
    plan.status = status(&StatusInput {
        united_deployment: ud,
        subsets: &observed,
        replicas: &replicas,
        partitions: &partitions,
        update_revision: input.update_revision,
        collision_count: input.collision_count,
        now: input.now,
    });
    if let Some(decided) = schedulable {
        for subset_status in &mut plan.status.subset_statuses {
            if let Some(subset) = decided.subsets.get(&subset_status.name) {
                subset_status.conditions.clone_from(&subset.conditions);
                subset_status.reserved_pods = subset.reserved;
                plan.status.reserved_pods += subset.reserved;
            }
        }
        plan.status.replicas -= plan.status.reserved_pods;
        plan.recheck_after = decided.recheck_after;
        plan.relabel = decided.relabel;
    }
    if created_subsets > 0 || !plan.delete.is_empty() {
        set_condition(
            &mut plan.status,
            &UnitedDeploymentConditionType::SubsetProvisioned,
            "True",
            "",
            "",
            input.now,
        );
    }
    set_condition(
        &mut plan.status,
        &UnitedDeploymentConditionType::SubsetUpdated,
        "True",
        "",
        "",
        input.now,
    );
    Ok(plan)
}

/// The oldest live workload of `kind` per subset; the others (other kinds, younger duplicates) are added to
/// `delete`. Workloads being deleted and workloads without a subset label are left alone.
fn keep_one_per_subset<'a>(
    workloads: &'a [SubsetWorkload],
    kind: WorkloadKind,
    delete: &mut Vec<Deletion>,
) -> BTreeMap<String, (&'a SubsetWorkload, ObservedSubset)> {
    let mut grouped: BTreeMap<String, Vec<(&SubsetWorkload, ObservedSubset)>> = BTreeMap::new();
    for workload in workloads {
        let observed = workload.observe();
        if observed.deleting {
            continue;
        }
        let Some(subset) = observed.subset.clone() else {
            continue;
        };
        if observed.kind != kind {
            delete.push(Deletion {
                kind: observed.kind,
                name: observed.name.clone(),
                reason: format!("the template is now a {}", kind.as_str()),
            });
            continue;
        }
        grouped
            .entry(subset)
            .or_default()
            .push((workload, observed));
    }
    let mut kept = BTreeMap::new();
    for (subset, mut group) in grouped {
        group.sort_by(|(_, a), (_, b)| a.created.cmp(&b.created).then_with(|| a.name.cmp(&b.name)));
        let mut group = group.into_iter();
        if let Some(oldest) = group.next() {
            kept.insert(subset.clone(), oldest);
        }
        for (_, duplicate) in group {
            delete.push(Deletion {
                kind: duplicate.kind,
                name: duplicate.name,
                reason: format!("duplicate of subset {subset}"),
            });
        }
    }
    kept
}

/// `existing` with the fields of `desired` it should take (see the module documentation).
fn updated(existing: &SubsetWorkload, desired: SubsetWorkload) -> SubsetWorkload {
    let mut result = existing.clone();
    {
        let wanted = desired.metadata();
        let metadata = result.metadata_mut();
        metadata
            .labels
            .get_or_insert_with(Default::default)
            .extend(wanted.labels.clone().unwrap_or_default());
        metadata
            .annotations
            .get_or_insert_with(Default::default)
            .extend(wanted.annotations.clone().unwrap_or_default());
    }
    match (&mut result, desired) {
        (SubsetWorkload::CloneSet(set), SubsetWorkload::CloneSet(wanted)) => set.spec = wanted.spec,
        (SubsetWorkload::AdvancedStatefulSet(set), SubsetWorkload::AdvancedStatefulSet(wanted)) => {
            set.spec = wanted.spec;
        }
        (SubsetWorkload::Deployment(set), SubsetWorkload::Deployment(wanted)) => {
            set.spec = wanted.spec;
        }
        (SubsetWorkload::StatefulSet(set), SubsetWorkload::StatefulSet(wanted)) => {
            if let (Some(spec), Some(wanted)) = (
                stateful_set_spec_mut(set),
                stateful_set_spec(&wanted).cloned(),
            ) {
                spec.replicas = wanted.replicas;
                spec.template = wanted.template;
                spec.update_strategy = wanted.update_strategy;
            }
        }
        _ => {}
    }
    result
}

#[cfg(test)]
mod tests;
