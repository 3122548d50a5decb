//! Writing an Advanced StatefulSet's status: the planner's counts, revisions and `volumeClaims`, the
//! collision count of the revision history, and what the planner does not compute (conditions) kept as
//! they were. The v1beta1 status holds every field of both API versions (v1alpha1 reads a subset through the
//! conversion webhook).

use kruise_api::apps::v1beta1::{StatefulSet, StatefulSetStatus};

use crate::actions::{self, ActionError};
use kube::Api;

/// The status to write: the plan's, with `collision_count`, and the old conditions.
#[must_use]
pub fn next_status(
    set: &StatefulSet,
    planned: &StatefulSetStatus,
    collision_count: i32,
) -> StatefulSetStatus {
    let mut status = planned.clone();
    status.collision_count = Some(collision_count);
    if let Some(old) = set.status.as_ref()
        && status.conditions.is_empty()
    {
        status.conditions.clone_from(&old.conditions);
    }
    status
}

/// Whether `new` differs from what the StatefulSet shows.
#[must_use]
pub fn status_changed(set: &StatefulSet, new: &StatefulSetStatus) -> bool {
    set.status.as_ref() != Some(new)
}

/// Replaces the status of `set` (as read) with `status`.
///
/// # Errors
/// [`ActionError::Conflict`] when the StatefulSet changed since it was read.
pub async fn write_status(
    api: &Api<StatefulSet>,
    set: &StatefulSet,
    status: &StatefulSetStatus,
) -> Result<StatefulSet, ActionError> {
    actions::replace_status(api, set, status).await
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn conditions_are_kept_claim_counts_replaced_and_the_collision_count_written() {
        let set: StatefulSet = serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"selector": {}, "template": {}, "serviceName": ""},
            "status": {"replicas": 1, "collisionCount": 0, "conditions": [
                {"type": "FailedCreatePod", "status": "True"}],
                "volumeClaims": [{"volumeClaimName": "gone", "compatibleReplicas": 1}]},
        }))
        .unwrap();
        let planned = StatefulSetStatus {
            replicas: 2,
            ..StatefulSetStatus::default()
        };
        let next = next_status(&set, &planned, 3);
        assert_eq!(next.replicas, 2);
        assert_eq!(next.collision_count, Some(3));
        assert_eq!(next.conditions.len(), 1);
        // The planner computes the claim counts (none here: the templates are gone).
        assert!(next.volume_claims.is_empty());
        assert!(status_changed(&set, &next));
        assert!(!status_changed(&set, set.status.as_ref().unwrap()));
    }
}
