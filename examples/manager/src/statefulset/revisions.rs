//! The ControllerRevisions of an Advanced StatefulSet (upstream `newRevision` and the Kubernetes
//! `controller/history` helpers): the update revision built from `spec.template` with
//! `kruise_inplace::revision` (data `{"spec":{"template":{...,"$patch":"replace"}}}`, name
//! `<set>-<hash>`, so names match upstream's), labelled with the template's labels, carrying the
//! StatefulSet's annotations and owned by it; found among the existing ones by equal data, renumbered on a
//! rollback to an older template, or created, with `status.collisionCount` raised on a name collision.
//!
//! The history choices shared with the CloneSet controller (sorting, the update choice, the current
//! revision, truncation) are [`crate::cloneset::revisions`]'s.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kruise_api::apps::v1beta1::StatefulSet;
use kruise_runtime::harness::object_key;
use kruise_schedule::statefulset::OWNER_API_VERSION;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};

use super::error::ReconcileError;
use crate::actions::{self, ActionError};
use crate::cloneset::revisions::{Ensured, UpdateChoice, choose_update, equal, next_number};

/// How many collisions in a row [`ensure_update`] accepts before giving up.
const MAX_COLLISIONS: i32 = 100;

/// The owner reference of objects an Advanced StatefulSet controls.
#[must_use]
pub fn owner_reference(set: &StatefulSet) -> OwnerReference {
    OwnerReference {
        api_version: OWNER_API_VERSION.to_owned(),
        kind: "StatefulSet".to_owned(),
        name: set.name_any(),
        uid: set.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

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
    let revision = kruise_inplace::revision::for_template(
        &set.name_any(),
        &set.spec.template,
        collision_count,
    )?;
    let mut object = revision.to_controller_revision(
        set.spec
            .template
            .metadata
            .as_ref()
            .and_then(|m| m.labels.as_ref()),
        number,
    );
    object.metadata.namespace = set.namespace();
    object.metadata.owner_references = Some(vec![owner_reference(set)]);
    let annotations: BTreeMap<String, String> = set.annotations().clone();
    if !annotations.is_empty() {
        object.metadata.annotations = Some(annotations);
    }
    Ok(object)
}

/// Finds, renumbers or creates the update revision of `set` among `sorted` (its revisions, sorted with
/// `cloneset::revisions::sort`). A create that meets an existing object with the same data uses it; one
/// with other data raises the collision count and tries the next name (`history.CreateControllerRevision`).
///
/// # Errors
/// [`ReconcileError`] when the template cannot be hashed or a write fails.
pub async fn ensure_update(
    api: &Api<ControllerRevision>,
    set: &StatefulSet,
    sorted: &[Arc<ControllerRevision>],
) -> Result<Ensured, ReconcileError> {
    let key = object_key(set);
    let mut collision_count = set
        .status
        .as_ref()
        .and_then(|s| s.collision_count)
        .unwrap_or(0);
    let revision_error = |source| ReconcileError::Revision {
        set: key.clone(),
        source,
    };
    let action_error = |source| ReconcileError::Action {
        set: key.clone(),
        source,
    };
    let lost = || ReconcileError::Collisions {
        set: key.clone(),
        attempts: 0,
    };
    let number = next_number(sorted);
    let candidate = new_revision(set, number, collision_count).map_err(revision_error)?;
    match choose_update(sorted, candidate) {
        UpdateChoice::Latest(index) => Ok(Ensured {
            revision: Arc::clone(sorted.get(index).ok_or_else(lost)?),
            collision_count,
            created: false,
        }),
        UpdateChoice::Renumber { index, number } => {
            let existing = sorted.get(index).ok_or_else(lost)?;
            let patch = serde_json::json!({
                "metadata": {"resourceVersion": existing.resource_version()},
                "revision": number,
            });
            let updated = api
                .patch(
                    &existing.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(&patch),
                )
                .await
                .map_err(|error| {
                    action_error(ActionError::from_kube(object_key(existing.as_ref()), error))
                })?;
            Ok(Ensured {
                revision: Arc::new(updated),
                collision_count,
                created: false,
            })
        }
        UpdateChoice::Create(mut candidate) => {
            for _ in 0..MAX_COLLISIONS {
                match actions::create(api, &candidate).await {
                    Ok(created) => {
                        return Ok(Ensured {
                            revision: Arc::new(created),
                            collision_count,
                            created: true,
                        });
                    }
                    Err(ActionError::Conflict { .. }) => {
                        let name = candidate.name_any();
                        let existing = api.get_opt(&name).await.map_err(|error| {
                            action_error(ActionError::from_kube(
                                object_key(candidate.as_ref()),
                                error,
                            ))
                        })?;
                        if let Some(existing) = existing
                            && equal(&existing, &candidate)
                        {
                            return Ok(Ensured {
                                revision: Arc::new(existing),
                                collision_count,
                                created: false,
                            });
                        }
                        collision_count += 1;
                        *candidate =
                            new_revision(set, number, collision_count).map_err(revision_error)?;
                    }
                    Err(other) => return Err(action_error(other)),
                }
            }
            Err(ReconcileError::Collisions {
                set: key,
                attempts: MAX_COLLISIONS,
            })
        }
    }
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
