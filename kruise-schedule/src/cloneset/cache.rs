//! [`PodFactsCache`]: the per-pod facts of a CloneSet's pods kept between reconciles, so that a plan does not
//! re-read every pod (the inputs of upstream's `calculateDiffsWithExpectation`; the planner's incremental path).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{CloneSet, CloneSetUpdateStrategyType};
use kruise_api::scatter::UpdateScatterTerm;
use kruise_api::update_priority::UpdatePriorityStrategy;

use super::facts::{self, Facts, OrderKeys, RawFacts, SortKeys};
use super::settings::Settings;
use crate::pod_view;
use crate::sort::active::ActiveKey;
use crate::sort::priority::PriorityKey;

/// The facts of one CloneSet's pods, kept beside a controller's pod store and updated per pod event, so that
/// [`super::plan`] with [`super::PlanInput::from_cache`] derives each plan from compact facts instead of
/// re-reading every pod.
///
/// * It holds the pods as `Arc<Pod>` (as a `kube` reflector store does; no pod is cloned) in a dense list,
///   [`PodFactsCache::pods`], which is what the plan's pod indexes refer to.
/// * Per pod it keeps only what the pod alone says: its revision (interned), lifecycle state, phase,
///   `Ready` / `InPlaceUpdateReady` status and `Ready` transition time, deletion, the
///   `specified-delete` label, `pod-template-hash` presence, the in-place grace and batch summary, and the
///   `ActivePods` key. Everything that depends on the CloneSet, its revisions or `now` (revision match,
///   `podsToDelete`, `minReadySeconds` availability) is applied when planning.
/// * The priority and scatter keys depend on the CloneSet's `priorityStrategy` and `scatterStrategy`. The
///   cache computes them for the strategy last given to [`PodFactsCache::set_ordering`] and remembers that
///   strategy; a plan whose CloneSet has a different one reads those keys from the pods instead (always
///   correct, only slower), until `set_ordering` is called with the new CloneSet.
///
/// [`PodFactsCache::apply`] skips a pod whose `resourceVersion` equals the stored one.
///
/// ```
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::Pod;
/// use kruise_schedule::cloneset::{Applied, PodFactsCache};
///
/// let pod: Pod = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "web-a", "namespace": "default", "resourceVersion": "7",
///                  "labels": {"controller-revision-hash": "web-1"}},
/// })).unwrap();
/// let mut cache = PodFactsCache::new();
/// assert_eq!(cache.apply(Arc::new(pod.clone())), Applied::Inserted);
/// assert_eq!(cache.apply(Arc::new(pod)), Applied::Unchanged);
/// assert_eq!(cache.len(), 1);
/// assert!(cache.remove("default", "web-a").is_some());
/// assert!(cache.is_empty());
/// ```
#[derive(Clone, Default)]
pub struct PodFactsCache {
    pods: Vec<Arc<Pod>>,
    entries: Vec<Entry>,
    /// Position in `pods` by namespace, then name.
    positions: HashMap<String, HashMap<String, usize>>,
    revisions: Revisions,
    ordering: Ordering,
}

/// What [`PodFactsCache::apply`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applied {
    /// The pod was new.
    Inserted,
    /// The pod replaced an older version.
    Updated,
    /// The stored pod has the same `resourceVersion`; nothing changed.
    Unchanged,
}

/// What [`PodFactsCache::sync`] changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Synced {
    /// Pods inserted or replaced by a newer version.
    pub applied: usize,
    /// Stored pods that were not among the given ones.
    pub removed: usize,
}

/// The cached facts of one pod.
#[derive(Clone, Debug)]
struct Entry {
    raw: RawFacts,
    /// A copy of the pod's name, kept with the facts so that name tie-breaks in orderings read compact
    /// memory rather than the pods'.
    name: Box<str>,
    /// `facts::name_head` of the name.
    name_head: u128,
    /// The interned `controller-revision-hash`.
    revision: u32,
    /// The priority key and scatter bits for `PodFactsCache::ordering`.
    priority: PriorityKey,
    scatter: u64,
}

