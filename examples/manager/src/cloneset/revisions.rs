//! The ControllerRevisions of a CloneSet: the update revision built from `spec.template` with
//! `kruise_inplace::revision` (so names and hashes match upstream's), carrying the CloneSet's annotations;
//! the history steps (reuse, renumber, create with collisions, truncate) are
//! [`crate::workload::history`]'s.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use kruise_api::apps::v1beta1::CloneSet;
use kruise_runtime::harness::object_key;
use kube::{Api, ResourceExt};

use super::error::ReconcileError;
use super::watch::OWNER;
use crate::workload::history::{self, Ensured};

/// The revision of the CloneSet's current `spec.template`, numbered `number`, named with `collision_count`:
/// template labels plus `controller.kubernetes.io/hash`, the CloneSet's annotations, its namespace and an
/// owner reference to it.
///
/// # Errors
/// The template holds a value Go cannot write (an invalid quantity).
pub fn new_revision(
    cloneset: &CloneSet,
    number: i64,
    collision_count: i32,
) -> Result<ControllerRevision, kruise_inplace::revision::RevisionError> {
    let (mut object, _) = history::template_revision(
        OWNER,
        cloneset,
        &cloneset.spec.template,
        number,
        collision_count,
    )?;
    let annotations: BTreeMap<String, String> = cloneset.annotations().clone();
    if !annotations.is_empty() {
        object.metadata.annotations = Some(annotations);
    }
    Ok(object)
}

/// Finds, renumbers or creates the update revision of `cloneset` among `sorted` (its revisions, sorted
/// with [`history::sort`]), see [`history::ensure_update`].
///
/// # Errors
/// [`ReconcileError`] when the template cannot be hashed or a write fails.
pub async fn ensure_update(
    api: &Api<ControllerRevision>,
    cloneset: &CloneSet,
    sorted: &[Arc<ControllerRevision>],
) -> Result<Ensured, ReconcileError> {
    let collision_count = cloneset
        .status
        .as_ref()
        .and_then(|s| s.collision_count)
        .unwrap_or(0);
    history::ensure_update(api, sorted, collision_count, |number, collisions| {
        new_revision(cloneset, number, collisions)
    })
    .await
    .map_err(|error| ReconcileError::history(object_key(cloneset), error))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cloneset(image: &str) -> CloneSet {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
            "metadata": {"name": "demo", "namespace": "ns", "uid": "cs-uid",
                "annotations": {"team": "a"}},
            "spec": {
                "selector": {"matchLabels": {"app": "demo"}},
                "template": {"metadata": {"labels": {"app": "demo"}},
                    "spec": {"containers": [{"name": "main", "image": image}]}},
            },
        }))
        .unwrap()
    }

    #[test]
    fn a_new_revision_is_named_and_owned_like_upstream() {
        let cs = cloneset("nginx:1.25");
        let revision = new_revision(&cs, 3, 0).unwrap();
        let expected =
            kruise_inplace::revision::for_template("demo", &cs.spec.template, 0).unwrap();
        assert_eq!(revision.name_any(), expected.name);
        assert_eq!(revision.revision, Some(3));
        assert_eq!(revision.namespace().as_deref(), Some("ns"));
        assert_eq!(revision.labels()["app"], "demo");
        assert_eq!(
            revision.labels()["controller.kubernetes.io/hash"],
            expected.hash
        );
        assert_eq!(revision.annotations()["team"], "a");
        let owner = &revision.owner_references()[0];
        assert_eq!(
            (
                owner.api_version.as_str(),
                owner.kind.as_str(),
                owner.uid.as_str()
            ),
            ("apps.kruise.io/v1alpha1", "CloneSet", "cs-uid")
        );
        assert_eq!(owner.controller, Some(true));
        let collided = new_revision(&cs, 3, 1).unwrap();
        assert_ne!(collided.name_any(), revision.name_any());
    }
}
