//! The Advanced StatefulSet controller's owned objects (pods, ControllerRevisions) from the process's
//! shared informers, found by the [`statefulset_uid_keys`] index: each change satisfies the create/delete
//! expectations it shows (see [`crate::workload::watch::owned`]) and triggers the owning StatefulSet.
//! Claims are not owned through a controller reference (upstream names them
//! `<template>-<set>-<ordinal>`), so they are looked up by name; a claim the controller expanded
//! (`volumeClaimUpdateStrategy: OnPodRollingUpdate`) carries the annotation `apps.kruise.io/owned-by-asts`
//! and its changes (the capacity growing) trigger that StatefulSet, other claims the StatefulSets their
//! names may belong to ([`claim_owners`]).

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kruise_api::apps::v1beta1::StatefulSet;
use kruise_api::keys::statefulset::OWNED_BY_ASTS_ANNOTATION;
use kruise_schedule::statefulset::OWNER_API_VERSION;
use kube::Resource;
use kube::runtime::reflector::ObjectRef;

use crate::workload::owner::OwnerKind;

/// The owner kind of the objects an Advanced StatefulSet controls (references of either
/// `apps.kruise.io` version; native `apps` StatefulSets are not its own).
pub const OWNER: OwnerKind = OwnerKind {
    kind: "StatefulSet",
    api_version: OWNER_API_VERSION,
};

/// The index keys of an object on a shared informer (pods, revisions): the UID of the Advanced
/// StatefulSet controlling it.
#[must_use]
pub fn statefulset_uid_keys<K: Resource>(object: &K) -> Vec<String> {
    OWNER.uid_keys(object)
}

/// The StatefulSets a claim's change may concern, in the claim's namespace (`None` elsewhere when
/// `namespace` is given): the one its `apps.kruise.io/owned-by-asts` annotation names (upstream writes it
/// on the claims it expands), else each `<set>` its name `<template>-<set>-<ordinal>` can be read as (so
/// that `status.volumeClaims` follows a claim being bound or growing; names that are no StatefulSet are
/// dropped by [`WorkloadController::triggers_named_owners`](crate::workload::controller::WorkloadController::triggers_named_owners)).
#[must_use]
pub fn claim_owners(
    claim: &PersistentVolumeClaim,
    namespace: Option<&str>,
) -> Vec<ObjectRef<StatefulSet>> {
    let Some(claim_namespace) = claim.metadata.namespace.as_deref() else {
        return Vec::new();
    };
    if namespace.is_some_and(|watched| watched != claim_namespace) {
        return Vec::new();
    }
    let reference = |set: &str| ObjectRef::new(set).within(claim_namespace);
    if let Some(set) = claim
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(OWNED_BY_ASTS_ANNOTATION))
    {
        return vec![reference(set)];
    }
    let name = claim.metadata.name.as_deref().unwrap_or("");
    let Some((prefix, ordinal)) = name.rsplit_once('-') else {
        return Vec::new();
    };
    if ordinal.is_empty() || !ordinal.bytes().all(|b| b.is_ascii_digit()) {
        return Vec::new();
    }
    prefix
        .match_indices('-')
        .filter_map(|(at, _)| prefix.get(at + 1..))
        .filter(|set| !set.is_empty())
        .map(reference)
        .collect()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    use super::*;

    fn pod(owner: Option<(&str, &str)>) -> Pod {
        let owners: Vec<_> = owner
            .into_iter()
            .map(|(api_version, kind)| {
                json!({"apiVersion": api_version, "kind": kind, "name": "web",
                    "uid": "sts-uid", "controller": true})
            })
            .collect();
        serde_json::from_value(
            json!({"metadata": {"name": "web-0", "namespace": "ns", "ownerReferences": owners}}),
        )
        .unwrap()
    }

    #[test]
    fn a_claim_triggers_the_statefulsets_it_may_belong_to() {
        let claim = |name: &str, annotations: serde_json::Value| -> PersistentVolumeClaim {
            serde_json::from_value(json!({"metadata": {"name": name, "namespace": "ns",
                "annotations": annotations}}))
            .unwrap()
        };
        let names = |owners: Vec<ObjectRef<StatefulSet>>| -> Vec<String> {
            owners
                .into_iter()
                .map(|o| format!("{}/{}", o.namespace.unwrap_or_default(), o.name))
                .collect()
        };
        // Expanded by the controller: the annotation names the StatefulSet.
        let expanded = claim(
            "data-my-web-0",
            json!({"apps.kruise.io/owned-by-asts": "my-web"}),
        );
        assert_eq!(names(claim_owners(&expanded, None)), ["ns/my-web"]);
        assert_eq!(names(claim_owners(&expanded, Some("ns"))), ["ns/my-web"]);
        assert!(claim_owners(&expanded, Some("other")).is_empty());
        // Otherwise every reading of `<template>-<set>-<ordinal>`.
        let plain = claim("my-data-web-12", json!({}));
        assert_eq!(names(claim_owners(&plain, None)), ["ns/data-web", "ns/web"]);
        // Not a StatefulSet claim name (a CloneSet claim ends with an instance id).
        assert!(claim_owners(&claim("data-web-x2b4c", json!({})), None).is_empty());
        assert!(claim_owners(&claim("data-", json!({})), None).is_empty());
        assert!(claim_owners(&claim("data-0", json!({})), None).is_empty());
    }

    #[test]
    fn only_kruise_statefulsets_own_pods_here() {
        for version in ["apps.kruise.io/v1beta1", "apps.kruise.io/v1alpha1"] {
            assert_eq!(
                statefulset_uid_keys(&pod(Some((version, "StatefulSet")))),
                ["sts-uid"]
            );
        }
        assert!(statefulset_uid_keys(&pod(Some(("apps/v1", "StatefulSet")))).is_empty());
        assert!(
            statefulset_uid_keys(&pod(Some(("apps.kruise.io/v1alpha1", "CloneSet")))).is_empty()
        );
        assert!(statefulset_uid_keys(&pod(None)).is_empty());
    }
}
