//! [`PodFactsCache`]: the per-pod facts of a CloneSet's pods kept between reconciles, so that a plan does not
//! re-read every pod (the inputs of upstream's `calculateDiffsWithExpectation`; the planner's incremental path).

use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{CloneSet, CloneSetUpdateStrategyType};
use kruise_api::scatter::UpdateScatterTerm;
use kruise_api::update_priority::UpdatePriorityStrategy;

use super::facts::{self, Facts, OrderKeys, RawFacts, SortKeys};
use super::pod_source::{Loader, PodSource};
use super::settings::Settings;
use crate::pod_view;
use crate::sort::active::ActiveKey;
use crate::sort::priority::PriorityKey;

/// The facts of one CloneSet's pods, kept beside a controller's pod store and updated per pod event, so that
/// [`super::plan`] with [`super::PlanInput::from_cache`] derives each plan from compact facts instead of
/// re-reading every pod.
///
/// * It holds no pod: per pod it keeps the namespace, name and `resourceVersion` it read, in a dense list
///   ([`PodFactsCache::pod`] by position, which is what the plan's pod indexes refer to), and only what the
///   pod alone says: its revision (interned), lifecycle state, phase, `Ready` / `InPlaceUpdateReady`
///   status and `Ready` transition time, deletion, the `specified-delete` label, `pod-template-hash`
///   presence, the in-place grace and batch summary, the instance id, the deletion cost and the
///   `ActivePods` key. Everything that depends on the CloneSet, its revisions or `now` (revision match,
///   `podsToDelete`, `minReadySeconds` availability) is applied when planning.
/// * A plan reads the whole pods of the steps that act on them (in-place updates, lifecycle changes,
///   deletions; the pods ranked for a scale-down) from the [`PodSource`] given to
///   [`super::PlanInput::from_cache`], at the cached `resourceVersion`.
/// * The priority and scatter keys depend on the CloneSet's `priorityStrategy` and `scatterStrategy`. The
///   cache computes them for the strategy last given to [`PodFactsCache::set_ordering`] and remembers that
///   strategy; a plan whose CloneSet has a different one reads those keys from the whole pods instead
///   (always correct, only slower), until `set_ordering` is called with the new CloneSet.
///
/// [`PodFactsCache::apply`] skips a pod whose `resourceVersion` equals the stored one.
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use kruise_schedule::cloneset::{Applied, PodFactsCache};
///
/// let pod: Pod = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "web-a", "namespace": "default", "resourceVersion": "7",
///                  "labels": {"controller-revision-hash": "web-1"}},
/// })).unwrap();
/// let mut cache = PodFactsCache::new();
/// assert_eq!(cache.apply(&pod), Applied::Inserted);
/// assert_eq!(cache.apply(&pod), Applied::Unchanged);
/// assert!(cache.is_current("default", "web-a", "7"));
/// assert_eq!(cache.pod(0).map(|p| p.name), Some("web-a"));
/// assert!(cache.remove("default", "web-a"));
/// assert!(cache.is_empty());
/// ```
#[derive(Clone, Default)]
pub struct PodFactsCache {
    entries: Vec<Entry>,
    /// Position in `entries` by namespace, then name.
    positions: HashMap<String, HashMap<String, usize>>,
    revisions: Interned,
    namespaces: Interned,
    ordering: Ordering,
}

/// Which version of which pod a [`PodFactsCache`] read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PodVersion<'a> {
    /// The namespace (`""` without one).
    pub namespace: &'a str,
    /// The name.
    pub name: &'a str,
    /// The `resourceVersion` (`""` without one).
    pub resource_version: &'a str,
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
    /// The pod's name.
    name: Box<str>,
    /// `facts::name_head` of the name.
    name_head: u128,
    /// The interned namespace.
    namespace: u32,
    /// The `resourceVersion` read (`""` without one).
    version: Box<str>,
    /// The interned `controller-revision-hash`.
    revision: u32,
    /// The `apps.kruise.io/cloneset-instance-id` label (`""` without one).
    instance_id: Box<str>,
    /// The `controller.kubernetes.io/pod-deletion-cost` annotation as the scale-down ranking reads it.
    deletion_cost: i32,
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

