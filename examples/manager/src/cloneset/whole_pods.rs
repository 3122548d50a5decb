//! The whole pods a CloneSet plan acts on, read from the shared pod informer: the controller keeps only
//! each pod's facts between reconciles ([`PodFactsCache`]), so a plan reads the pods it writes to (in-place
//! updates, lifecycle patches, deletions) at the `resourceVersion` the facts were read from, and the
//! execution reuses what the plan read.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use k8s_openapi::api::core::v1::Pod;
use kruise_runtime::Informer;
use kruise_schedule::cloneset::{PodFactsCache, PodSource};
use kube::runtime::reflector::ObjectRef;

/// The shared pod informer as a [`PodSource`]: a pod is found only at the version asked for.
#[derive(Clone, Copy)]
pub struct InformerPods<'a>(pub &'a Informer<Pod>);

impl PodSource for InformerPods<'_> {
    fn pod_at(&self, namespace: &str, name: &str, resource_version: &str) -> Option<Arc<Pod>> {
        let pod = self.0.get(&ObjectRef::new(name).within(namespace))?;
        (pod.metadata.resource_version.as_deref().unwrap_or_default() == resource_version)
            .then_some(pod)
    }
}

/// The whole pods of one plan from `cache`: each pod read from the informer once, kept until the
/// execution is done.
pub struct WholePods<'a> {
    informer: InformerPods<'a>,
    cache: &'a PodFactsCache,
    read: Mutex<HashMap<String, Arc<Pod>>>,
}

impl<'a> WholePods<'a> {
    /// The pods of `cache`, read from `informer` when asked for.
    #[must_use]
    pub fn new(informer: &'a Informer<Pod>, cache: &'a PodFactsCache) -> Self {
        Self {
            informer: InformerPods(informer),
            cache,
            read: Mutex::new(HashMap::new()),
        }
    }

    /// The whole pod at `index` of the cache (a plan's pod index), at the version the cache read, or
    /// `None` when the informer holds another version by now.
    #[must_use]
    pub fn get(&self, index: usize) -> Option<Arc<Pod>> {
        let pod = self.cache.pod(index)?;
        self.pod_at(pod.namespace, pod.name, pod.resource_version)
    }

    /// The name of the pod at `index` (`""` when there is none).
    #[must_use]
    pub fn name(&self, index: usize) -> &'a str {
        self.cache.pod(index).map_or("", |pod| pod.name)
    }

    /// How many whole pods were read.
    #[must_use]
    pub fn read_count(&self) -> usize {
        self.read
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl PodSource for WholePods<'_> {
    fn pod_at(&self, namespace: &str, name: &str, resource_version: &str) -> Option<Arc<Pod>> {
        let key = format!("{namespace}/{name}");
        let mut read = self.read.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(pod) = read.get(&key)
            && pod.metadata.resource_version.as_deref().unwrap_or_default() == resource_version
        {
            return Some(Arc::clone(pod));
        }
        let pod = self.informer.pod_at(namespace, name, resource_version)?;
        read.insert(key, Arc::clone(&pod));
        Some(pod)
    }
}
