//! The WorkloadSpread side of pod admission (upstream `acquireSuitableSubset` / `updateSubsetForPod`): a
//! pod CREATE spends one missing replica of the first suitable subset, a pod DELETE gives it back.
//!
//! Both return the whole new status (every spec subset, in spec order, with the entries the status did not
//! have yet), to be written with the WorkloadSpread's `resourceVersion` as precondition; on a conflict the
//! caller reads the WorkloadSpread again and calls again. Both are idempotent: a pod already recorded in
//! `creatingPods` (`deletingPods`) is answered without spending (returning) again.
//!
//! A subset is suitable when it is schedulable (no `Schedulable=False` condition) and still misses pods
//! (`missingReplicas` is -1, no limit, or positive). A subset the status does not list yet starts at its
//! `maxReplicas` when that is an integer, unlimited without one, and full for a percentage (the share needs
//! the workload's replicas, which the controller fills in).
//!
//! ```
//! use kruise_api::apps::v1beta1::WorkloadSpread;
//! use kruise_schedule::spread::workload_spread::admission::{admit_create, admit_delete};
//!
//! let mut spread: WorkloadSpread = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "ws", "namespace": "default"},
//!     "spec": {"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
//!         "subsets": [{"name": "a", "maxReplicas": 1}]}
//! })).unwrap();
//! let now = "2024-05-01T10:00:00Z".parse().unwrap();
//! let admitted = admit_create(&spread, "web-1", now).unwrap().unwrap();
//! assert_eq!(admitted.status.subset_statuses[0].missing_replicas, 0);
//! spread.status = Some(admitted.status);
//! assert!(admit_create(&spread, "web-2", now).unwrap().is_none(), "subset a is full");
//! let returned = admit_delete(&spread, "a", "web-1", now).unwrap();
//! assert_eq!(returned.subset_statuses[0].missing_replicas, 1);
//! ```

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{
    SUBSET_SCHEDULABLE, WorkloadSpread, WorkloadSpreadStatus, WorkloadSpreadSubset,
    WorkloadSpreadSubsetStatus,
};

use super::WorkloadSpreadError;
use super::max_replicas::subset_limit;

/// A pod CREATE admitted into a subset.
#[derive(Clone, Debug, PartialEq)]
pub struct Admitted<'a> {
    /// The subset's index in `spec.subsets`.
    pub subset_index: usize,
    /// The subset.
    pub subset: &'a WorkloadSpreadSubset,
    /// The status to write (unchanged when the pod was already recorded).
    pub status: WorkloadSpreadStatus,
    /// Whether `status` differs from the WorkloadSpread's (a write is needed).
    pub changed: bool,
}

/// `namespace/name` of a WorkloadSpread, for messages.
#[must_use]
pub fn spread_key(spread: &WorkloadSpread) -> String {
    format!(
        "{}/{}",
        spread.metadata.namespace.as_deref().unwrap_or_default(),
        spread.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Whether the subset status says its pods can be scheduled (no `Schedulable=False` condition).
#[must_use]
pub fn is_schedulable(status: &WorkloadSpreadSubsetStatus) -> bool {
    !status
        .conditions
        .iter()
        .any(|condition| condition.type_ == SUBSET_SCHEDULABLE && condition.status == "False")
}

/// The status with one entry per spec subset, in spec order: the existing entry of that name, or a new
/// one (see the module doc for its `missingReplicas`). Other fields are kept.
#[must_use]
pub fn aligned_status(spread: &WorkloadSpread) -> WorkloadSpreadStatus {
    let key = spread_key(spread);
    let mut status = spread.status.clone().unwrap_or_default();
    let mut existing = std::mem::take(&mut status.subset_statuses);
    status.subset_statuses = spread
        .spec
        .subsets
        .iter()
        .map(|subset| {
            match existing.iter().position(|entry| entry.name == subset.name) {
                Some(index) => existing.swap_remove(index),
                None => WorkloadSpreadSubsetStatus {
                    name: subset.name.clone(),
                    missing_replicas: match subset_limit(&key, subset, None) {
                        Ok(None) => -1,
                        Ok(Some(limit)) => limit,
                        // A share of replicas not known yet, or a value the controller reports: full.
                        Err(_) => 0,
                    },
                    ..WorkloadSpreadSubsetStatus::default()
                },
            }
        })
        .collect();
    status
}

/// Admits the pod recorded as `pod_key` (its name, or a generated id when it has none yet) at `now`:
/// `None` when no subset is suitable (the pod is left alone).
///
/// # Errors
/// None today; the `Result` keeps room for validation of the spread.
pub fn admit_create<'a>(
    spread: &'a WorkloadSpread,
    pod_key: &str,
    now: Timestamp,
) -> Result<Option<Admitted<'a>>, WorkloadSpreadError> {
    let mut status = aligned_status(spread);
    let changed_by_alignment = spread.status.as_ref() != Some(&status);
    let recorded = status
        .subset_statuses
        .iter()
        .position(|entry| entry.creating_pods.contains_key(pod_key));
    if let Some(index) = recorded {
        return Ok(spread.spec.subsets.get(index).map(|subset| Admitted {
            subset_index: index,
            subset,
            status,
            changed: changed_by_alignment,
        }));
    }
    let chosen = status
        .subset_statuses
        .iter()
        .position(|entry| is_schedulable(entry) && entry.missing_replicas != 0);
    let (Some(index), Some(subset)) = (
        chosen,
        chosen.and_then(|index| spread.spec.subsets.get(index)),
    ) else {
        return Ok(None);
    };
    if let Some(entry) = status.subset_statuses.get_mut(index) {
        if entry.missing_replicas > 0 {
            entry.missing_replicas -= 1;
        }
        entry.creating_pods.insert(pod_key.to_owned(), Time(now));
    }
    Ok(Some(Admitted {
        subset_index: index,
        subset,
        status,
        changed: true,
    }))
}

/// Records the admitted deletion of the pod `pod_key` of subset `subset` at `now`: the new status, or
/// `None` when nothing changes (the subset is gone from the spec, or the deletion was recorded already).
#[must_use]
pub fn admit_delete(
    spread: &WorkloadSpread,
    subset: &str,
    pod_key: &str,
    now: Timestamp,
) -> Option<WorkloadSpreadStatus> {
    let mut status = aligned_status(spread);
    let entry = status
        .subset_statuses
        .iter_mut()
        .find(|entry| entry.name == subset)?;
    if entry.deleting_pods.contains_key(pod_key) {
        return None;
    }
    if entry.missing_replicas >= 0 {
        entry.missing_replicas = entry.missing_replicas.saturating_add(1);
    }
    // A pod deleted before the controller saw it is simply no longer coming.
    if entry.creating_pods.remove(pod_key).is_none() {
        entry.deleting_pods.insert(pod_key.to_owned(), Time(now));
    }
    Some(status)
}

#[cfg(test)]
mod tests;
