//! The Advanced StatefulSet controller's owned objects (pods, ControllerRevisions) from the process's
//! shared informers, found by the [`statefulset_uid_keys`] index: each change satisfies the create/delete
//! expectations it shows (see [`crate::workload::watch::owned`]) and triggers the owning StatefulSet.
//! Claims are not owned through a controller reference (upstream names them
//! `<template>-<set>-<ordinal>`), so they are looked up by name; a claim the controller expanded
//! (`volumeClaimUpdateStrategy: OnPodRollingUpdate`) carries the annotation `apps.kruise.io/owned-by-asts`
//! and its changes (the capacity growing) trigger that StatefulSet ([`expanded_claim_owner`]).

use std::sync::Arc;

use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use kruise_api::apps::v1beta1::StatefulSet;
use kruise_api::keys::statefulset::OWNED_BY_ASTS_ANNOTATION;
use kruise_schedule::statefulset::OWNER_API_VERSION;
use kube::Resource;
use kube::runtime::reflector::ObjectRef;

use super::context::Shared;
use crate::expectations::Operation;
use crate::workload::owner::OwnerKind;
use crate::workload::watch::ExpectationSink;
use kruise_runtime::harness::reference_key;

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

/// The StatefulSet a claim's change concerns: the one its `apps.kruise.io/owned-by-asts` annotation names
/// (upstream writes it on the claims it expands), in the claim's namespace; `None` for other claims and,
/// when `namespace` is given, for claims elsewhere.
#[must_use]
pub fn expanded_claim_owner(
    claim: &PersistentVolumeClaim,
    namespace: Option<&str>,
) -> Option<ObjectRef<StatefulSet>> {
    let claim_namespace = claim.metadata.namespace.as_deref()?;
    if namespace.is_some_and(|watched| watched != claim_namespace) {
        return None;
    }
    let set = claim
        .metadata
        .annotations
        .as_ref()?
        .get(OWNED_BY_ASTS_ANNOTATION)?;
    Some(ObjectRef::new(set).within(claim_namespace))
}

/// The trigger mapper of claims: [`expanded_claim_owner`], counted as queued.
pub fn queued_claim_owner(
    shared: &Arc<Shared>,
    namespace: Option<String>,
) -> impl Fn(Arc<PersistentVolumeClaim>) -> Option<ObjectRef<StatefulSet>> + Send + Sync + 'static {
    let shared = Arc::clone(shared);
    move |claim| {
        let owner = expanded_claim_owner(&claim, namespace.as_deref())?;
        shared.queue.triggered(&reference_key(&owner));
        Some(owner)
    }
}

impl ExpectationSink for Shared {
    fn observe_all(&self, seen: &[(String, Operation, String)]) {
        Shared::observe_all(self, seen);
    }

    fn forget_version(&self, object: &str) {
        Shared::forget_version(self, object);
    }
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
    fn an_expanded_claim_triggers_the_statefulset_its_annotation_names() {
        let claim = |annotations: serde_json::Value| -> PersistentVolumeClaim {
            serde_json::from_value(json!({"metadata": {"name": "data-web-0", "namespace": "ns",
                "annotations": annotations}}))
            .unwrap()
        };
        let expanded = claim(json!({"apps.kruise.io/owned-by-asts": "web"}));
        let owner = expanded_claim_owner(&expanded, None).unwrap();
        assert_eq!(
            (owner.name.as_str(), owner.namespace.as_deref()),
            ("web", Some("ns"))
        );
        assert!(expanded_claim_owner(&expanded, Some("ns")).is_some());
        assert!(expanded_claim_owner(&expanded, Some("other")).is_none());
        assert!(expanded_claim_owner(&claim(json!({})), None).is_none());
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
