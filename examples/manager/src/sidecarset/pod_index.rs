//! The pods the SidecarSet controller looks at, found by the SidecarSets that injected them (the
//! `kruise.io/sidecarset-injected-list` annotation), as the planner's compact
//! [`PodFacts`]: the controller plans from these and decodes a whole
//! pod from the shared pod informer only to patch it.
//!
//! The index follows the shared pod informer's changes ([`InjectedPodIndex::follow`]): each pod version is
//! read once, when the watch delivers it, and kept as facts until the pod changes again, so a reconcile of
//! a SidecarSet with thousands of pods decodes none of them. The changes are handed on to the controller's
//! trigger only after the index holds them, so a reconcile a pod change starts plans from that change.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use futures::{Stream, StreamExt};
use k8s_openapi::api::core::v1::Pod;
use kruise_runtime::{Change, Informer};
use kruise_sidecar::pod_facts::PodFacts;
use kruise_sidecar::pod_view::PodView;
use kruise_sidecar::records;
use kube::runtime::reflector::ObjectRef;

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

/// The facts of the injected pods, by SidecarSet. Cloning shares them.
#[derive(Clone)]
pub struct InjectedPodIndex {
    informer: Informer<Pod>,
    state: Arc<Mutex<State>>,
    synced: Arc<AtomicBool>,
}

#[derive(Default)]
struct State {
    /// By pod key.
    pods: HashMap<String, Entry>,
    /// Pod keys by SidecarSet name, in key order.
    by_sidecarset: HashMap<String, BTreeSet<String>>,
}

struct Entry {
    facts: Arc<PodFacts>,
    sidecarsets: Vec<String>,
}

impl State {
    fn remove(&mut self, key: &str) {
        let Some(entry) = self.pods.remove(key) else {
            return;
        };
        for sidecarset in entry.sidecarsets {
            if let Some(keys) = self.by_sidecarset.get_mut(&sidecarset) {
                keys.remove(key);
                if keys.is_empty() {
                    self.by_sidecarset.remove(&sidecarset);
                }
            }
        }
    }

    fn apply(&mut self, pod: &Pod) {
        let key = pod_key(pod);
        if let Some(entry) = self.pods.get(&key)
            && entry.facts.resource_version().is_some()
            && entry.facts.resource_version() == pod.metadata.resource_version.as_deref()
        {
            return;
        }
        self.remove(&key);
        let sidecarsets = injected_sidecarsets(pod);
        if sidecarsets.is_empty() {
            return;
        }
        for sidecarset in &sidecarsets {
            self.by_sidecarset
                .entry(sidecarset.clone())
                .or_default()
                .insert(key.clone());
        }
        self.pods.insert(
            key,
            Entry {
                facts: Arc::new(PodFacts::of(pod)),
                sidecarsets,
            },
        );
    }
}

