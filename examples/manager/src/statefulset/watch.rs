//! The Advanced StatefulSet controller's owned objects (pods, ControllerRevisions) from the process's
//! shared informers, found by the [`statefulset_uid_keys`] index: each change satisfies the create/delete
//! expectations it shows (see [`crate::workload::watch::owned`]) and triggers the owning StatefulSet.
//! Claims are not owned through a controller reference (upstream names them
//! `<template>-<set>-<ordinal>`), so they are looked up by name.

use kruise_schedule::statefulset::OWNER_API_VERSION;
use kube::Resource;

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
