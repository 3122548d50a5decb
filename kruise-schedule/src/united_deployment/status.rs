//! The status of a UnitedDeployment (v1beta1, the storage version) from its subset workloads (upstream
//! `calculateStatus`, `setUpdatedCondition`):
//!
//! * `replicas`, `readyReplicas`: the sums over the subset workloads' statuses;
//!   `updatedReplicas`, `updatedReadyReplicas`: the same sums over the workloads written from the update
//!   revision whose status describes their current generation;
//! * `subsetStatuses`, one per subset of the topology in its order: the replicas allocated to it (what
//!   v1alpha1 shows as `subsetReplicas`), its workload's ready pods, its partition (v1alpha1
//!   `updateStatus.currentPartitions`), and the conditions it had;
//! * `updatedRevision` (v1alpha1 `updateStatus.updatedRevision`); `currentRevision`, which becomes the
//!   update revision once its updated ready pods cover `replicas`;
//! * conditions `UnitedDeploymentUpdated`, and `SubsetProvisioned`/`SubsetUpdated`/`SubsetFailure` set by
//!   the caller through [`set_condition`] and [`remove_condition`];
//! * `observedGeneration`, `collisionCount`, `labelSelector`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::apps::v1beta1::{
    UnitedDeployment, UnitedDeploymentCondition, UnitedDeploymentConditionType,
    UnitedDeploymentStatus, UnitedDeploymentSubsetStatus,
};

use super::workload::ObservedSubset;
use crate::selector_string::selector_string;

/// What the status is computed from.
#[derive(Clone, Copy, Debug)]
pub struct StatusInput<'a> {
    /// The UnitedDeployment (its old status is the starting point).
    pub united_deployment: &'a UnitedDeployment,
    /// The subset workloads kept, by subset name.
    pub subsets: &'a BTreeMap<String, ObservedSubset>,
    /// The replicas allocated to each subset.
    pub replicas: &'a BTreeMap<String, i32>,
    /// The partition of each subset.
    pub partitions: &'a BTreeMap<String, i32>,
    /// The update revision's name.
    pub update_revision: &'a str,
    /// The collision count the revision was named with.
    pub collision_count: i32,
    /// The time written into changed conditions.
    pub now: &'a Time,
}

/// The new status (see the module documentation).
#[must_use]
pub fn status(input: &StatusInput<'_>) -> UnitedDeploymentStatus {
    let ud = input.united_deployment;
    let old = ud.status.clone().unwrap_or_default();
    let mut status = UnitedDeploymentStatus {
        observed_generation: ud.metadata.generation.unwrap_or(0),
        collision_count: (input.collision_count > 0 || old.collision_count.is_some())
            .then_some(input.collision_count),
        current_revision: old.current_revision.clone(),
        updated_revision: input.update_revision.to_owned(),
        conditions: old.conditions.clone(),
        label_selector: selector_string(&ud.spec.selector),
        ..UnitedDeploymentStatus::default()
    };
    for observed in input.subsets.values() {
        status.replicas += observed.counts.replicas;
        status.ready_replicas += observed.counts.ready;
        if observed.revision == input.update_revision && observed.status_current {
            status.updated_replicas += observed.counts.updated;
            status.updated_ready_replicas += observed.counts.updated_ready;
        }
    }
    status.subset_statuses = ud
        .spec
        .topology
        .subsets
        .iter()
        .map(|subset| {
            let previous = old
                .subset_statuses
                .iter()
                .find(|previous| previous.name == subset.name);
            UnitedDeploymentSubsetStatus {
                name: subset.name.clone(),
                replicas: input.replicas.get(&subset.name).copied().unwrap_or(0),
                ready_replicas: input
                    .subsets
                    .get(&subset.name)
                    .map_or(0, |observed| observed.counts.ready),
                partition: input.partitions.get(&subset.name).copied().unwrap_or(0),
                reserved_pods: 0,
                conditions: previous.map(|p| p.conditions.clone()).unwrap_or_default(),
            }
        })
        .collect();
    if status.current_revision.is_empty() {
        status.current_revision = input.update_revision.to_owned();
    }
    if status.current_revision != input.update_revision
        && status.updated_ready_replicas >= status.replicas
    {
        status.current_revision = input.update_revision.to_owned();
    }
    let updated = status.current_revision == input.update_revision;
    let (value, reason, verb) = if updated {
        ("True", "UnitedDeploymentRevisionUpdated", "updated")
    } else {
        ("False", "UnitedDeploymentRevisionUpdating", "updating")
    };
    set_condition(
        &mut status,
        &UnitedDeploymentConditionType::UnitedDeploymentUpdated,
        value,
        reason,
        &format!("{verb} to revision {}", input.update_revision),
        input.now,
    );
    status
}

/// Sets the condition of `type_` (upstream `SetUnitedDeploymentCondition`): unchanged when it already has
/// this status and reason; its transition time kept when only the reason or message changes.
pub fn set_condition(
    status: &mut UnitedDeploymentStatus,
    type_: &UnitedDeploymentConditionType,
    value: &str,
    reason: &str,
    message: &str,
    now: &Time,
) {
    let existing = status
        .conditions
        .iter()
        .find(|condition| condition.type_.as_ref() == Some(type_));
    if let Some(existing) = existing
        && existing.status == value
        && existing.reason == reason
    {
        return;
    }
    let transition = existing
        .filter(|existing| existing.status == value)
        .and_then(|existing| existing.last_transition_time.clone())
        .unwrap_or_else(|| now.clone());
    remove_condition(status, type_);
    status.conditions.push(UnitedDeploymentCondition {
        type_: Some(type_.clone()),
        status: value.to_owned(),
        last_transition_time: Some(transition),
        reason: reason.to_owned(),
        message: message.to_owned(),
    });
}

