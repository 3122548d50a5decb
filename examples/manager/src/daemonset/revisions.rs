//! The ControllerRevisions of an Advanced DaemonSet (Kubernetes `controller/history` as the DaemonSet
//! controller uses it): the update revision is the DaemonSet's `spec.template` as the patch
//! `{"spec":{"template":{...,"$patch":"replace"}}}`, named `<daemonset>-<hash>` and labelled
//! `controller-revision-hash: <hash>` (the label its pods carry); it is found among the existing ones by
//! equal data, renumbered on a rollback to an older template, or created, with `status.collisionCount`
//! raised on a name collision. History beyond `revisionHistoryLimit` that no pod uses is deleted.
//!
//! The hash is kruise-rs's (FNV-1 over the sorted JSON of the data, as for CloneSet revisions): upstream
//! hashes a go-spew dump of the Go struct, which is not reproduced, so the hashes differ from upstream's
//! (a DaemonSet moved from upstream's controller to this one rolls its pods once).
//!
//! The choices (reuse, renumber, create; what to truncate) are the CloneSet controller's
//! ([`crate::cloneset::revisions`]), which take revisions of any owner.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kruise_api::apps::v1beta1::DaemonSet;
use kruise_api::keys;
use kruise_runtime::harness::object_key;
use kruise_schedule::daemonset::OWNER_API_VERSION;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};

use super::error::ReconcileError;
use crate::actions::{self, ActionError};
use crate::cloneset::revisions::{UpdateChoice, choose_update, equal, next_number, to_truncate};

/// How many collisions in a row [`ensure_update`] accepts before giving up.
const MAX_COLLISIONS: i32 = 100;

/// The owner reference of objects an Advanced DaemonSet controls (upstream writes the v1alpha1 version).
#[must_use]
pub fn owner_reference(daemonset: &DaemonSet) -> OwnerReference {
    OwnerReference {
        api_version: OWNER_API_VERSION.to_owned(),
        kind: "DaemonSet".to_owned(),
        name: daemonset.name_any(),
        uid: daemonset.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// The revision of the DaemonSet's current `spec.template`, numbered `number`, named with
/// `collision_count`: the template labels plus `controller.kubernetes.io/hash` and
/// `controller-revision-hash` (both the hash), its namespace and an owner reference to it.
///
/// # Errors
/// The template holds a value Go cannot write (an invalid quantity).
pub fn new_revision(
    daemonset: &DaemonSet,
    number: i64,
    collision_count: i32,
) -> Result<ControllerRevision, kruise_inplace::revision::RevisionError> {
    let revision = kruise_inplace::revision::for_template(
        &daemonset.name_any(),
        &daemonset.spec.template,
        collision_count,
    )?;
    let mut object = revision.to_controller_revision(
        daemonset
            .spec
            .template
            .metadata
            .as_ref()
            .and_then(|m| m.labels.as_ref()),
        number,
    );
    object
        .metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(
            keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL.to_owned(),
            revision.hash,
        );
    object.metadata.namespace = daemonset.namespace();
    object.metadata.owner_references = Some(vec![owner_reference(daemonset)]);
    Ok(object)
}

/// The hash a revision's pods carry (its `controller-revision-hash` label; empty when missing).
#[must_use]
pub fn hash_of(revision: &ControllerRevision) -> &str {
    revision
        .labels()
        .get(keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL)
        .map_or("", String::as_str)
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

/// Finds, renumbers or creates the update revision of `daemonset` among `sorted` (its revisions, sorted
/// with [`crate::cloneset::revisions::sort`]). A create that meets an existing object with the same data
/// uses it; one with other data raises the collision count and tries the next name.
///
/// # Errors
/// [`ReconcileError`] when the template cannot be hashed or a write fails.
pub async fn ensure_update(
    api: &Api<ControllerRevision>,
    daemonset: &DaemonSet,
    sorted: &[Arc<ControllerRevision>],
) -> Result<Ensured, ReconcileError> {
    let key = object_key(daemonset);
    let mut collision_count = daemonset
        .status
        .as_ref()
        .and_then(|s| s.collision_count)
        .unwrap_or(0);
    let revision_error = |source| ReconcileError::Revision {
        daemonset: key.clone(),
        source,
    };
    let action_error = |source| ReconcileError::Action {
        daemonset: key.clone(),
        source,
    };
    let missing = || ReconcileError::Collisions {
        daemonset: key.clone(),
        attempts: 0,
    };
    let number = next_number(sorted);
    let candidate = new_revision(daemonset, number, collision_count).map_err(revision_error)?;
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
                        *candidate = new_revision(daemonset, number, collision_count)
                            .map_err(revision_error)?;
                    }
                    Err(other) => return Err(action_error(other)),
                }
            }
            Err(ReconcileError::Collisions {
                daemonset: key,
                attempts: MAX_COLLISIONS,
            })
        }
    }
}

