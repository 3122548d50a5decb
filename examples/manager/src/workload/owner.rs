//! Owner references of a workload kind: whether an object is controlled by one (matched by kind and API
//! group, either version), the owner to reconcile, the owner-UID index keys of the shared informers, the
//! create/delete expectations an object satisfies, and the owner reference a controller writes.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};

use crate::expectations::Operation;

/// A workload kind that controls objects through a controller owner reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwnerKind {
    /// The kind name, e.g. `CloneSet`.
    pub kind: &'static str,
    /// The `apiVersion` written into the owner references this controller creates; references of any
    /// version of its API group count as this kind's.
    pub api_version: &'static str,
}

impl OwnerKind {
    /// The API group of [`OwnerKind::api_version`] (empty for the core group).
    #[must_use]
    pub fn group(&self) -> &'static str {
        self.api_version
            .split_once('/')
            .map_or("", |(group, _)| group)
    }

    /// The controller owner reference of `object` when it is of this kind: `(name, uid)`.
    #[must_use]
    pub fn controller_of<'a, K: Resource>(&self, object: &'a K) -> Option<(&'a str, &'a str)> {
        object
            .owner_references()
            .iter()
            .find(|owner| owner.controller == Some(true))
            .filter(|owner| {
                owner.kind == self.kind
                    && owner
                        .api_version
                        .split_once('/')
                        .is_some_and(|(group, _)| group == self.group())
            })
            .map(|owner| (owner.name.as_str(), owner.uid.as_str()))
    }

    /// The owner to reconcile when `object` changes.
    #[must_use]
    pub fn reference_to<O, K>(&self, object: &K) -> Option<ObjectRef<O>>
    where
        O: Resource<DynamicType = ()>,
        K: Resource,
    {
        let (name, _) = self.controller_of(object)?;
        let reference = ObjectRef::new(name);
        Some(match object.namespace() {
            Some(namespace) => reference.within(&namespace),
            None => reference,
        })
    }

    /// The index keys of an object on a shared informer: the UID of the owner of this kind controlling it.
    #[must_use]
    pub fn uid_keys<K: Resource>(&self, object: &K) -> Vec<String> {
        self.controller_of(object)
            .map(|(_, uid)| uid.to_owned())
            .into_iter()
            .collect()
    }

    /// What seeing `object` (`gone`: its deletion) tells the expectations: `(owner uid, operation, object
    /// key)` pairs, the key built from `kind` (see [`expectation_key`]). An object being deleted (a
    /// deletion timestamp) also satisfies a create: it was created.
    #[must_use]
    pub fn observed<K: Resource>(
        &self,
        kind: &str,
        object: &K,
        gone: bool,
    ) -> Vec<(String, Operation, String)> {
        let seen = |operation: Operation| {
            self.controller_of(object)
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

    /// The controller owner reference of objects `owner` (of this kind) controls.
    #[must_use]
    pub fn controller_reference<O: Resource>(&self, owner: &O) -> OwnerReference {
        OwnerReference {
            api_version: self.api_version.to_owned(),
            kind: self.kind.to_owned(),
            name: owner.name_any(),
            uid: owner.uid().unwrap_or_default(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }
    }
}

/// The key expectations use for an owned object: `<kind>/<namespace>/<name>`.
#[must_use]
pub fn expectation_key<K: Resource>(kind: &str, object: &K) -> String {
    key_of(
        kind,
        object.meta().namespace.as_deref().unwrap_or(""),
        object.meta().name.as_deref().unwrap_or(""),
    )
}

/// `<kind>/<namespace>/<name>`.
#[must_use]
pub fn key_of(kind: &str, namespace: &str, name: &str) -> String {
    format!("{kind}/{namespace}/{name}")
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    use super::*;

    const CLONESET: OwnerKind = OwnerKind {
        kind: "CloneSet",
        api_version: "apps.kruise.io/v1alpha1",
    };

    fn pod(owner: Option<(&str, &str)>, deleting: bool) -> Pod {
        let owners: Vec<_> = owner
            .into_iter()
            .map(|(api_version, kind)| {
                json!({"apiVersion": api_version, "kind": kind, "name": "web",
                "uid": "cs-uid", "controller": true})
            })
            .collect();
        let mut metadata = json!({"name": "a", "namespace": "ns", "ownerReferences": owners});
        if deleting {
            metadata["deletionTimestamp"] = json!("2024-05-01T10:00:00Z");
        }
        serde_json::from_value(json!({"metadata": metadata})).unwrap()
    }

    #[test]
    fn only_owners_of_the_kind_and_group_count_in_either_version() {
        for version in ["apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1"] {
            assert_eq!(
                CLONESET.controller_of(&pod(Some((version, "CloneSet")), false)),
                Some(("web", "cs-uid"))
            );
        }
        assert!(
            CLONESET
                .controller_of(&pod(Some(("apps/v1", "ReplicaSet")), false))
                .is_none()
        );
        assert!(
            CLONESET
                .controller_of(&pod(Some(("example.com/v1", "CloneSet")), false))
                .is_none()
        );
        assert!(CLONESET.uid_keys(&pod(None, false)).is_empty());
        let reference: ObjectRef<Pod> = CLONESET
            .reference_to(&pod(Some(("apps.kruise.io/v1alpha1", "CloneSet")), false))
            .unwrap();
        assert_eq!(
            (reference.name.as_str(), reference.namespace.as_deref()),
            ("web", Some("ns"))
        );
    }

    #[test]
    fn events_satisfy_create_and_delete_expectations() {
        let owned = Some(("apps.kruise.io/v1alpha1", "CloneSet"));
        assert_eq!(
            CLONESET.observed("pod", &pod(owned, false), false),
            [("cs-uid".into(), Operation::Create, "pod/ns/a".into())]
        );
        let deleting = CLONESET.observed("pod", &pod(owned, true), false);
        assert_eq!(deleting.len(), 2);
        assert_eq!(deleting[1].1, Operation::Delete);
        assert_eq!(
            CLONESET.observed("pod", &pod(owned, false), true),
            [("cs-uid".into(), Operation::Delete, "pod/ns/a".into())]
        );
        assert!(
            CLONESET
                .observed("pod", &pod(None, false), false)
                .is_empty()
        );
    }

    #[test]
    fn the_controller_reference_names_the_owner() {
        let owner: Pod = serde_json::from_value(
            json!({"metadata": {"name": "web", "namespace": "ns", "uid": "cs-uid"}}),
        )
        .unwrap();
        let reference = CLONESET.controller_reference(&owner);
        assert_eq!(
            (
                reference.api_version.as_str(),
                reference.kind.as_str(),
                reference.name.as_str(),
                reference.uid.as_str()
            ),
            ("apps.kruise.io/v1alpha1", "CloneSet", "web", "cs-uid")
        );
        assert_eq!(reference.controller, Some(true));
        assert_eq!(reference.block_owner_deletion, Some(true));
    }
}
