//! The ControllerRevisions of a CloneSet (Kubernetes `controller/history` as upstream's CloneSet controller
//! uses it): the update revision built from `spec.template` with `kruise_inplace::revision` (so names and
//! hashes match upstream's), found among the existing ones by equal data or created, renumbered on a
//! rollback to an older template, with `status.collisionCount` raised on a name collision; the current
//! revision found by `status.currentRevision`; history beyond `revisionHistoryLimit` deleted.
//!
//! The decisions are pure ([`choose_update`], [`current`], [`to_truncate`]); [`ensure_update`] carries
//! out the choice against the API server.

use kruise_runtime::harness::object_key;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kruise_api::apps::v1beta1::CloneSet;
use kruise_schedule::cloneset::OWNER_API_VERSION;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::Value;

use super::error::ReconcileError;
use crate::actions::{self, ActionError};

/// Upstream's history limit when `spec.revisionHistoryLimit` is unset.
pub const DEFAULT_HISTORY_LIMIT: i32 = 10;

/// How many collisions in a row [`ensure_update`] accepts before giving up.
const MAX_COLLISIONS: i32 = 100;

/// The revision number of a ControllerRevision (0 when unset).
#[must_use]
pub fn number(revision: &ControllerRevision) -> i64 {
    revision.revision.unwrap_or(0)
}

/// Sorts revisions as `history.SortControllerRevisions` does: by revision number, then creation time,
/// then name.
pub fn sort(revisions: &mut [Arc<ControllerRevision>]) {
    revisions.sort_by(|a, b| {
        number(a)
            .cmp(&number(b))
            .then_with(|| {
                let created =
                    |r: &ControllerRevision| r.metadata.creation_timestamp.as_ref().map(|t| t.0);
                created(a).cmp(&created(b))
            })
            .then_with(|| a.name_any().cmp(&b.name_any()))
    });
}

/// The owner reference of objects a CloneSet controls (upstream writes the v1alpha1 version).
#[must_use]
pub fn owner_reference(cloneset: &CloneSet) -> OwnerReference {
    OwnerReference {
        api_version: OWNER_API_VERSION.to_owned(),
        kind: "CloneSet".to_owned(),
        name: cloneset.name_any(),
        uid: cloneset.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

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
    let revision = kruise_inplace::revision::for_template(
        &cloneset.name_any(),
        &cloneset.spec.template,
        collision_count,
    )?;
    let mut object = revision.to_controller_revision(
        cloneset
            .spec
            .template
            .metadata
            .as_ref()
            .and_then(|m| m.labels.as_ref()),
        number,
    );
    object.metadata.namespace = cloneset.namespace();
    object.metadata.owner_references = Some(vec![owner_reference(cloneset)]);
    let annotations: BTreeMap<String, String> = cloneset.annotations().clone();
    if !annotations.is_empty() {
        object.metadata.annotations = Some(annotations);
    }
    Ok(object)
}

fn data(revision: &ControllerRevision) -> &Value {
    &revision.data.0
}

/// Whether two revisions hold the same template (`history.EqualRevision`: equal data).
#[must_use]
pub fn equal(a: &ControllerRevision, b: &ControllerRevision) -> bool {
    data(a) == data(b)
}

/// What to do about the update revision.
#[derive(Clone, Debug, PartialEq)]
pub enum UpdateChoice {
    /// The newest revision already holds the template: use it.
    Latest(usize),
    /// An older revision holds the template (a rollback): give it the next number.
    Renumber {
        /// Its index in the sorted revisions.
        index: usize,
        /// The new number.
        number: i64,
    },
    /// No revision holds it: create this one.
    Create(Box<ControllerRevision>),
}

/// The next revision number: one more than the newest (1 for the first).
#[must_use]
pub fn next_number(sorted: &[Arc<ControllerRevision>]) -> i64 {
    sorted.last().map_or(1, |last| number(last) + 1)
}

/// Upstream's `getActiveRevisions` choice for `candidate` (built with [`new_revision`] and
/// [`next_number`]) among the `sorted` existing revisions.
#[must_use]
pub fn choose_update(
    sorted: &[Arc<ControllerRevision>],
    candidate: ControllerRevision,
) -> UpdateChoice {
    let last_equal = sorted
        .iter()
        .enumerate()
        .rev()
        .find(|(_, revision)| equal(revision, &candidate))
        .map(|(index, _)| index);
    match last_equal {
        Some(index) if index + 1 == sorted.len() => UpdateChoice::Latest(index),
        Some(index) => UpdateChoice::Renumber {
            index,
            number: number(&candidate),
        },
        None => UpdateChoice::Create(Box::new(candidate)),
    }
}

/// The revision named by `status.currentRevision`, if it still exists.
#[must_use]
pub fn current<'a>(
    sorted: &'a [Arc<ControllerRevision>],
    current_revision: &str,
) -> Option<&'a Arc<ControllerRevision>> {
    sorted
        .iter()
        .find(|revision| !current_revision.is_empty() && revision.name_any() == current_revision)
}

