//! The pods the SidecarSet controller looks at, indexed by the SidecarSets that injected them (the
//! `kruise.io/sidecarset-injected-list` annotation), so a reconcile reads "the pods of this SidecarSet"
//! without scanning every pod. Pods without that annotation are not kept at all.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use k8s_openapi::api::core::v1::Pod;
use kruise_sidecar::records;
use kube::runtime::watcher::Event;

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

#[derive(Default)]
struct Inner {
    pods: BTreeMap<String, Arc<Pod>>,
    by_sidecarset: BTreeMap<String, BTreeSet<String>>,
    /// Keys seen since the watch (re)started its initial list.
    listing: Option<HashSet<String>>,
}

impl Inner {
    fn insert(&mut self, pod: Pod) {
        let key = pod_key(&pod);
        self.remove(&key);
        let sets = injected_sidecarsets(&pod);
        if sets.is_empty() {
            return;
        }
        for set in sets {
            self.by_sidecarset
                .entry(set)
                .or_default()
                .insert(key.clone());
        }
        self.pods.insert(key, Arc::new(pod));
    }

    fn remove(&mut self, key: &str) {
        if let Some(old) = self.pods.remove(key) {
            for set in injected_sidecarsets(&old) {
                if let Some(keys) = self.by_sidecarset.get_mut(&set) {
                    keys.remove(key);
                    if keys.is_empty() {
                        self.by_sidecarset.remove(&set);
                    }
                }
            }
        }
    }
}

/// The index, shared by the watch (writer) and the reconciles (readers).
#[derive(Clone, Default)]
pub struct InjectedPodIndex {
    inner: Arc<RwLock<Inner>>,
    synced: Arc<AtomicBool>,
}

impl InjectedPodIndex {
    /// Applies one watch event (`managedFields` should be dropped before).
    pub fn apply(&self, event: &Event<Pod>) {
        let mut inner = self.inner.write().unwrap_or_else(PoisonError::into_inner);
        match event {
            Event::Apply(pod) => inner.insert(pod.clone()),
            Event::Delete(pod) => inner.remove(&pod_key(pod)),
            Event::Init => inner.listing = Some(HashSet::new()),
            Event::InitApply(pod) => {
                if let Some(listing) = inner.listing.as_mut() {
                    listing.insert(pod_key(pod));
                }
                inner.insert(pod.clone());
            }
            Event::InitDone => {
                if let Some(listing) = inner.listing.take() {
                    let gone: Vec<String> = inner
                        .pods
                        .keys()
                        .filter(|key| !listing.contains(*key))
                        .cloned()
                        .collect();
                    for key in gone {
                        inner.remove(&key);
                    }
                }
                self.synced.store(true, Ordering::SeqCst);
            }
        }
    }

    /// Whether the first full list has been applied.
    #[must_use]
    pub fn is_synced(&self) -> bool {
        self.synced.load(Ordering::SeqCst)
    }

    /// The pods injected with `sidecarset`, by key.
    #[must_use]
    pub fn pods_of(&self, sidecarset: &str) -> Vec<Arc<Pod>> {
        let inner = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        inner
            .by_sidecarset
            .get(sidecarset)
            .into_iter()
            .flatten()
            .filter_map(|key| inner.pods.get(key).cloned())
            .collect()
    }

    /// The pod with this key, if kept.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<Arc<Pod>> {
        let inner = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        inner.pods.get(key).cloned()
    }

    /// How many pods are kept.
    #[must_use]
    pub fn len(&self) -> usize {
        self.inner
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .pods
            .len()
    }

    /// Whether no pod is kept.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(name: &str, injected: Option<&str>) -> Pod {
        let mut metadata = json!({"name": name, "namespace": "ns"});
        if let Some(list) = injected {
            metadata["annotations"] = json!({"kruise.io/sidecarset-injected-list": list});
        }
        serde_json::from_value(json!({"metadata": metadata})).unwrap()
    }

    #[test]
    fn pods_are_found_by_the_sidecarsets_that_injected_them() {
        let index = InjectedPodIndex::default();
        index.apply(&Event::Apply(pod("a", Some("log,proxy"))));
        index.apply(&Event::Apply(pod("b", Some("log"))));
        index.apply(&Event::Apply(pod("c", None)));
        assert_eq!(index.len(), 2);
        assert_eq!(index.pods_of("log").len(), 2);
        assert_eq!(index.pods_of("proxy").len(), 1);
        assert!(index.pods_of("other").is_empty());
        // The annotation changed: the index follows.
        index.apply(&Event::Apply(pod("a", Some("log"))));
        assert!(index.pods_of("proxy").is_empty());
        index.apply(&Event::Delete(pod("b", Some("log"))));
        assert_eq!(index.pods_of("log").len(), 1);
        assert!(index.get("ns/a").is_some());
    }

    #[test]
    fn a_relist_drops_pods_that_are_gone() {
        let index = InjectedPodIndex::default();
        index.apply(&Event::Apply(pod("a", Some("log"))));
        assert!(!index.is_synced());
        index.apply(&Event::Init);
        index.apply(&Event::InitApply(pod("b", Some("log"))));
        index.apply(&Event::InitDone);
        assert!(index.is_synced());
        let keys: Vec<_> = index.pods_of("log").iter().map(|p| pod_key(p)).collect();
        assert_eq!(keys, ["ns/b"]);
    }
}
