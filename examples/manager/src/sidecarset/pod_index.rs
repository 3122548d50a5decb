//! The pods the SidecarSet controller looks at, found by the SidecarSets that injected them (the
//! `kruise.io/sidecarset-injected-list` annotation): an index of the process's shared pod informer, so a
//! reconcile reads "the pods of this SidecarSet" without scanning every pod and without a copy of its own.

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use kruise_runtime::{Indexed, Informer};
use kruise_sidecar::records;
use kube::runtime::reflector::ObjectRef;

/// The name of the index on the pod informer.
pub const INDEX: &str = "sidecarset-injected";

/// `namespace/name` of a pod.
#[must_use]
pub fn pod_key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The SidecarSets a pod was injected with.
#[must_use]
pub fn injected_sidecarsets(pod: &Pod) -> Vec<String> {
    records::injected_list(pod)
        .iter()
        .map(str::to_owned)
        .collect()
}

/// The injected pods of a pod informer, by SidecarSet.
#[derive(Clone)]
pub struct InjectedPodIndex {
    informer: Informer<Pod>,
    by_sidecarset: Indexed<Pod>,
}

impl InjectedPodIndex {
    /// The index on `informer` (added to it if it has none yet).
    #[must_use]
    pub fn new(informer: &Informer<Pod>) -> Self {
        Self {
            informer: informer.clone(),
            by_sidecarset: informer.index(INDEX, Arc::new(injected_sidecarsets)),
        }
    }

    /// Whether the informer has stored its first full list.
    #[must_use]
    pub fn is_synced(&self) -> bool {
        self.informer.is_synced()
    }

    /// The pods injected with `sidecarset`.
    #[must_use]
    pub fn pods_of(&self, sidecarset: &str) -> Vec<Arc<Pod>> {
        self.by_sidecarset.get(sidecarset)
    }

    /// Whether a pod with this `namespace/name` key is stored (nothing decoded).
    #[must_use]
    pub fn contains(&self, key: &str) -> bool {
        key.split_once('/').is_some_and(|(namespace, name)| {
            self.informer
                .contains(&ObjectRef::new(name).within(namespace))
        })
    }

    /// The pod with this `namespace/name` key, if stored.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<Arc<Pod>> {
        let (namespace, name) = key.split_once('/')?;
        self.informer.get(&ObjectRef::new(name).within(namespace))
    }
}

#[cfg(test)]
mod tests {
    use kube::runtime::watcher::Event;
    use serde_json::json;

    use super::*;

    fn pod(name: &str, injected: Option<&str>) -> Pod {
        let mut metadata = json!({"name": name, "namespace": "ns"});
        if let Some(list) = injected {
            metadata["annotations"] = json!({"kruise.io/sidecarset-injected-list": list});
        }
        serde_json::from_value(json!({"metadata": metadata})).unwrap()
    }

    fn synced(pods: Vec<Pod>) -> Informer<Pod> {
        let informer = Informer::new("pods");
        informer.apply(Event::Init);
        for pod in pods {
            informer.apply(Event::InitApply(pod));
        }
        informer.apply(Event::InitDone);
        informer
    }

    #[test]
    fn pods_are_found_by_the_sidecarsets_that_injected_them() {
        let informer = synced(Vec::new());
        let index = InjectedPodIndex::new(&informer);
        informer.apply(Event::Apply(pod("a", Some("log,proxy"))));
        informer.apply(Event::Apply(pod("b", Some("log"))));
        informer.apply(Event::Apply(pod("c", None)));
        assert_eq!(index.pods_of("log").len(), 2);
        assert_eq!(index.pods_of("proxy").len(), 1);
        assert!(index.pods_of("other").is_empty());
        // The annotation changed: the index follows.
        informer.apply(Event::Apply(pod("a", Some("log"))));
        assert!(index.pods_of("proxy").is_empty());
        informer.apply(Event::Delete(pod("b", Some("log"))));
        assert_eq!(index.pods_of("log").len(), 1);
        assert!(index.get("ns/a").is_some());
        assert!(index.get("ns/b").is_none());
    }

    #[test]
    fn a_relist_drops_pods_that_are_gone() {
        let informer = Informer::new("pods");
        let index = InjectedPodIndex::new(&informer);
        assert!(!index.is_synced());
        informer.apply(Event::Apply(pod("a", Some("log"))));
        informer.apply(Event::Init);
        informer.apply(Event::InitApply(pod("b", Some("log"))));
        informer.apply(Event::InitDone);
        assert!(index.is_synced());
        let keys: Vec<_> = index.pods_of("log").iter().map(|p| pod_key(p)).collect();
        assert_eq!(keys, ["ns/b"]);
    }
}