impl InjectedPodIndex {
    /// An empty index over `informer`'s pods; feed it with [`InjectedPodIndex::follow`] (or
    /// [`InjectedPodIndex::apply`]).
    #[must_use]
    pub fn new(informer: &Informer<Pod>) -> Self {
        Self {
            informer: informer.clone(),
            state: Arc::new(Mutex::new(State::default())),
            synced: Arc::new(AtomicBool::new(false)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes one change of the pod informer into the index.
    pub fn apply(&self, change: &Change<Pod>) {
        match change {
            Change::Applied(pod) => self.lock().apply(pod),
            Change::Deleted(pod) => self.lock().remove(&pod_key(pod)),
            Change::Listed => self.synced.store(true, Ordering::SeqCst),
        }
    }

    /// Follows the informer's changes into the index and hands each changed or deleted pod on once the
    /// index holds it (for the controller's trigger). Starts a subscription of the informer.
    pub fn follow(&self) -> impl Stream<Item = Arc<Pod>> + Send + 'static {
        let index = self.clone();
        self.informer.subscribe().filter_map(move |change| {
            index.apply(&change);
            std::future::ready(change.into_object())
        })
    }

    /// Whether the index holds the informer's first full list.
    #[must_use]
    pub fn is_synced(&self) -> bool {
        self.synced.load(Ordering::SeqCst)
    }

    /// The facts of the pods injected with `sidecarset`, in key order.
    #[must_use]
    pub fn pods_of(&self, sidecarset: &str) -> Vec<Arc<PodFacts>> {
        let state = self.lock();
        state
            .by_sidecarset
            .get(sidecarset)
            .map(|keys| {
                keys.iter()
                    .filter_map(|key| state.pods.get(key))
                    .map(|entry| Arc::clone(&entry.facts))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether an injected pod with this `namespace/name` key is indexed.
    #[must_use]
    pub fn contains(&self, key: &str) -> bool {
        self.lock().pods.contains_key(key)
    }

    /// The whole pod `facts` were read from, from the informer: `None` when the informer no longer has
    /// that version (the pod changed or is gone; its change is on its way to the index).
    #[must_use]
    pub fn pod(&self, facts: &PodFacts) -> Option<Arc<Pod>> {
        let reference = ObjectRef::new(facts.name()).within(facts.namespace());
        self.informer
            .get(&reference)
            .filter(|pod| pod.metadata.resource_version.as_deref() == facts.resource_version())
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;
    use kube::runtime::watcher::Event;
    use serde_json::json;

    use super::*;

    fn pod(name: &str, version: &str, injected: Option<&str>) -> Pod {
        let mut metadata = json!({"name": name, "namespace": "ns", "resourceVersion": version});
        if let Some(list) = injected {
            metadata["annotations"] = json!({"kruise.io/sidecarset-injected-list": list});
        }
        serde_json::from_value(json!({"metadata": metadata})).unwrap()
    }

    fn names(facts: &[Arc<PodFacts>]) -> Vec<&str> {
        facts
            .iter()
            .map(|facts| PodView::name(facts.as_ref()))
            .collect()
    }

    #[tokio::test]
    async fn pods_are_found_by_the_sidecarsets_that_injected_them() {
        let informer = Informer::new("pods");
        let index = InjectedPodIndex::new(&informer);
        let mut followed = Box::pin(index.follow());
        informer.apply(Event::Init);
        informer.apply(Event::InitDone);
        informer.apply(Event::Apply(pod("b", "1", Some("log,proxy"))));
        informer.apply(Event::Apply(pod("a", "2", Some("log"))));
        informer.apply(Event::Apply(pod("c", "3", None)));
        for _ in 0..3 {
            followed.next().await.unwrap();
        }
        assert!(index.is_synced());
        assert_eq!(names(&index.pods_of("log")), ["a", "b"]);
        assert_eq!(names(&index.pods_of("proxy")), ["b"]);
        assert!(index.pods_of("other").is_empty());
        assert!(!index.contains("ns/c"));
        // The annotation changed: the index follows.
        informer.apply(Event::Apply(pod("b", "4", Some("log"))));
        followed.next().await.unwrap();
        assert!(index.pods_of("proxy").is_empty());
        assert_eq!(index.pods_of("log")[1].resource_version(), Some("4"));
        informer.apply(Event::Delete(pod("a", "2", Some("log"))));
        followed.next().await.unwrap();
        assert_eq!(names(&index.pods_of("log")), ["b"]);
        assert!(index.contains("ns/b"));
        assert!(!index.contains("ns/a"));
        // The whole pod of the indexed version comes from the informer.
        let facts = index.pods_of("log").remove(0);
        assert_eq!(
            index
                .pod(&facts)
                .unwrap()
                .metadata
                .resource_version
                .as_deref(),
            Some("4")
        );
        informer.apply(Event::Apply(pod("b", "5", Some("log"))));
        assert!(index.pod(&facts).is_none(), "a newer version is stored");
    }

    #[tokio::test]
    async fn a_relist_drops_pods_that_are_gone() {
        let informer = Informer::new("pods");
        let index = InjectedPodIndex::new(&informer);
        informer.apply(Event::Apply(pod("a", "1", Some("log"))));
        let mut followed = Box::pin(index.follow());
        followed.next().await.unwrap();
        assert!(!index.is_synced());
        assert_eq!(names(&index.pods_of("log")), ["a"]);
        informer.apply(Event::Init);
        informer.apply(Event::InitApply(pod("b", "2", Some("log"))));
        informer.apply(Event::InitDone);
        // b applied, a deleted (then Listed, which hands nothing on).
        followed.next().await.unwrap();
        followed.next().await.unwrap();
        assert_eq!(names(&index.pods_of("log")), ["b"]);
        // The Listed change is taken when the stream is polled next.
        informer.apply(Event::Apply(pod("c", "3", None)));
        followed.next().await.unwrap();
        assert!(index.is_synced());
    }
}