/// The revisions to delete: beyond `revisionHistoryLimit`, oldest first, those whose hash no pod carries
/// and that are not the update revision (upstream `cleanupHistory`).
#[must_use]
pub fn history_to_delete<'a>(
    daemonset: &DaemonSet,
    sorted: &'a [Arc<ControllerRevision>],
    pod_hashes: &BTreeSet<&str>,
    update_name: &str,
) -> Vec<&'a Arc<ControllerRevision>> {
    let live: Vec<String> = sorted
        .iter()
        .filter(|revision| {
            revision.name_any() == update_name || pod_hashes.contains(hash_of(revision))
        })
        .map(|revision| revision.name_any())
        .collect();
    let live: BTreeSet<&str> = live.iter().map(String::as_str).collect();
    to_truncate(sorted, &live, daemonset.spec.revision_history_limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cloneset::revisions::sort;

    fn daemonset(image: &str) -> DaemonSet {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet",
            "metadata": {"name": "agent", "namespace": "ns", "uid": "ds-uid"},
            "spec": {
                "selector": {"matchLabels": {"app": "agent"}},
                "template": {"metadata": {"labels": {"app": "agent"}},
                    "spec": {"containers": [{"name": "main", "image": image}]}},
            },
        }))
        .unwrap()
    }

    #[test]
    fn a_revision_carries_the_hash_its_pods_carry() {
        let ds = daemonset("agent:1");
        let revision = new_revision(&ds, 1, 0).unwrap();
        let expected =
            kruise_inplace::revision::for_template("agent", &ds.spec.template, 0).unwrap();
        assert_eq!(revision.name_any(), format!("agent-{}", expected.hash));
        assert_eq!(hash_of(&revision), expected.hash);
        assert_eq!(revision.labels()["app"], "agent");
        assert!(
            kruise_schedule::daemonset::KnownRevision::of(&revision).is_some(),
            "the planner finds its data by the hash"
        );
        let owner = &revision.owner_references()[0];
        assert_eq!(
            (
                owner.api_version.as_str(),
                owner.kind.as_str(),
                owner.uid.as_str()
            ),
            ("apps.kruise.io/v1alpha1", "DaemonSet", "ds-uid")
        );
        assert_ne!(
            hash_of(&new_revision(&daemonset("agent:2"), 1, 0).unwrap()),
            expected.hash
        );
        assert_ne!(
            new_revision(&ds, 1, 1).unwrap().name_any(),
            revision.name_any()
        );
    }

    #[test]
    fn history_keeps_revisions_pods_use_and_the_update_revision() {
        let mut ds = daemonset("agent:1");
        ds.spec.revision_history_limit = Some(1);
        let mut history: Vec<_> = (1..=5)
            .map(|n| Arc::new(new_revision(&daemonset(&format!("agent:{n}")), n, 0).unwrap()))
            .collect();
        sort(&mut history);
        let pod_hashes: BTreeSet<&str> = [hash_of(&history[0])].into();
        let update = history[4].name_any();
        let doomed: Vec<i64> = history_to_delete(&ds, &history, &pod_hashes, &update)
            .iter()
            .map(|r| crate::cloneset::revisions::number(r))
            .collect();
        assert_eq!(
            doomed,
            [2, 3],
            "1 is used by a pod, 5 is the update, one more is kept"
        );
    }
}