/// The strategy the cached priority and scatter keys were computed for.
#[derive(Clone, Debug, Default, PartialEq)]
struct Ordering {
    priority: Option<UpdatePriorityStrategy>,
    terms: Vec<UpdateScatterTerm>,
}

impl Ordering {
    fn of(cloneset: &CloneSet) -> Self {
        let strategy = &cloneset.spec.update_strategy;
        if strategy.type_ == Some(CloneSetUpdateStrategyType::OnDelete) {
            return Self::default();
        }
        strategy
            .rolling_update
            .as_ref()
            .map_or_else(Self::default, |rolling| Self {
                priority: rolling.priority_strategy.clone(),
                terms: rolling.scatter_strategy.clone(),
            })
    }

    fn matches(&self, settings: &Settings<'_>) -> bool {
        let (priority, terms) = settings.rolling.map_or((None, &[][..]), |rolling| {
            (
                rolling.priority_strategy.as_ref(),
                rolling.scatter_strategy.as_slice(),
            )
        });
        self.priority.as_ref() == priority && self.terms == terms
    }

    fn keys(&self) -> OrderKeys<'_> {
        OrderKeys::from_parts(self.priority.as_ref(), &self.terms)
    }
}

/// Interned revision names with reference counts.
#[derive(Clone, Debug, Default)]
struct Revisions {
    names: Vec<(String, usize)>,
    ids: HashMap<String, u32>,
    free: Vec<u32>,
}

impl Revisions {
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            if let Some(entry) = self.names.get_mut(id as usize) {
                entry.1 += 1;
            }
            return id;
        }
        let id = match self.free.pop() {
            Some(id) => {
                if let Some(entry) = self.names.get_mut(id as usize) {
                    *entry = (name.to_owned(), 1);
                }
                id
            }
            None => {
                let id = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
                self.names.push((name.to_owned(), 1));
                id
            }
        };
        self.ids.insert(name.to_owned(), id);
        id
    }

    fn release(&mut self, id: u32) {
        let Some(entry) = self.names.get_mut(id as usize) else {
            return;
        };
        entry.1 = entry.1.saturating_sub(1);
        if entry.1 == 0 {
            self.ids.remove(&entry.0);
            entry.0.clear();
            self.free.push(id);
        }
    }
}

/// The namespace and name a pod is kept under.
fn key(pod: &Pod) -> (&str, &str) {
    (
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod_view::name(pod),
    )
}

impl PodFactsCache {
    /// An empty cache (no priority or scatter strategy yet: see [`PodFactsCache::set_ordering`]).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty cache whose priority and scatter keys follow `cloneset`'s strategy.
    #[must_use]
    pub fn for_cloneset(cloneset: &CloneSet) -> Self {
        Self {
            ordering: Ordering::of(cloneset),
            ..Self::default()
        }
    }

    /// Follows `cloneset`'s `priorityStrategy` and `scatterStrategy`: when they differ from the ones the
    /// cached keys were computed for, recomputes every pod's keys (one pass over the pods' labels). Returns
    /// whether it did. Call it before planning when the CloneSet may have changed; a plan never depends on
    /// it for correctness, only for speed.
    pub fn set_ordering(&mut self, cloneset: &CloneSet) -> bool {
        let ordering = Ordering::of(cloneset);
        if ordering == self.ordering {
            return false;
        }
        self.ordering = ordering;
        let keys = self.ordering.keys();
        for (pod, entry) in self.pods.iter().zip(&mut self.entries) {
            (entry.priority, entry.scatter) = keys.keys(pod);
        }
        true
    }

    /// Inserts `pod`, or replaces the stored pod of the same namespace and name. A pod that is the stored
    /// `Arc`, or whose `resourceVersion` is set and equal to the stored one's, is skipped
    /// ([`Applied::Unchanged`]).
    pub fn apply(&mut self, pod: impl Into<Arc<Pod>>) -> Applied {
        let pod = pod.into();
        let (namespace, name) = key(&pod);
        let position = self.position(namespace, name);
        self.apply_at(pod, position)
    }

