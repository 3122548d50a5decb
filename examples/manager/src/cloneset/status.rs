//! Writing what a reconcile found back to the CloneSet: the status through the `status` subresource (a
//! full replace carrying the `resourceVersion` it was computed from, so zero counts are written too and a
//! concurrent change gives 409), and `scaleStrategy.podsToDelete` without the names of pods that are gone.

use kruise_runtime::harness::object_key;
use std::collections::HashSet;

use kruise_api::apps::v1beta1::{CloneSet, CloneSetStatus};
use kube::api::{Patch, PostParams};
use kube::{Api, ResourceExt};

use crate::actions::{self, ActionError};

/// Whether `new` differs from what the CloneSet shows.
#[must_use]
pub fn status_changed(cloneset: &CloneSet, new: &CloneSetStatus) -> bool {
    cloneset.status.as_ref() != Some(new)
}

/// Replaces the status of `cloneset` (as read) with `status`.
///
/// # Errors
/// [`ActionError::Conflict`] when the CloneSet changed since it was read.
pub async fn write_status(
    api: &Api<CloneSet>,
    cloneset: &CloneSet,
    status: CloneSetStatus,
) -> Result<CloneSet, ActionError> {
    let key = object_key(cloneset);
    if cloneset.resource_version().is_none() {
        return Err(ActionError::NoResourceVersion { object: key });
    }
    let mut object = cloneset.clone();
    object.status = Some(status);
    object.metadata.managed_fields = None;
    api.replace_status(&cloneset.name_any(), &PostParams::default(), &object)
        .await
        .map_err(|error| ActionError::from_kube(key, error))
}

/// `scaleStrategy.podsToDelete` without names of pods that no longer exist; `None` when nothing goes.
#[must_use]
pub fn live_pods_to_delete<'p>(
    cloneset: &CloneSet,
    pod_names: impl IntoIterator<Item = &'p str>,
) -> Option<Vec<String>> {
    let listed = &cloneset.spec.scale_strategy.pods_to_delete;
    if listed.is_empty() {
        return None;
    }
    let existing: HashSet<&str> = pod_names.into_iter().collect();
    let live: Vec<String> = listed
        .iter()
        .filter(|name| existing.contains(name.as_str()))
        .cloned()
        .collect();
    (live.len() != listed.len()).then_some(live)
}

/// Writes `podsToDelete`, conditional on the CloneSet's `resourceVersion`.
///
/// # Errors
/// [`ActionError::Conflict`] when the CloneSet changed since it was read.
pub async fn write_pods_to_delete(
    api: &Api<CloneSet>,
    cloneset: &CloneSet,
    live: &[String],
) -> Result<(), ActionError> {
    let key = object_key(cloneset);
    let Some(version) = cloneset.resource_version() else {
        return Err(ActionError::NoResourceVersion { object: key });
    };
    let patch: json_patch::Patch = serde_json::from_value(serde_json::json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": version},
        {"op": "replace", "path": "/spec/scaleStrategy/podsToDelete", "value": live},
    ]))
    .map_err(|error| ActionError::Api {
        object: key.clone(),
        source: kube::Error::SerdeError(error),
    })?;
    actions::patch(
        api,
        &key,
        &cloneset.name_any(),
        None,
        &Patch::Json::<()>(patch),
    )
    .await
    .map_err(crate::workload::pod_write::failed_test_is_conflict)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn cloneset(to_delete: &[&str]) -> CloneSet {
        serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"selector": {}, "template": {}, "scaleStrategy": {"podsToDelete": to_delete}},
            "status": {"replicas": 2, "readyReplicas": 2},
        }))
        .unwrap()
    }

    #[test]
    fn names_of_gone_pods_leave_pods_to_delete() {
        let pods = ["a", "b"];
        assert_eq!(
            live_pods_to_delete(&cloneset(&["a", "x"]), pods),
            Some(vec!["a".into()])
        );
        assert_eq!(live_pods_to_delete(&cloneset(&["a", "b"]), pods), None);
        assert_eq!(live_pods_to_delete(&cloneset(&[]), pods), None);
        assert_eq!(live_pods_to_delete(&cloneset(&["x"]), pods), Some(vec![]));
    }

    #[test]
    fn zero_counts_are_a_change() {
        let cs = cloneset(&[]);
        let mut status = cs.status.clone().unwrap();
        assert!(!status_changed(&cs, &status));
        status.ready_replicas = 0;
        assert!(status_changed(&cs, &status));
        // A full replace writes the zero (a merge patch of the serialised status would leave it out
        // only for skipped fields; readyReplicas is always serialised).
        assert_eq!(serde_json::to_value(&status).unwrap()["readyReplicas"], 0);
    }
}
