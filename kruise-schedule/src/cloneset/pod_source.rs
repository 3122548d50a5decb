//! Where a plan from a [`super::PodFactsCache`] gets the whole pods it acts on: the cache keeps compact
//! facts only, so the few pods a plan writes to (in-place updates, lifecycle patches, deletions) are read
//! from the controller's pod store, at the `resourceVersion` the cache read.

use std::borrow::Borrow;
use std::cell::RefCell;
use std::ops::Deref;
use std::sync::{Arc, LazyLock};

use k8s_openapi::api::core::v1::Pod;

/// The whole pods behind a [`super::PodFactsCache`] (a controller's pod store).
///
/// ```
/// use std::collections::HashMap;
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::Pod;
/// use kruise_schedule::cloneset::PodSource;
///
/// struct Store(HashMap<(String, String), Arc<Pod>>);
///
/// impl PodSource for Store {
///     fn pod_at(&self, namespace: &str, name: &str, resource_version: &str) -> Option<Arc<Pod>> {
///         let pod = self.0.get(&(namespace.to_owned(), name.to_owned()))?;
///         (pod.metadata.resource_version.as_deref().unwrap_or("") == resource_version).then(|| Arc::clone(pod))
///     }
/// }
/// ```
pub trait PodSource {
    /// The pod `namespace/name` at `resource_version` (the version the cache read; `""` for a pod without
    /// one), or `None` when the source does not hold that version (the pod changed or went away since).
    fn pod_at(&self, namespace: &str, name: &str, resource_version: &str) -> Option<Arc<Pod>>;
}

/// A source that holds no pod (a plan from it whose step needs a whole pod has no actions).
#[derive(Clone, Copy, Debug, Default)]
pub struct NoPods;

impl PodSource for NoPods {
    fn pod_at(&self, _: &str, _: &str, _: &str) -> Option<Arc<Pod>> {
        None
    }
}

/// The pod a step reads whole: borrowed from the input pods, or read from a [`PodSource`].
#[derive(Clone, Debug)]
pub(crate) enum WholePod<'a> {
    /// One of `PlanInput::pods`.
    Borrowed(&'a Pod),
    /// Read from the source.
    Shared(Arc<Pod>),
}

/// What a step reads in place of a pod its source no longer holds (the plan is then dropped).
pub(crate) static ABSENT: LazyLock<Pod> = LazyLock::new(Pod::default);

impl Deref for WholePod<'_> {
    type Target = Pod;

    fn deref(&self) -> &Pod {
        match self {
            Self::Borrowed(pod) => pod,
            Self::Shared(pod) => pod,
        }
    }
}

impl Borrow<Pod> for WholePod<'_> {
    fn borrow(&self) -> &Pod {
        self
    }
}

/// Reads the whole pods of a plan from a [`super::PodFactsCache`] from its [`PodSource`], remembering
/// the pods the source no longer holds at the cached version (the plan is dropped then).
pub(crate) struct Loader<'a> {
    cache: Option<&'a super::PodFactsCache>,
    source: &'a dyn PodSource,
    missing: RefCell<Vec<usize>>,
}

impl<'a> Loader<'a> {
    /// A loader for the pods of `cache` (none: a plan of input pods, which never loads).
    pub(crate) fn new(cache: Option<&'a super::PodFactsCache>, source: &'a dyn PodSource) -> Self {
        Self {
            cache,
            source,
            missing: RefCell::new(Vec::new()),
        }
    }

    /// The whole pod at `index` of the cache, or an empty pod (recorded as missing) when the source does
    /// not hold the cached version.
    pub(crate) fn load(&self, index: usize) -> WholePod<'static> {
        let found = self
            .cache
            .and_then(|cache| cache.pod(index))
            .and_then(|pod| {
                self.source
                    .pod_at(pod.namespace, pod.name, pod.resource_version)
            });
        match found {
            Some(pod) => WholePod::Shared(pod),
            None => {
                let mut missing = self.missing.borrow_mut();
                if !missing.contains(&index) {
                    missing.push(index);
                }
                WholePod::Borrowed(&ABSENT)
            }
        }
    }

    /// The pods [`Loader::load`] did not find, in the order first asked for.
    pub(crate) fn missing(&self) -> Vec<usize> {
        self.missing.borrow().clone()
    }
}

impl crate::sort::scatter::PodLabels for WholePod<'_> {
    fn label(&self, key: &str) -> Option<&str> {
        kruise_api::pod::label(self, key)
    }
}