    /// [`PodFactsCache::apply`] for a pod whose position (`None`: not stored) was already looked up.
    fn apply_at(&mut self, pod: Arc<Pod>, position: Option<usize>) -> Applied {
        if let Some(position) = position
            && let Some(stored) = self.pods.get(position)
            && (Arc::ptr_eq(stored, &pod)
                || (stored.metadata.resource_version.is_some()
                    && stored.metadata.resource_version == pod.metadata.resource_version))
        {
            return Applied::Unchanged;
        }
        let entry = self.read(&pod);
        match position {
            Some(position) => {
                if let Some(old) = self.entries.get_mut(position) {
                    let released = old.revision;
                    *old = entry;
                    self.revisions.release(released);
                }
                if let Some(slot) = self.pods.get_mut(position) {
                    *slot = pod;
                }
                Applied::Updated
            }
            None => {
                let position = self.pods.len();
                let (namespace, name) = key(&pod);
                self.positions
                    .entry(namespace.to_owned())
                    .or_default()
                    .insert(name.to_owned(), position);
                self.pods.push(pod);
                self.entries.push(entry);
                Applied::Inserted
            }
        }
    }

    /// Removes the pod `namespace/name` (a delete event) and returns it. The last pod takes its position.
    pub fn remove(&mut self, namespace: &str, name: &str) -> Option<Arc<Pod>> {
        let names = self.positions.get_mut(namespace)?;
        let position = names.remove(name)?;
        if names.is_empty() {
            self.positions.remove(namespace);
        }
        if position >= self.pods.len() {
            return None;
        }
        let pod = self.pods.swap_remove(position);
        let released = self.entries.swap_remove(position).revision;
        self.revisions.release(released);
        if let Some(moved) = self.pods.get(position) {
            let (namespace, name) = key(moved);
            if let Some(slot) = self
                .positions
                .get_mut(namespace)
                .and_then(|names| names.get_mut(name))
            {
                *slot = position;
            }
        }
        Some(pod)
    }

    /// Removes `pod` by its namespace and name (convenient for a delete event's last known object).
    pub fn remove_pod(&mut self, pod: &Pod) -> Option<Arc<Pod>> {
        let (namespace, name) = key(pod);
        self.remove(namespace, name)
    }

    /// Replaces the whole content with `pods` (a relist), keeping the ordering strategy.
    pub fn replace_all(&mut self, pods: impl IntoIterator<Item = Arc<Pod>>) {
        self.pods.clear();
        self.entries.clear();
        self.positions.clear();
        self.revisions = Revisions::default();
        for pod in pods {
            self.apply(pod);
        }
    }

    /// Makes the content exactly `pods` (a controller's current view of the CloneSet's pods, say from its
    /// owner index): applies each ([`PodFactsCache::apply`], so unchanged pods are skipped without being
    /// read) and removes the stored pods not among them. Returns how many pods were applied (inserted or
    /// updated) and removed.
    pub fn sync(&mut self, pods: impl IntoIterator<Item = Arc<Pod>>) -> Synced {
        let mut seen = vec![false; self.pods.len()];
        let mut synced = Synced::default();
        for pod in pods {
            let (namespace, name) = key(&pod);
            let position = self.position(namespace, name);
            let applied = self.apply_at(pod, position);
            if applied != Applied::Unchanged {
                synced.applied += 1;
            }
            let position = position.unwrap_or_else(|| self.pods.len().saturating_sub(1));
            if position >= seen.len() {
                seen.resize(position + 1, false);
            }
            if let Some(flag) = seen.get_mut(position) {
                *flag = true;
            }
        }
        let gone: Vec<(String, String)> = self
            .pods
            .iter()
            .zip(&seen)
            .filter(|(_, seen)| !**seen)
            .map(|(pod, _)| {
                let (namespace, name) = key(pod);
                (namespace.to_owned(), name.to_owned())
            })
            .collect();
        for (namespace, name) in gone {
            if self.remove(&namespace, &name).is_some() {
                synced.removed += 1;
            }
        }
        synced
    }

