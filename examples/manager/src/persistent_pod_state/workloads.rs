//! The workload a PersistentPodState targets, read from the StatefulSet and Advanced StatefulSet stores
//! (upstream's controller finder, for the two kinds it supports without a whitelist).

use k8s_openapi::api::apps::v1 as apps;
use kruise_api::apps::v1beta1::{StatefulSet as AdvancedStatefulSet, TargetReference};
use kruise_schedule::persistent_pod_state::status::WorkloadView;
use kruise_schedule::statefulset::ordinals::ReservedOrdinals;
use kube::runtime::reflector::{ObjectRef, Store};

/// The StatefulSet stores.
#[derive(Clone)]
pub(super) struct Workloads {
    pub(super) sets: Store<apps::StatefulSet>,
    pub(super) advanced: Store<AdvancedStatefulSet>,
}

/// The target as the status needs it, and its UID (the pods' controller UID).
pub(super) struct Found {
    pub(super) view: WorkloadView,
    pub(super) uid: String,
}

impl Workloads {
    /// The workload `target` names in `namespace`; `None` when it does not exist or is of another kind.
    pub(super) fn find(&self, namespace: &str, target: &TargetReference) -> Option<Found> {
        if target.kind != "StatefulSet" {
            return None;
        }
        let group = target
            .api_version
            .rsplit_once('/')
            .map_or("", |(group, _)| group);
        match group {
            "apps" => {
                let set = self
                    .sets
                    .get(&ObjectRef::new(&target.name).within(namespace))?;
                Some(Found {
                    view: WorkloadView {
                        replicas: set.spec.replicas.unwrap_or(1),
                        reserved: ReservedOrdinals::default(),
                        deleting: set.metadata.deletion_timestamp.is_some(),
                    },
                    uid: set.metadata.uid.clone().unwrap_or_default(),
                })
            }
            "apps.kruise.io" => {
                let set = self
                    .advanced
                    .get(&ObjectRef::new(&target.name).within(namespace))?;
                let (reserved, _invalid) = ReservedOrdinals::of(&set.spec.reserve_ordinals);
                Some(Found {
                    view: WorkloadView {
                        replicas: set.spec.replicas.unwrap_or(1),
                        reserved,
                        deleting: set.metadata.deletion_timestamp.is_some(),
                    },
                    uid: set.metadata.uid.clone().unwrap_or_default(),
                })
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use kube::runtime::reflector;
    use kube::runtime::watcher::Event;
    use serde_json::json;

    use super::*;

    fn store<K>(objects: Vec<K>) -> Store<K>
    where
        K: kube::Resource<DynamicType = ()> + Clone,
    {
        let (reader, mut writer) = reflector::store::<K>();
        writer.apply_watcher_event(&Event::Init);
        for object in objects {
            writer.apply_watcher_event(&Event::InitApply(object));
        }
        writer.apply_watcher_event(&Event::InitDone);
        reader
    }

    fn target(api_version: &str, kind: &str, name: &str) -> TargetReference {
        TargetReference {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            name: name.to_owned(),
        }
    }

    #[test]
    fn targets_are_found_by_group_with_their_scale_and_reserved_ordinals() {
        let advanced: AdvancedStatefulSet = serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "prod", "uid": "uid-asts"},
            "spec": {"replicas": 3, "reserveOrdinals": [1], "selector": {}, "template": {}},
        }))
        .unwrap();
        let native: apps::StatefulSet = serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "prod", "uid": "uid-sts",
                "deletionTimestamp": "2024-01-01T00:00:00Z"},
            "spec": {"selector": {}, "template": {}},
        }))
        .unwrap();
        let workloads = Workloads {
            sets: store(vec![native]),
            advanced: store(vec![advanced]),
        };
        let found = workloads
            .find(
                "prod",
                &target("apps.kruise.io/v1alpha1", "StatefulSet", "web"),
            )
            .unwrap();
        assert_eq!(found.uid, "uid-asts");
        assert_eq!(found.view.replicas, 3);
        assert!(found.view.reserved.contains(1) && !found.view.reserved.contains(2));
        assert!(!found.view.deleting);
        let found = workloads
            .find("prod", &target("apps/v1", "StatefulSet", "web"))
            .unwrap();
        assert_eq!(found.uid, "uid-sts");
        // An unset replicas is 1, as the API server defaults it.
        assert_eq!(found.view.replicas, 1);
        assert!(found.view.deleting);
        for (namespace, missing) in [
            ("prod", target("apps/v1", "Deployment", "web")),
            ("prod", target("example.com/v1", "StatefulSet", "web")),
            ("prod", target("apps/v1", "StatefulSet", "db")),
            ("test", target("apps/v1", "StatefulSet", "web")),
        ] {
            assert!(workloads.find(namespace, &missing).is_none(), "{missing:?}");
        }
    }
}
