//! The Advanced StatefulSet controller's owned objects (pods, ControllerRevisions) from the process's
//! shared informers, found by the [`statefulset_uid_keys`] index: each change satisfies the create/delete
//! expectations it shows and triggers the owning StatefulSet. Claims are not owned through a controller
//! reference (upstream names them `<template>-<set>-<ordinal>`), so they are looked up by name.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::{Stream, StreamExt};
use kruise_api::apps::v1beta1::StatefulSet;
use kruise_runtime::{Change, Informer};
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};

use super::context::Shared;
use crate::cloneset::watch::expectation_key;
use crate::expectations::Operation;

/// The API group of the owner references this controller follows (native `apps` StatefulSets are not
/// its own).
const GROUP: &str = "apps.kruise.io";

/// The controller owner reference of `object` when it is an Advanced StatefulSet (either API version):
/// `(name, uid)`.
#[must_use]
pub fn statefulset_owner<K: Resource>(object: &K) -> Option<(&str, &str)> {
    object
        .owner_references()
        .iter()
        .find(|owner| owner.controller == Some(true))
        .filter(|owner| {
            owner.kind == "StatefulSet"
                && owner
                    .api_version
                    .split_once('/')
                    .is_some_and(|(group, _)| group == GROUP)
        })
        .map(|owner| (owner.name.as_str(), owner.uid.as_str()))
}

/// The StatefulSet to reconcile when `object` changes.
#[must_use]
pub fn owner_ref<K: Resource>(object: &K) -> Option<ObjectRef<StatefulSet>> {
    let (name, _) = statefulset_owner(object)?;
    let reference = ObjectRef::new(name);
    Some(match object.namespace() {
        Some(namespace) => reference.within(&namespace),
        None => reference,
    })
}

/// The index keys of an object on a shared informer (pods, revisions): the UID of the Advanced
/// StatefulSet controlling it.
#[must_use]
pub fn statefulset_uid_keys<K: Resource>(object: &K) -> Vec<String> {
    statefulset_owner(object)
        .map(|(_, uid)| uid.to_owned())
        .into_iter()
        .collect()
}

/// What seeing `object` (`gone`: its deletion) tells the expectations: `(owner uid, operation, object
/// key)`. An object being deleted (a deletion timestamp) also satisfies a create: it was created.
#[must_use]
pub fn observed<K: Resource>(
    kind: &str,
    object: &K,
    gone: bool,
) -> Vec<(String, Operation, String)> {
    let seen = |operation: Operation| {
        statefulset_owner(object)
            .map(|(_, uid)| (uid.to_owned(), operation, expectation_key(kind, object)))
    };
    if gone {
        return seen(Operation::Delete).into_iter().collect();
    }
    let mut found: Vec<_> = seen(Operation::Create).into_iter().collect();
    if object.meta().deletion_timestamp.is_some() {
        found.extend(seen(Operation::Delete));
    }
    found
}

/// The objects of a shared informer (in `namespace` only, if given) as the controller's trigger: each
/// change satisfies the create/delete expectations it shows (the object named `<kind>/<namespace>/<name>`),
/// and `synced` is set once every stored object has been seen.
pub fn owned<K>(
    informer: &Informer<K>,
    kind: &'static str,
    namespace: Option<String>,
    synced: Arc<AtomicBool>,
    shared: Arc<Shared>,
) -> impl Stream<Item = Arc<K>> + Send + 'static
where
    K: Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    informer.subscribe().filter_map(move |change| {
        let object = match change {
            Change::Listed => {
                synced.store(true, Ordering::SeqCst);
                None
            }
            Change::Applied(object) | Change::Deleted(object)
                if namespace.as_deref().is_some_and(|namespace| {
                    object.meta().namespace.as_deref() != Some(namespace)
                }) =>
            {
                None
            }
            Change::Applied(object) => {
                shared.observe_all(&observed(kind, object.as_ref(), false));
                Some(object)
            }
            Change::Deleted(object) => {
                shared.forget_version(&expectation_key(kind, object.as_ref()));
                shared.observe_all(&observed(kind, object.as_ref(), true));
                Some(object)
            }
        };
        futures::future::ready(object)
    })
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    use super::*;

    fn pod(owner: Option<(&str, &str)>, deleting: bool) -> Pod {
        let owners: Vec<_> = owner
            .into_iter()
            .map(|(api_version, kind)| {
                json!({"apiVersion": api_version, "kind": kind, "name": "web",
                    "uid": "sts-uid", "controller": true})
            })
            .collect();
        let mut metadata = json!({"name": "web-0", "namespace": "ns", "ownerReferences": owners});
        if deleting {
            metadata["deletionTimestamp"] = json!("2024-05-01T10:00:00Z");
        }
        serde_json::from_value(json!({"metadata": metadata})).unwrap()
    }

    #[test]
    fn only_kruise_statefulsets_own_pods_here() {
        for version in ["apps.kruise.io/v1beta1", "apps.kruise.io/v1alpha1"] {
            assert_eq!(
                statefulset_owner(&pod(Some((version, "StatefulSet")), false)),
                Some(("web", "sts-uid"))
            );
        }
        assert!(statefulset_owner(&pod(Some(("apps/v1", "StatefulSet")), false)).is_none());
        assert!(
            statefulset_owner(&pod(Some(("apps.kruise.io/v1alpha1", "CloneSet")), false)).is_none()
        );
        assert!(statefulset_uid_keys(&pod(None, false)).is_empty());
        let reference =
            owner_ref(&pod(Some(("apps.kruise.io/v1beta1", "StatefulSet")), false)).unwrap();
        assert_eq!(
            (reference.name.as_str(), reference.namespace.as_deref()),
            ("web", Some("ns"))
        );
    }

    #[test]
    fn events_satisfy_create_and_delete_expectations() {
        let owned = Some(("apps.kruise.io/v1beta1", "StatefulSet"));
        assert_eq!(
            observed("pod", &pod(owned, false), false),
            [("sts-uid".into(), Operation::Create, "pod/ns/web-0".into())]
        );
        assert_eq!(observed("pod", &pod(owned, true), false).len(), 2);
        assert_eq!(
            observed("pod", &pod(owned, false), true),
            [("sts-uid".into(), Operation::Delete, "pod/ns/web-0".into())]
        );
    }
}