    /// Where the pod `namespace/name` is in [`PodFactsCache::pods`].
    fn position(&self, namespace: &str, name: &str) -> Option<usize> {
        self.positions
            .get(namespace)
            .and_then(|names| names.get(name))
            .copied()
    }

    /// The pods, in the order a plan's pod indexes refer to.
    #[must_use]
    pub fn pods(&self) -> &[Arc<Pod>] {
        &self.pods
    }

    /// The stored pod `namespace/name`.
    #[must_use]
    pub fn get(&self, namespace: &str, name: &str) -> Option<&Arc<Pod>> {
        self.pods.get(self.position(namespace, name)?)
    }

    /// How many pods are stored.
    #[must_use]
    pub fn len(&self) -> usize {
        self.pods.len()
    }

    /// Whether no pod is stored.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }

    fn read(&mut self, pod: &Pod) -> Entry {
        let (raw, revision) = RawFacts::read(pod);
        let (priority, scatter) = self.ordering.keys().keys(pod);
        Entry {
            raw,
            name: pod_view::name(pod).into(),
            name_head: facts::name_head(pod_view::name(pod)),
            revision: self.revisions.intern(revision),
            priority,
            scatter,
        }
    }

    /// The facts of the active pods for one plan (what `facts::collect` reads from raw pods).
    pub(crate) fn facts(
        &self,
        settings: &Settings<'_>,
        current: &str,
        update: &str,
        now: Timestamp,
    ) -> Facts<'_> {
        let revision_flags: Vec<u16> = self
            .revisions
            .names
            .iter()
            .map(|(name, _)| facts::revision_flags(name, current, update))
            .collect();
        let mut named: Vec<bool> = Vec::new();
        if !settings.pods_to_delete.is_empty() {
            named = vec![false; self.pods.len()];
            for name in settings.pods_to_delete {
                for names in self.positions.values() {
                    if let Some(flag) = names.get(name.as_str()).and_then(|&p| named.get_mut(p)) {
                        *flag = true;
                    }
                }
            }
        }
        let cached_keys = self.ordering.matches(settings);
        let order_keys = OrderKeys::of(settings.rolling);
        let mut pods = Vec::with_capacity(self.pods.len());
        let mut priorities = Vec::new();
        let mut next_available = None;
        for (index, (pod, entry)) in self.pods.iter().zip(&self.entries).enumerate() {
            let raw = &entry.raw;
            if !raw.is_active() {
                continue;
            }
            let revision = revision_flags
                .get(entry.revision as usize)
                .copied()
                .unwrap_or(0);
            let specified = raw.specified_label() || named.get(index).copied().unwrap_or(false);
            let (flags, available_at) = raw.derive(revision, specified, settings, now);
            facts::earliest(&mut next_available, available_at);
            let scatter = if cached_keys {
                entry.scatter
            } else {
                let (priority, scatter) = order_keys.keys(pod);
                priorities.push(priority);
                scatter
            };
            pods.push(facts::assemble(
                (pod, index, pods.len()),
                raw,
                (entry.revision, flags),
                scatter,
            ));
        }
        Facts {
            pods,
            keys: SortKeys::Cached(self, (!cached_keys).then_some(priorities)),
            revisions: self
                .revisions
                .names
                .iter()
                .map(|(name, _)| name.as_str())
                .collect(),
            next_available,
        }
    }

    /// The head of the name of the pod at `index` (`facts::name_head`).
    pub(crate) fn name_head(&self, index: usize) -> Option<u128> {
        self.entries.get(index).map(|entry| entry.name_head)
    }

    /// The cached priority key and the `ActivePods` key of the pod at `index`.
    pub(crate) fn sort_key(&self, index: usize) -> Option<(PriorityKey, ActiveKey<'_>)> {
        let entry = self.entries.get(index)?;
        Some((
            entry.priority,
            ActiveKey {
                name: &entry.name,
                ..entry.raw.active
            },
        ))
    }
}

impl fmt::Debug for PodFactsCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PodFactsCache")
            .field("pods", &self.pods.len())
            .field("revisions", &self.revisions.ids.len())
            .field("ordering", &self.ordering)
            .finish_non_exhaustive()
    }
}