/// The revisions to delete: those no pod, nor the current or update revision, uses, oldest first, beyond
/// `limit` of them (`truncateHistory`).
#[must_use]
pub fn to_truncate<'a>(
    sorted: &'a [Arc<ControllerRevision>],
    live: &BTreeSet<&str>,
    limit: Option<i32>,
) -> Vec<&'a Arc<ControllerRevision>> {
    let limit = usize::try_from(limit.unwrap_or(DEFAULT_HISTORY_LIMIT).max(0)).unwrap_or(0);
    let historic: Vec<_> = sorted
        .iter()
        .filter(|revision| !live.contains(revision.name_any().as_str()))
        .collect();
    let excess = historic.len().saturating_sub(limit);
    historic.into_iter().take(excess).collect()
}

/// The update revision as it now stands in the cluster, and the collision count to write into the status.
#[derive(Clone, Debug)]
pub struct Ensured {
    /// The update revision.
    pub revision: Arc<ControllerRevision>,
    /// `status.collisionCount`.
    pub collision_count: i32,
    /// Whether it was created by this call (the cache has not seen it yet).
    pub created: bool,
}

/// Finds, renumbers or creates the update revision of `cloneset` among `sorted` (its revisions, sorted
/// with [`sort`]). A create that meets an existing object with the same data uses it; one with other data
/// raises the collision count and tries the next name, as `history.CreateControllerRevision` does.
///
/// # Errors
/// [`ReconcileError`] when the template cannot be hashed or a write fails.
pub async fn ensure_update(
    api: &Api<ControllerRevision>,
    cloneset: &CloneSet,
    sorted: &[Arc<ControllerRevision>],
) -> Result<Ensured, ReconcileError> {
    let key = object_key(cloneset);
    let mut collision_count = cloneset
        .status
        .as_ref()
        .and_then(|s| s.collision_count)
        .unwrap_or(0);
    let revision_error = |source| ReconcileError::Revision {
        cloneset: key.clone(),
        source,
    };
    let action_error = |source| ReconcileError::Action {
        cloneset: key.clone(),
        source,
    };
    let number = next_number(sorted);
    let candidate = new_revision(cloneset, number, collision_count).map_err(revision_error)?;
    match choose_update(sorted, candidate) {
        UpdateChoice::Latest(index) => {
            Ok(Ensured {
                revision: Arc::clone(sorted.get(index).ok_or_else(|| {
                    ReconcileError::Collisions {
                        cloneset: key.clone(),
                        attempts: 0,
                    }
                })?),
                collision_count,
                created: false,
            })
        }
        UpdateChoice::Renumber { index, number } => {
            let Some(existing) = sorted.get(index) else {
                return Err(ReconcileError::Collisions {
                    cloneset: key.clone(),
                    attempts: 0,
                });
            };
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
                        *candidate = new_revision(cloneset, number, collision_count)
                            .map_err(revision_error)?;
                    }
                    Err(other) => return Err(action_error(other)),
                }
            }
            Err(ReconcileError::Collisions {
                cloneset: key,
                attempts: MAX_COLLISIONS,
            })
        }
    }
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

    fn stored(cloneset: &CloneSet, number: i64) -> Arc<ControllerRevision> {
        Arc::new(new_revision(cloneset, number, 0).unwrap())
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

    #[test]
    fn the_update_revision_is_reused_renumbered_or_created() {
        let v1 = cloneset("nginx:1");
        let v2 = cloneset("nginx:2");
        let history = vec![stored(&v1, 1), stored(&v2, 2)];
        let next = next_number(&history);
        assert_eq!(next, 3);
        assert_eq!(
            choose_update(&history, new_revision(&v2, next, 0).unwrap()),
            UpdateChoice::Latest(1)
        );
        assert_eq!(
            choose_update(&history, new_revision(&v1, next, 0).unwrap()),
            UpdateChoice::Renumber {
                index: 0,
                number: 3
            }
        );
        let v3 = new_revision(&cloneset("nginx:3"), next, 0).unwrap();
        assert_eq!(
            choose_update(&history, v3.clone()),
            UpdateChoice::Create(Box::new(v3))
        );
        assert_eq!(next_number(&[]), 1);
    }

    #[test]
    fn revisions_sort_by_number_and_the_current_one_is_found_by_name() {
        let mut history = vec![stored(&cloneset("b"), 5), stored(&cloneset("a"), 2)];
        sort(&mut history);
        assert_eq!(
            history.iter().map(|r| number(r)).collect::<Vec<_>>(),
            [2, 5]
        );
        let name = history[1].name_any();
        assert_eq!(current(&history, &name).map(|r| number(r)), Some(5));
        assert!(current(&history, "").is_none());
        assert!(current(&history, "demo-gone").is_none());
    }

    #[test]
    fn history_keeps_live_revisions_and_the_limit() {
        let history: Vec<_> = (1..=5)
            .map(|n| stored(&cloneset(&format!("nginx:{n}")), n))
            .collect();
        let names: Vec<String> = history.iter().map(|r| r.name_any()).collect();
        let live: BTreeSet<&str> = [names[0].as_str(), names[4].as_str()].into();
        let doomed: Vec<i64> = to_truncate(&history, &live, Some(1))
            .iter()
            .map(|r| number(r))
            .collect();
        assert_eq!(doomed, [2, 3], "the oldest non-live ones go, one is kept");
        assert!(
            to_truncate(&history, &live, None).is_empty(),
            "default limit 10"
        );
        assert_eq!(to_truncate(&history, &live, Some(0)).len(), 3);
        assert_eq!(to_truncate(&history, &live, Some(-1)).len(), 3);
    }
}
