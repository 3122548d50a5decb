//! The ControllerRevisions of an Advanced DaemonSet (Kubernetes `controller/history` as the DaemonSet
//! controller uses it): the update revision is the DaemonSet's `spec.template` as the patch
//! `{"spec":{"template":{...,"$patch":"replace"}}}`, named `<daemonset>-<hash>` and labelled
//! `controller-revision-hash: <hash>` (the label its pods carry). History beyond `revisionHistoryLimit`
//! that no pod uses is deleted.
//!
//! The hash is kruise-rs's (FNV-1 over the sorted JSON of the data, as for CloneSet revisions): upstream
//! hashes a go-spew dump of the Go struct, which is not reproduced, so the hashes differ from upstream's
//! (a DaemonSet moved from upstream's controller to this one rolls its pods once).
//!
//! The history steps (reuse, renumber, create with collisions, truncate) are
//! [`crate::workload::history`]'s, which take revisions of any owner.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use k8s_openapi::api::apps::v1::ControllerRevision;
use kruise_api::apps::v1beta1::DaemonSet;
use kruise_api::keys;
use kruise_runtime::harness::object_key;
use kube::{Api, ResourceExt};

use super::error::ReconcileError;
use super::watch::OWNER;
use crate::workload::history::{self, Ensured, to_truncate};

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
    let (mut object, revision) = history::template_revision(
        OWNER,
        daemonset,
        &daemonset.spec.template,
        number,
        collision_count,
    )?;
    object
        .metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(
            keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL.to_owned(),
            revision.hash,
        );
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

/// Finds, renumbers or creates the update revision of `daemonset` among `sorted` (its revisions, sorted
/// with [`history::sort`]), see [`history::ensure_update`].
///
/// # Errors
/// [`ReconcileError`] when the template cannot be hashed or a write fails.
pub async fn ensure_update(
    api: &Api<ControllerRevision>,
    daemonset: &DaemonSet,
    sorted: &[Arc<ControllerRevision>],
) -> Result<Ensured, ReconcileError> {
    let collision_count = daemonset
        .status
        .as_ref()
        .and_then(|s| s.collision_count)
        .unwrap_or(0);
    history::ensure_update(api, sorted, collision_count, |number, collisions| {
        new_revision(daemonset, number, collisions)
    })
    .await
    .map_err(|error| ReconcileError::history(object_key(daemonset), error))
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
    use crate::workload::history::sort;

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
            .map(|r| history::number(r))
            .collect();
        assert_eq!(
            doomed,
            [2, 3],
            "1 is used by a pod, 5 is the update, one more is kept"
        );
    }
}