/// Removes the condition of `type_`.
pub fn remove_condition(
    status: &mut UnitedDeploymentStatus,
    type_: &UnitedDeploymentConditionType,
) {
    status
        .conditions
        .retain(|condition| condition.type_.as_ref() != Some(type_));
}

/// The condition of `type_`, if set.
#[must_use]
pub fn condition<'a>(
    status: &'a UnitedDeploymentStatus,
    type_: &UnitedDeploymentConditionType,
) -> Option<&'a UnitedDeploymentCondition> {
    status
        .conditions
        .iter()
        .find(|condition| condition.type_.as_ref() == Some(type_))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::united_deployment::workload::{SubsetCounts, WorkloadKind};

    fn time(seconds: i64) -> Time {
        Time(k8s_openapi::jiff::Timestamp::from_second(seconds).unwrap())
    }

    fn ud(status: &serde_json::Value) -> UnitedDeployment {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
            "metadata": {"name": "web", "namespace": "ns", "generation": 3},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                "topology": {"subsets": [{"name": "a"}, {"name": "b"}]}},
            "status": status
        }))
        .unwrap()
    }

    fn observed(revision: &str, counts: SubsetCounts, status_current: bool) -> ObservedSubset {
        ObservedSubset {
            kind: WorkloadKind::CloneSet,
            name: "w".into(),
            subset: Some("a".into()),
            revision: revision.into(),
            patch: None,
            replicas: counts.replicas,
            partition: 0,
            counts,
            status_current,
            deleting: false,
            created: 0,
        }
    }

    fn counts(replicas: i32, ready: i32, updated: i32, updated_ready: i32) -> SubsetCounts {
        SubsetCounts {
            replicas,
            ready,
            updated,
            updated_ready,
        }
    }

    #[test]
    fn counts_sum_over_subsets_and_only_updated_workloads_count_as_updated() {
        let ud = ud(&serde_json::json!({"currentRevision": "web-old"}));
        let subsets = BTreeMap::from([
            (
                "a".to_owned(),
                observed("web-new", counts(1, 1, 1, 1), true),
            ),
            (
                "b".to_owned(),
                observed("web-old", counts(3, 2, 3, 2), true),
            ),
        ]);
        let replicas = BTreeMap::from([("a".to_owned(), 1), ("b".to_owned(), 3)]);
        let partitions = BTreeMap::from([("a".to_owned(), 0), ("b".to_owned(), 2)]);
        let now = time(100);
        let got = status(&StatusInput {
            united_deployment: &ud,
            subsets: &subsets,
            replicas: &replicas,
            partitions: &partitions,
            update_revision: "web-new",
            collision_count: 0,
            now: &now,
        });
        assert_eq!((got.replicas, got.ready_replicas), (4, 3));
        assert_eq!((got.updated_replicas, got.updated_ready_replicas), (1, 1));
        assert_eq!(got.observed_generation, 3);
        assert_eq!(got.label_selector, "app=web");
        assert_eq!(got.current_revision, "web-old", "the rollout is not over");
        assert_eq!(got.updated_revision, "web-new");
        assert_eq!(got.collision_count, None);
        let b = &got.subset_statuses[1];
        assert_eq!(
            (b.name.as_str(), b.replicas, b.ready_replicas, b.partition),
            ("b", 3, 2, 2)
        );
        let updated = condition(
            &got,
            &UnitedDeploymentConditionType::UnitedDeploymentUpdated,
        )
        .unwrap();
        assert_eq!(
            (updated.status.as_str(), updated.reason.as_str()),
            ("False", "UnitedDeploymentRevisionUpdating")
        );
    }

    #[test]
    fn the_current_revision_moves_once_updated_ready_pods_cover_the_replicas() {
        let ud = ud(&serde_json::json!({"currentRevision": "web-old"}));
        let subsets = BTreeMap::from([
            (
                "a".to_owned(),
                observed("web-new", counts(2, 2, 2, 2), true),
            ),
            (
                "b".to_owned(),
                observed("web-new", counts(2, 2, 2, 2), true),
            ),
        ]);
        let stale = BTreeMap::from([
            (
                "a".to_owned(),
                observed("web-new", counts(2, 2, 2, 2), true),
            ),
            (
                "b".to_owned(),
                observed("web-new", counts(2, 2, 2, 2), false),
            ),
        ]);
        let empty = BTreeMap::new();
        let now = time(100);
        let input = |subsets| StatusInput {
            united_deployment: &ud,
            subsets,
            replicas: &empty,
            partitions: &empty,
            update_revision: "web-new",
            collision_count: 2,
            now: &now,
        };
        let done = status(&input(&subsets));
        assert_eq!(done.current_revision, "web-new");
        assert_eq!(done.collision_count, Some(2));
        let waiting = status(&input(&stale));
        assert_eq!(
            waiting.current_revision, "web-old",
            "a stale status does not count"
        );
    }

    #[test]
    fn a_condition_keeps_its_transition_time_while_its_status_stays() {
        let mut status = UnitedDeploymentStatus::default();
        let kind = UnitedDeploymentConditionType::SubsetUpdated;
        set_condition(&mut status, &kind, "False", "Error", "boom", &time(10));
        set_condition(&mut status, &kind, "False", "Other", "again", &time(20));
        let first = condition(&status, &kind).unwrap();
        assert_eq!(first.last_transition_time, Some(time(10)));
        assert_eq!(first.reason, "Other");
        set_condition(&mut status, &kind, "True", "", "", &time(30));
        assert_eq!(
            condition(&status, &kind).unwrap().last_transition_time,
            Some(time(30))
        );
        assert_eq!(status.conditions.len(), 1);
        remove_condition(&mut status, &kind);
        assert!(condition(&status, &kind).is_none());
    }
}
