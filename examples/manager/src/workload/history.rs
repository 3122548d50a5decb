//! The ControllerRevision history of a workload's pod template (Kubernetes `controller/history` as
//! upstream's CloneSet, StatefulSet and DaemonSet controllers use it): the update revision built from the
//! template with `kruise_inplace::revision` (so names and hashes match upstream's where upstream hashes
//! the same way), found among the existing ones by equal data or created, renumbered on a rollback to an
//! older template, with the collision count raised on a name collision; the current revision found by
//! name; history beyond the limit deleted.
//!
//! The decisions are pure ([`choose_update`], [`current`], [`to_truncate`]); [`ensure_update`] carries
//! out the choice against the API server for any owner.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use kruise_inplace::revision::{Revision, RevisionError};
use kruise_runtime::harness::object_key;
use kube::api::{Patch, PatchParams};
use kube::{Api, Resource, ResourceExt};
use serde_json::Value;

use super::owner::OwnerKind;
use crate::actions::{self, ActionError};

/// Upstream's history limit when `spec.revisionHistoryLimit` is unset.
pub const DEFAULT_HISTORY_LIMIT: i32 = 10;

/// How many collisions in a row [`ensure_update`] accepts before giving up.
pub const MAX_COLLISIONS: i32 = 100;

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

/// The revision of `owner`'s pod `template` (the owner being of `kind`), numbered `number`, named with
/// `collision_count`: the template labels plus `controller.kubernetes.io/hash`, the owner's namespace and
/// a controller reference to it. Returns the revision object and the hash it was named with.
///
/// # Errors
/// The template holds a value Go cannot write (an invalid quantity).
pub fn template_revision<O: Resource>(
    kind: OwnerKind,
    owner: &O,
    template: &PodTemplateSpec,
    number: i64,
    collision_count: i32,
) -> Result<(ControllerRevision, Revision), RevisionError> {
    let revision =
        kruise_inplace::revision::for_template(&owner.name_any(), template, collision_count)?;
    let mut object = revision.to_controller_revision(
        template.metadata.as_ref().and_then(|m| m.labels.as_ref()),
        number,
    );
    object.metadata.namespace = owner.namespace();
    object.metadata.owner_references = Some(vec![kind.controller_reference(owner)]);
    Ok((object, revision))
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

/// Upstream's `getActiveRevisions` choice for `candidate` (numbered with [`next_number`]) among the
/// `sorted` existing revisions.
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

/// Why [`ensure_update`] failed; each controller wraps it into its own error naming the owner.
#[derive(Debug)]
pub enum HistoryError {
    /// The revision of the pod template cannot be built.
    Revision(RevisionError),
    /// A write or read of a ControllerRevision failed.
    Action(ActionError),
    /// The revision names kept colliding with revisions of other data (`attempts` names tried; 0 when
    /// the chosen revision vanished from the list).
    Collisions {
        /// How many names were tried.
        attempts: i32,
    },
}

/// Finds, renumbers or creates the update revision among `sorted` (the owner's revisions, sorted with
/// [`sort`]), `build(number, collision_count)` making the candidate and `collision_count` being the
/// owner's `status.collisionCount`. A create that meets an existing object with the same data uses it; one
/// with other data raises the collision count and tries the next name, as
/// `history.CreateControllerRevision` does.
///
/// # Errors
/// [`HistoryError`] when the template cannot be hashed or a write fails.
pub async fn ensure_update(
    api: &Api<ControllerRevision>,
    sorted: &[Arc<ControllerRevision>],
    mut collision_count: i32,
    build: impl Fn(i64, i32) -> Result<ControllerRevision, RevisionError>,
) -> Result<Ensured, HistoryError> {
    let missing = || HistoryError::Collisions { attempts: 0 };
    let number = next_number(sorted);
    let candidate = build(number, collision_count).map_err(HistoryError::Revision)?;
    match choose_update(sorted, candidate) {
        UpdateChoice::Latest(index) => Ok(Ensured {
            revision: Arc::clone(sorted.get(index).ok_or_else(missing)?),
            collision_count,
            created: false,
        }),
        UpdateChoice::Renumber { index, number } => {
            let existing = sorted.get(index).ok_or_else(missing)?;
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
                    HistoryError::Action(ActionError::from_kube(
                        object_key(existing.as_ref()),
                        error,
                    ))
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
                            HistoryError::Action(ActionError::from_kube(
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
                            build(number, collision_count).map_err(HistoryError::Revision)?;
                    }
                    Err(other) => return Err(HistoryError::Action(other)),
                }
            }
            Err(HistoryError::Collisions {
                attempts: MAX_COLLISIONS,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;

    use super::*;

    const KIND: OwnerKind = OwnerKind {
        kind: "CloneSet",
        api_version: "apps.kruise.io/v1alpha1",
    };

    fn owner() -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "demo", "namespace": "ns", "uid": "cs-uid"},
        }))
        .unwrap()
    }

    fn template(image: &str) -> PodTemplateSpec {
        serde_json::from_value(serde_json::json!({
            "metadata": {"labels": {"app": "demo"}},
            "spec": {"containers": [{"name": "main", "image": image}]},
        }))
        .unwrap()
    }

    fn revision(image: &str, number: i64) -> ControllerRevision {
        template_revision(KIND, &owner(), &template(image), number, 0)
            .unwrap()
            .0
    }

    fn stored(image: &str, number: i64) -> Arc<ControllerRevision> {
        Arc::new(revision(image, number))
    }

    #[test]
    fn a_template_revision_is_named_labelled_and_owned() {
        let (object, named) = template_revision(KIND, &owner(), &template("a"), 3, 0).unwrap();
        assert_eq!(object.name_any(), named.name);
        assert_eq!(object.revision, Some(3));
        assert_eq!(object.namespace().as_deref(), Some("ns"));
        assert_eq!(object.labels()["app"], "demo");
        assert_eq!(object.labels()["controller.kubernetes.io/hash"], named.hash);
        let reference = &object.owner_references()[0];
        assert_eq!(
            (reference.kind.as_str(), reference.uid.as_str()),
            ("CloneSet", "cs-uid")
        );
        let collided = template_revision(KIND, &owner(), &template("a"), 3, 1).unwrap();
        assert_ne!(collided.0.name_any(), object.name_any());
    }

    #[test]
    fn the_update_revision_is_reused_renumbered_or_created() {
        let history = vec![stored("nginx:1", 1), stored("nginx:2", 2)];
        let next = next_number(&history);
        assert_eq!(next, 3);
        assert_eq!(
            choose_update(&history, revision("nginx:2", next)),
            UpdateChoice::Latest(1)
        );
        assert_eq!(
            choose_update(&history, revision("nginx:1", next)),
            UpdateChoice::Renumber {
                index: 0,
                number: 3
            }
        );
        let v3 = revision("nginx:3", next);
        assert_eq!(
            choose_update(&history, v3.clone()),
            UpdateChoice::Create(Box::new(v3))
        );
        assert_eq!(next_number(&[]), 1);
    }

    #[test]
    fn revisions_sort_by_number_and_the_current_one_is_found_by_name() {
        let mut history = vec![stored("b", 5), stored("a", 2)];
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
        let history: Vec<_> = (1..=5).map(|n| stored(&format!("nginx:{n}"), n)).collect();
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