/// Interned strings (revision names, namespaces) with reference counts.
#[derive(Clone, Debug, Default)]
struct Interned {
    names: Vec<(String, usize)>,
    ids: HashMap<String, u32>,
    free: Vec<u32>,
}

impl Interned {
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

    /// The string `id` stands for (`""` when unknown).
    fn name(&self, id: u32) -> &str {
        self.names.get(id as usize).map_or("", |(name, _)| name)
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
    /// cached keys were computed for, recomputes every pod's keys from its whole pod, read from `source`
    /// (a pod the source no longer holds at the cached version is dropped, so that the next
    /// [`PodFactsCache::sync`] reads its new version). Returns whether it did. Call it before planning when
    /// the CloneSet may have changed; a plan never depends on it for correctness, only for speed.
    pub fn set_ordering(&mut self, cloneset: &CloneSet, source: &dyn PodSource) -> bool {
        let ordering = Ordering::of(cloneset);
        if ordering == self.ordering {
            return false;
        }
        self.ordering = ordering;
        let keys = self.ordering.keys();
        let mut gone = Vec::new();
        for (index, entry) in self.entries.iter_mut().enumerate() {
            let namespace = self.namespaces.name(entry.namespace);
            match source.pod_at(namespace, &entry.name, &entry.version) {
                Some(pod) => (entry.priority, entry.scatter) = keys.keys(&pod),
                None => gone.push(index),
            }
        }
        for index in gone.into_iter().rev() {
            if let Some(pod) = self.pod(index) {
                let (namespace, name) = (pod.namespace.to_owned(), pod.name.to_owned());
                self.remove(&namespace, &name);
            }
        }
        true
    }

    /// Inserts the facts of `pod`, or replaces those of the stored pod of the same namespace and name. A
    /// pod whose `resourceVersion` is set and equal to the stored one's is skipped ([`Applied::Unchanged`]).
    pub fn apply(&mut self, pod: impl Borrow<Pod>) -> Applied {
        let pod = pod.borrow();
        let (namespace, name) = key(pod);
        let position = self.position(namespace, name);
        self.apply_at(pod, position)
    }

    /// [`PodFactsCache::apply`] for a pod whose position (`None`: not stored) was already looked up.
    fn apply_at(&mut self, pod: &Pod, position: Option<usize>) -> Applied {
        let version = pod.metadata.resource_version.as_deref().unwrap_or("");
        if let Some(position) = position
            && let Some(stored) = self.entries.get(position)
            && !version.is_empty()
            && *stored.version == *version
        {
            return Applied::Unchanged;
        }
        let entry = self.read(pod);
        match position {
            Some(position) => {
                if let Some(old) = self.entries.get_mut(position) {
                    let old = std::mem::replace(old, entry);
                    self.release(&old);
                }
                Applied::Updated
            }
            None => {
                let position = self.entries.len();
                let (namespace, name) = key(pod);
                self.positions
                    .entry(namespace.to_owned())
                    .or_default()
                    .insert(name.to_owned(), position);
                self.entries.push(entry);
                Applied::Inserted
            }
        }
    }

    fn release(&mut self, entry: &Entry) {
        self.revisions.release(entry.revision);
        self.namespaces.release(entry.namespace);
    }

    /// Removes the pod `namespace/name` (a delete event); returns whether it was stored. The last pod takes
    /// its position.
    pub fn remove(&mut self, namespace: &str, name: &str) -> bool {
        let Some(names) = self.positions.get_mut(namespace) else {
            return false;
        };
        let Some(position) = names.remove(name) else {
            return false;
        };
        if names.is_empty() {
            self.positions.remove(namespace);
        }
        if position >= self.entries.len() {
            return false;
        }
        let removed = self.entries.swap_remove(position);
        self.release(&removed);
        if let Some(moved) = self.entries.get(position) {
            let namespace = self.namespaces.name(moved.namespace);
            if let Some(slot) = self
                .positions
                .get_mut(namespace)
                .and_then(|names| names.get_mut(&*moved.name))
            {
                *slot = position;
            }
        }
        true
    }

    /// Removes `pod` by its namespace and name (convenient for a delete event's last known object).
    pub fn remove_pod(&mut self, pod: &Pod) -> bool {
        let (namespace, name) = key(pod);
        self.remove(namespace, name)
    }

    /// Replaces the whole content with the facts of `pods` (a relist), keeping the ordering strategy.
    pub fn replace_all<P: Borrow<Pod>>(&mut self, pods: impl IntoIterator<Item = P>) {
        self.entries.clear();
        self.positions.clear();
        self.revisions = Interned::default();
        self.namespaces = Interned::default();
        for pod in pods {
            self.apply(pod);
        }
    }

    /// Makes the content exactly `pods` (a controller's current view of the CloneSet's pods): applies each
    /// ([`PodFactsCache::apply`], so unchanged pods are skipped without being read) and removes the stored
    /// pods not among them. Returns how many pods were applied (inserted or updated) and removed.
    pub fn sync<P: Borrow<Pod>>(&mut self, pods: impl IntoIterator<Item = P>) -> Synced {
        let mut synced = Synced::default();
        let mut seen = vec![false; self.entries.len()];
        for pod in pods {
            let pod = pod.borrow();
            let (namespace, name) = key(pod);
            let position = self.position(namespace, name);
            if self.apply_at(pod, position) != Applied::Unchanged {
                synced.applied += 1;
            }
            let position = position.unwrap_or_else(|| self.entries.len().saturating_sub(1));
            mark(&mut seen, position);
        }
        synced.removed = self.remove_unseen(&seen);
        synced
    }

    /// [`PodFactsCache::sync`] from the versions of the pods only (as a pod store's index lists them),
    /// reading a whole pod (`read`, called once per listed pod whose version is not the stored one, in list
    /// order) only when its version changed. A pod `read` does not find any more is treated as gone.
    pub fn sync_with<'v>(
        &mut self,
        versions: impl IntoIterator<Item = PodVersion<'v>>,
        mut read: impl FnMut(&PodVersion<'v>) -> Option<Arc<Pod>>,
    ) -> Synced {
        let versions: Vec<PodVersion<'v>> = versions.into_iter().collect();
        let mut synced = Synced::default();
        let mut seen = vec![false; self.entries.len()];
        for version in &versions {
            let position = self.position(version.namespace, version.name);
            if let Some(position) = position
                && self.is_current(version.namespace, version.name, version.resource_version)
            {
                mark(&mut seen, position);
                continue;
            }
            let Some(pod) = read(version) else {
                continue;
            };
            if self.apply_at(&pod, position) != Applied::Unchanged {
                synced.applied += 1;
            }
            let position = position.unwrap_or_else(|| self.entries.len().saturating_sub(1));
            mark(&mut seen, position);
        }
        synced.removed = self.remove_unseen(&seen);
        synced
    }

    /// Removes the stored pods whose position is not marked in `seen`; returns how many.
    fn remove_unseen(&mut self, seen: &[bool]) -> usize {
        let gone: Vec<(String, String)> = self
            .entries
            .iter()
            .enumerate()
            .filter(|(position, _)| !seen.get(*position).copied().unwrap_or(false))
            .map(|(_, entry)| {
                (
                    self.namespaces.name(entry.namespace).to_owned(),
                    entry.name.to_string(),
                )
            })
            .collect();
        gone.iter()
            .filter(|(namespace, name)| self.remove(namespace, name))
            .count()
    }

    /// Where the pod `namespace/name` is (the plan's pod index), if stored.
    #[must_use]
    pub fn position(&self, namespace: &str, name: &str) -> Option<usize> {
        self.positions
            .get(namespace)
            .and_then(|names| names.get(name))
            .copied()
    }

    /// Whether the pod `namespace/name` is stored at `resource_version` (a non-empty one).
    #[must_use]
    pub fn is_current(&self, namespace: &str, name: &str, resource_version: &str) -> bool {
        !resource_version.is_empty()
            && self
                .position(namespace, name)
                .and_then(|position| self.entries.get(position))
                .is_some_and(|entry| *entry.version == *resource_version)
    }

    /// The pod at `index` (a plan's pod index): which version of which pod was read.
    #[must_use]
    pub fn pod(&self, index: usize) -> Option<PodVersion<'_>> {
        self.entries.get(index).map(|entry| PodVersion {
            namespace: self.namespaces.name(entry.namespace),
            name: &entry.name,
            resource_version: &entry.version,
        })
    }

