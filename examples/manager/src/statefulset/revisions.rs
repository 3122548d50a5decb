//! The ControllerRevisions of an Advanced StatefulSet (upstream `newRevision`): the update revision built
//! from `spec.template` with `kruise_inplace::revision` (data `{"spec":{"template":{...,"$patch":"replace"}}}`,
//! name `<set>-<hash>`, so names match upstream's), labelled with the template's labels, carrying the
//! StatefulSet's annotations and owned by it. The history steps (reuse, renumber, create with collisions,
//! truncate) are [`crate::workload::history`]'s.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use kruise_api::apps::v1beta1::StatefulSet;
use kruise_runtime::harness::object_key;
use kube::{Api, ResourceExt};

use super::error::ReconcileError;
use super::watch::OWNER;
use crate::workload::history::{self, Ensured};

/// The revision of the StatefulSet's current `spec.template`, numbered `number`, named with
/// `collision_count`.
///
/// # Errors
/// The template holds a value Go cannot write (an invalid quantity).
pub fn new_revision(
    set: &StatefulSet,
    number: i64,
    collision_count: i32,
) -> Result<ControllerRevision, kruise_inplace::revision::RevisionError> {
    let (mut object, _) =
        history::template_revision(OWNER, set, &set.spec.template, number, collision_count)?;
    let annotations: BTreeMap<String, String> = set.annotations().clone();
    if !annotations.is_empty() {
        object.metadata.annotations = Some(annotations);
    }
    Ok(object)
}

/// Finds, renumbers or creates the update revision of `set` among `sorted` (its revisions, sorted with
/// [`history::sort`]), see [`history::ensure_update`].
///
/// # Errors
/// [`ReconcileError`] when the template cannot be hashed or a write fails.
pub async fn ensure_update(
    api: &Api<ControllerRevision>,
    set: &StatefulSet,
    sorted: &[Arc<ControllerRevision>],
) -> Result<Ensured, ReconcileError> {
    let collision_count = set
        .status
        .as_ref()
        .and_then(|s| s.collision_count)
        .unwrap_or(0);
    history::ensure_update(api, sorted, collision_count, |number, collisions| {
        new_revision(set, number, collisions)
    })
    .await
    .map_err(|error| ReconcileError::history(object_key(set), error))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(image: &str) -> StatefulSet {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "ns", "uid": "sts-uid",
                "annotations": {"team": "a"}},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": image}]}},
            },
        }))
        .unwrap()
    }

    #[test]
    fn a_new_revision_is_named_labelled_and_owned_like_upstream() {
        let sts = set("nginx");
        let revision = new_revision(&sts, 2, 0).unwrap();
        let expected =
            kruise_inplace::revision::for_template("web", &sts.spec.template, 0).unwrap();
        assert_eq!(revision.name_any(), expected.name);
        assert!(revision.name_any().starts_with("web-"));
        assert_eq!(revision.revision, Some(2));
        assert_eq!(revision.labels()["app"], "web");
        assert_eq!(revision.annotations()["team"], "a");
        let data = serde_json::to_value(&revision.data).unwrap();
        assert_eq!(data["spec"]["template"]["$patch"], "replace");
        let owner = &revision.owner_references()[0];
        assert_eq!(
            (
                owner.api_version.as_str(),
                owner.kind.as_str(),
                owner.uid.as_str(),
                owner.controller
            ),
            (
                "apps.kruise.io/v1beta1",
                "StatefulSet",
                "sts-uid",
                Some(true)
            )
        );
        assert_ne!(
            new_revision(&sts, 2, 1).unwrap().name_any(),
            revision.name_any(),
            "a collision count changes the name"
        );
        assert_ne!(
            new_revision(&set("nginx:1.7.9"), 2, 0).unwrap().name_any(),
            revision.name_any()
        );
    }
}
