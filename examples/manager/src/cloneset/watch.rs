//! The CloneSet controller's owned objects (pods, claims, revisions) from the process's shared informers,
//! found by the [`cloneset_uid_keys`] index: each change satisfies the create/delete expectations it shows
//! (see [`crate::workload::watch::owned`]) and triggers the owning CloneSet.

use kruise_schedule::cloneset::OWNER_API_VERSION;
use kube::Resource;

use crate::workload::owner::OwnerKind;

/// The owner kind of the objects a CloneSet controls (references of either `apps.kruise.io` version).
pub const OWNER: OwnerKind = OwnerKind {
    kind: "CloneSet",
    api_version: OWNER_API_VERSION,
};

/// The index keys of an object on a shared informer (pods, claims, revisions): the UID of the CloneSet
/// controlling it.
#[must_use]
pub fn cloneset_uid_keys<K: Resource>(object: &K) -> Vec<String> {
    OWNER.uid_keys(object)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::Pod;
    use kruise_runtime::Informer;
    use kube::runtime::watcher::Event;
    use serde_json::json;

    use super::*;

    fn pod(name: &str, owner: Option<(&str, &str)>) -> Pod {
        let owners: Vec<_> = owner
            .into_iter()
            .map(|(api_version, kind)| {
                json!({"apiVersion": api_version, "kind": kind, "name": "web",
                "uid": "cs-uid", "controller": true})
            })
            .collect();
        serde_json::from_value(
            json!({"metadata": {"name": name, "namespace": "ns", "ownerReferences": owners}}),
        )
        .unwrap()
    }

    const CLONESET: (&str, &str) = ("apps.kruise.io/v1alpha1", "CloneSet");

    #[test]
    fn only_cloneset_owners_count_in_either_version() {
        assert_eq!(
            OWNER.controller_of(&pod("a", Some(CLONESET))),
            Some(("web", "cs-uid"))
        );
        assert!(
            OWNER
                .controller_of(&pod("a", Some(("apps.kruise.io/v1beta1", "CloneSet"))))
                .is_some()
        );
        assert!(
            OWNER
                .controller_of(&pod("a", Some(("apps/v1", "ReplicaSet"))))
                .is_none()
        );
        assert!(
            OWNER
                .controller_of(&pod("a", Some(("apps.kruise.io/v1beta1", "StatefulSet"))))
                .is_none()
        );
    }

    #[test]
    fn the_index_finds_only_cloneset_pods() {
        let informer = Informer::<Pod>::new("pods");
        let index = informer.index("cloneset-uid", Arc::new(cloneset_uid_keys::<Pod>));
        informer.apply(Event::Init);
        informer.apply(Event::InitApply(pod("a", Some(CLONESET))));
        informer.apply(Event::InitApply(pod("b", None)));
        informer.apply(Event::InitDone);
        assert_eq!(index.count("cs-uid"), 1);
        // The owner reference was removed: the pod leaves the index.
        informer.apply(Event::Apply(pod("a", None)));
        assert_eq!(index.count("cs-uid"), 0);
        informer.apply(Event::Apply(pod("d", Some(CLONESET))));
        assert_eq!(index.get("cs-uid").len(), 1);
    }
}