    /// The pods, in the order a plan's pod indexes refer to.
    pub fn pods(&self) -> impl Iterator<Item = PodVersion<'_>> {
        (0..self.entries.len()).filter_map(|index| self.pod(index))
    }

    /// The `controller-revision-hash` label of the pod at `index` (`""` without one).
    #[must_use]
    pub fn revision(&self, index: usize) -> Option<&str> {
        self.entries
            .get(index)
            .map(|entry| self.revisions.name(entry.revision))
    }

    /// How many pods are stored.
    #[must_use]
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no pod is stored.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn read(&mut self, pod: &Pod) -> Entry {
        let (raw, revision) = RawFacts::read(pod);
        let (priority, scatter) = self.ordering.keys().keys(pod);
        let name = pod_view::name(pod);
        Entry {
            raw,
            name: name.into(),
            name_head: facts::name_head(name),
            namespace: self.namespaces.intern(key(pod).0),
            version: pod
                .metadata
                .resource_version
                .as_deref()
                .unwrap_or("")
                .into(),
            revision: self.revisions.intern(revision),
            instance_id: kruise_api::pod::label(pod, kruise_api::keys::cloneset::INSTANCE_ID_LABEL)
                .unwrap_or("")
                .into(),
            deletion_cost: crate::sort::deletion::deletion_cost(pod),
            priority,
            scatter,
        }
    }

    /// The facts of the active pods for one plan (what `facts::collect` reads from raw pods); the priority
    /// and scatter keys of a strategy other than the cached one are read from the whole pods `loader` reads.
    pub(crate) fn facts<'a>(
        &'a self,
        settings: &Settings<'_>,
        (current, update): (&str, &str),
        now: Timestamp,
        loader: &Loader<'_>,
    ) -> Facts<'a> {
        let revision_flags: Vec<u16> = self
            .revisions
            .names
            .iter()
            .map(|(name, _)| facts::revision_flags(name, current, update))
            .collect();
        let mut named: Vec<bool> = Vec::new();
        if !settings.pods_to_delete.is_empty() {
            named = vec![false; self.entries.len()];
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
        let mut pods = Vec::with_capacity(self.entries.len());
        let mut priorities = Vec::new();
        let mut next_available = None;
        for (index, entry) in self.entries.iter().enumerate() {
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
                let (priority, scatter) = order_keys.keys(&loader.load(index));
                priorities.push(priority);
                scatter
            };
            pods.push(facts::assemble(
                (None, index, pods.len()),
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

    /// The instance id label of the pod at `index` (`""` without one).
    pub(crate) fn instance_id(&self, index: usize) -> &str {
        self.entries
            .get(index)
            .map_or("", |entry| &entry.instance_id)
    }

    /// The deletion cost of the pod at `index`.
    pub(crate) fn deletion_cost(&self, index: usize) -> i32 {
        self.entries
            .get(index)
            .map_or(0, |entry| entry.deletion_cost)
    }
}

/// Marks `position` in `seen`, growing it as needed.
fn mark(seen: &mut Vec<bool>, position: usize) {
    if position >= seen.len() {
        seen.resize(position + 1, false);
    }
    if let Some(flag) = seen.get_mut(position) {
        *flag = true;
    }
}

impl fmt::Debug for PodFactsCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PodFactsCache")
            .field("pods", &self.entries.len())
            .field("revisions", &self.revisions.ids.len())
            .field("ordering", &self.ordering)
            .finish_non_exhaustive()
    }
}
