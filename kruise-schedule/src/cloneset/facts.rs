//! One pass over the pods: the compact facts every later step reads, so that no step walks the pods' maps
//! again (the inputs of upstream's `calculateDiffsWithExpectation`).
//!
//! A pod's facts come in two layers. [`RawFacts`] depend on the pod alone (labels, conditions, phase, …);
//! [`PodFacts`] add what depends on the CloneSet, its revisions and `now` (revision match, specified
//! deletion, `minReadySeconds` availability, the priority and scatter keys). A cold plan reads both from the
//! pods; a plan from a [`super::PodFactsCache`] keeps the raw layer between plans and derives the rest with
//! the same [`RawFacts::derive`], so both paths decide alike by construction.

use std::collections::HashSet;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::RollingUpdateCloneSetStrategy;
use kruise_api::keys;
use kruise_api::scatter::UpdateScatterTerm;
use kruise_api::update_priority::UpdatePriorityStrategy;

use super::cache::PodFactsCache;
use super::pod_source::ABSENT;
use super::settings::Settings;
use crate::pod_view::{self, Conditions, State};
use crate::sort::active::ActiveKey;
use crate::sort::priority::{Priority, PriorityKey};

/// Facts about one active pod.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PodFacts<'a> {
    /// The pod, for a plan of input pods (`None` for a plan from a cache, which reads a whole pod from its
    /// source only for the steps that act on it: `Ctx::pod`).
    pub(crate) pod: Option<&'a Pod>,
    /// Index into the input pods.
    pub(crate) index: usize,
    /// The `controller-revision-hash` label, as an index into [`Facts::revisions`].
    pub(crate) revision: u32,
    /// The lifecycle state.
    pub(crate) state: State,
    flags: u16,
    /// Position in [`Facts::pods`] (for [`Facts::sort_key`]).
    slot: u32,
    /// Which of the first 64 scatter terms the pod matches (bit `i` for term `i`).
    scatter: u64,
}

/// `controller-revision-hash` denotes the update revision (upstream `EqualToRevisionHash`).
pub(crate) const UPDATED: u16 = 1;
/// Counted as updated by the scale step (`IsPodUpdate`: also `PreparingUpdate` with the gate).
pub(crate) const UPDATED_FOR_SCALE: u16 = 1 << 1;
/// `controller-revision-hash` denotes the current revision.
pub(crate) const CURRENT: u16 = 1 << 2;
/// Specified for deletion (label or `scaleStrategy.podsToDelete`).
pub(crate) const SPECIFIED: u16 = 1 << 3;
/// Lifecycle-aware available with `minReadySeconds`.
pub(crate) const AVAILABLE: u16 = 1 << 4;
/// Lifecycle-aware available with 0 seconds (upstream `isPodReady`).
pub(crate) const READY: u16 = 1 << 5;
/// Running, `Ready` and `InPlaceUpdateReady` not false, lifecycle ignored (status `readyReplicas`).
pub(crate) const UPDATE_READY: u16 = 1 << 6;
/// Has a non-empty in-place grace annotation.
pub(crate) const GRACE: u16 = 1 << 7;
/// The in-place refresh may have something to write.
pub(crate) const NEEDS_REFRESH: u16 = 1 << 8;
/// Has no `pod-template-hash` label.
pub(crate) const NO_TEMPLATE_HASH: u16 = 1 << 9;

/// Raw bit: the pod is active (not finished, not being deleted).
const RAW_ACTIVE: u8 = 1;
/// Raw bit: `apps.kruise.io/specified-delete` is present.
const RAW_SPECIFIED_LABEL: u8 = 1 << 1;
/// Raw bit: `Running` and `InPlaceUpdateReady` not false.
const RAW_SERVING: u8 = 1 << 2;
/// Raw bit: a non-empty in-place grace annotation.
const RAW_GRACE: u8 = 1 << 3;
/// Raw bit: the in-place refresh may have something to write.
const RAW_NEEDS_REFRESH: u8 = 1 << 4;
/// Raw bit: no `pod-template-hash` label.
const RAW_NO_TEMPLATE_HASH: u8 = 1 << 5;

impl PodFacts<'_> {
    /// Whether every flag in `flags` is set.
    pub(crate) fn has(&self, flags: u16) -> bool {
        self.flags & flags == flags
    }

    /// Whether the pod matches scatter term `position` of `terms` (a missing label reads as `""`); `None`
    /// past the 64 terms kept as bits when the pod is not at hand (read it whole then).
    pub(crate) fn matches_scatter(
        &self,
        position: usize,
        term: &UpdateScatterTerm,
    ) -> Option<bool> {
        if position < 64 {
            Some(self.scatter & (1 << position) != 0)
        } else {
            self.pod.map(|pod| crate::sort::scatter::matches(pod, term))
        }
    }
}

/// The facts of all active pods, in input order, and what they add up to.
#[derive(Clone, Debug, Default)]
pub(crate) struct Facts<'a> {
    pub(crate) pods: Vec<PodFacts<'a>>,
    /// The pods' sort keys, kept apart from the facts every step walks.
    pub(crate) keys: SortKeys<'a>,
    /// The distinct `controller-revision-hash` labels ([`PodFacts::revision`] indexes it).
    pub(crate) revisions: Vec<&'a str>,
    /// The earliest time a ready pod becomes available for `minReadySeconds` (for the requeue).
    pub(crate) next_available: Option<Timestamp>,
}

/// Where the pods' sort keys (update priority, `ActivePods` key) are read from.
#[derive(Clone, Debug)]
pub(crate) enum SortKeys<'a> {
    /// Read from the pods, by slot.
    Read(Vec<(PriorityKey, ActiveKey<'a>)>),
    /// From the cache by pod index; with priorities by slot when the cache's are for another strategy.
    Cached(&'a PodFactsCache, Option<Vec<PriorityKey>>),
}

impl Default for SortKeys<'_> {
    fn default() -> Self {
        Self::Read(Vec::new())
    }
}

/// The first 16 bytes of `name`, big-endian and zero-padded: for names without NUL bytes (Kubernetes
/// names have none) heads order as the names do, and equal heads leave the order to the full names.
pub(crate) fn name_head(name: &str) -> u128 {
    let mut head = [0u8; 16];
    for (slot, byte) in head.iter_mut().zip(name.bytes()) {
        *slot = byte;
    }
    u128::from_be_bytes(head)
}

impl<'a> Facts<'a> {
    /// [`name_head`] of the pod's name, when it is at hand without reading the pod.
    pub(crate) fn known_name_head(&self, pod: &PodFacts<'a>) -> Option<u128> {
        match &self.keys {
            SortKeys::Read(_) => None,
            SortKeys::Cached(cache, _) => cache.name_head(pod.index),
        }
    }

    /// The update-priority key (`PriorityKey::Equal` without a priority strategy) and the `ActivePods` key
    /// of `pod`.
    pub(crate) fn sort_key(&self, pod: &PodFacts<'a>) -> (PriorityKey, ActiveKey<'a>) {
        let slot = pod.slot as usize;
        let found = match &self.keys {
            SortKeys::Read(keys) => keys.get(slot).copied(),
            SortKeys::Cached(cache, priorities) => {
                cache.sort_key(pod.index).map(|(cached, active)| {
                    let priority = priorities
                        .as_ref()
                        .and_then(|p| p.get(slot).copied())
                        .unwrap_or(cached);
                    (priority, active)
                })
            }
        };
        found.unwrap_or_else(|| {
            let whole: &'a Pod = pod.pod.unwrap_or(&ABSENT);
            let conditions = Conditions::of(whole);
            (
                PriorityKey::Equal,
                ActiveKey::with_conditions(whole, &conditions),
            )
        })
    }

    /// The pod's name.
    pub(crate) fn name(&self, pod: &PodFacts<'a>) -> &'a str {
        match (&self.keys, pod.pod) {
            (_, Some(whole)) => pod_view::name(whole),
            (SortKeys::Cached(cache, _), None) => cache.pod(pod.index).map_or("", |p| p.name),
            (SortKeys::Read(_), None) => "",
        }
    }

    /// The pod's `apps.kruise.io/cloneset-instance-id` label (`""` without one).
    pub(crate) fn instance_id(&self, pod: &PodFacts<'a>) -> &'a str {
        match (&self.keys, pod.pod) {
            (_, Some(whole)) => {
                kruise_api::pod::label(whole, keys::cloneset::INSTANCE_ID_LABEL).unwrap_or("")
            }
            (SortKeys::Cached(cache, _), None) => cache.instance_id(pod.index),
            (SortKeys::Read(_), None) => "",
        }
    }

    /// The pod's deletion cost (`controller.kubernetes.io/pod-deletion-cost`).
    pub(crate) fn deletion_cost(&self, pod: &PodFacts<'a>) -> i32 {
        match (&self.keys, pod.pod) {
            (_, Some(whole)) => crate::sort::deletion::deletion_cost(whole),
            (SortKeys::Cached(cache, _), None) => cache.deletion_cost(pod.index),
            (SortKeys::Read(_), None) => 0,
        }
    }

    /// The pod's `controller-revision-hash` label (`""` without one).
    pub(crate) fn revision(&self, pod: &PodFacts<'_>) -> &'a str {
        self.revisions
            .get(pod.revision as usize)
            .copied()
            .unwrap_or("")
    }
}

/// Interns the revision labels of one plan's pods: a short list scanned in order (pods carry few distinct
/// revisions), with a map once it grows.
struct RevisionIds<'a> {
    names: Vec<&'a str>,
    flags: Vec<u16>,
    index: std::collections::HashMap<&'a str, u32>,
}

/// Past this many distinct revisions, [`RevisionIds`] looks names up in its map.
const REVISION_SCAN: usize = 8;

impl<'a> RevisionIds<'a> {
    fn new() -> Self {
        Self {
            names: Vec::new(),
            flags: Vec::new(),
            index: std::collections::HashMap::new(),
        }
    }

    /// The id and revision flags of `name`.
    fn id(&mut self, name: &'a str, current: &str, update: &str) -> (u32, u16) {
        let found = if self.names.len() <= REVISION_SCAN {
            self.names.iter().position(|known| *known == name)
        } else {
            self.index.get(name).map(|&id| id as usize)
        };
        let id = found.unwrap_or_else(|| {
            let id = self.names.len();
            self.names.push(name);
            self.flags.push(revision_flags(name, current, update));
            self.index
                .insert(name, u32::try_from(id).unwrap_or(u32::MAX));
            id
        });
        let flags = self.flags.get(id).copied().unwrap_or(0);
        (u32::try_from(id).unwrap_or(u32::MAX), flags)
    }
}

/// What a pod alone says, independent of any CloneSet setting and of `now`: the layer a
/// [`super::PodFactsCache`] keeps.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawFacts {
    /// The lifecycle state.
    pub(crate) state: State,
    bits: u8,
    /// The `ActivePods` key without the name (the name is the pod's, filled in when planning).
    pub(crate) active: ActiveKey<'static>,
}

/// The labels the planner reads, found in one walk over the label map.
#[derive(Default)]
struct Labels<'a> {
    revision: &'a str,
    state: Option<&'a str>,
    specified_delete: bool,
    template_hash: bool,
}

/// The most label keys the priority and scatter strategies may read for their values to be taken in the
/// same walk as the planner's own labels (more: they are looked up in the map).
const WALKED_KEYS: usize = 8;

fn read_labels<'p>(
    pod: &'p Pod,
    wanted: &[&str],
    values: &mut [Option<&'p str>; WALKED_KEYS],
) -> Labels<'p> {
    let mut out = Labels::default();
    for (key, value) in kruise_api::pod::labels(pod) {
        for (slot, wanted) in values.iter_mut().zip(wanted) {
            if key == wanted {
                *slot = Some(value.as_str());
            }
        }
        match key.as_str() {
            keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL => out.revision = value,
            keys::lifecycle::STATE_LABEL => out.state = Some(value),
            keys::cloneset::SPECIFIED_DELETE_LABEL => out.specified_delete = true,
            keys::kubernetes::POD_TEMPLATE_HASH_LABEL => out.template_hash = true,
            _ => {}
        }
    }
    out
}

/// The in-place annotations the planner reads: whether a grace period is pending, and the state.
fn read_annotations(pod: &Pod) -> (bool, Option<&str>) {
    let (mut grace, mut state, mut legacy_state) = (false, None, None);
    for (key, value) in pod.metadata.annotations.iter().flatten() {
        match key.as_str() {
            keys::inplace::GRACE_ANNOTATION | keys::inplace::LEGACY_GRACE_ANNOTATION => {
                grace |= !value.is_empty();
            }
            keys::inplace::STATE_ANNOTATION => state = Some(value.as_str()),
            keys::inplace::LEGACY_STATE_ANNOTATION => legacy_state = Some(value.as_str()),
            _ => {}
        }
    }
    (grace, state.or(legacy_state))
}

impl RawFacts {
    /// Reads `pod` once; also returns its `controller-revision-hash` label (`""` without it).
    pub(crate) fn read(pod: &Pod) -> (Self, &str) {
        Self::read_with(pod, &[], &mut [None; WALKED_KEYS])
    }

    /// [`RawFacts::read`], also setting `values[i]` to the value of label `wanted[i]` (the first
    /// [`WALKED_KEYS`] of `wanted`), in the same walk.
    fn read_with<'p>(
        pod: &'p Pod,
        wanted: &[&str],
        values: &mut [Option<&'p str>; WALKED_KEYS],
    ) -> (Self, &'p str) {
        let labels = read_labels(pod, wanted, values);
        let conditions = Conditions::of(pod);
        let mut bits = 0;
        if kruise_api::pod::is_active(pod) {
            bits |= RAW_ACTIVE;
        }
        if labels.specified_delete {
            bits |= RAW_SPECIFIED_LABEL;
        }
        if !labels.template_hash {
            bits |= RAW_NO_TEMPLATE_HASH;
        }
        if pod_view::phase(pod) == "Running" && conditions.in_place_ready {
            bits |= RAW_SERVING;
        }
        let (grace, in_place_state) = read_annotations(pod);
        if grace {
            bits |= RAW_GRACE | RAW_NEEDS_REFRESH;
        } else if needs_refresh(pod, in_place_state, &conditions) {
            bits |= RAW_NEEDS_REFRESH;
        }
        let key = ActiveKey::with_conditions(pod, &conditions);
        let raw = Self {
            state: State::from_label(labels.state),
            bits,
            active: ActiveKey {
                scheduled: key.scheduled,
                phase: key.phase,
                ready: key.ready,
                ready_since: key.ready_since,
                restarts: key.restarts,
                created: key.created,
                name: "",
            },
        };
        (raw, labels.revision)
    }

    /// Whether the pod is active (the planner ignores the others).
    pub(crate) fn is_active(&self) -> bool {
        self.bits & RAW_ACTIVE != 0
    }

    /// Whether the `apps.kruise.io/specified-delete` label is present.
    pub(crate) fn specified_label(&self) -> bool {
        self.bits & RAW_SPECIFIED_LABEL != 0
    }

    /// The planner's flags for this pod: `revision` holds the revision flags ([`revision_flags`]),
    /// `specified` whether the pod is specified for deletion; also when a ready pod becomes available, if it
    /// is not yet.
    pub(crate) fn derive(
        &self,
        revision: u16,
        specified: bool,
        settings: &Settings<'_>,
        now: Timestamp,
    ) -> (u16, Option<Timestamp>) {
        let state = self.state;
        let mut flags = revision;
        if flags & UPDATED == 0
            && settings.preparing_update_as_update
            && state == State::PreparingUpdate
        {
            flags |= UPDATED_FOR_SCALE;
        }
        if specified {
            flags |= SPECIFIED;
        }
        if self.bits & RAW_NO_TEMPLATE_HASH != 0 {
            flags |= NO_TEMPLATE_HASH;
        }
        if self.bits & RAW_GRACE != 0 {
            flags |= GRACE;
        }
        if self.bits & RAW_NEEDS_REFRESH != 0 {
            flags |= NEEDS_REFRESH;
        }
        let mut next_available = None;
        if self.bits & RAW_SERVING != 0 {
            let ready = self.active.ready;
            if ready {
                flags |= UPDATE_READY;
                if state.is_normal() {
                    flags |= READY;
                }
            }
            if state.is_normal() {
                let conditions = Conditions {
                    ready,
                    ready_since: self.active.ready_since.0,
                    in_place_ready: true,
                    in_place_settled: false,
                };
                if conditions.available(settings.min_ready_seconds, now) {
                    flags |= AVAILABLE;
                } else {
                    next_available = conditions.available_at(settings.min_ready_seconds, now);
                }
            }
        }
        (flags, next_available)
    }
}

/// `UPDATED | UPDATED_FOR_SCALE` when `revision` denotes `update`, `CURRENT` when it denotes `current`.
pub(crate) fn revision_flags(revision: &str, current: &str, update: &str) -> u16 {
    let mut flags = 0;
    if kruise_api::pod::revision_matches(revision, update) {
        flags |= UPDATED | UPDATED_FOR_SCALE;
    }
    if kruise_api::pod::revision_matches(revision, current) {
        flags |= CURRENT;
    }
    flags
}

/// The keys a priority strategy and scatter terms give pods.
pub(crate) struct OrderKeys<'a> {
    priority: Priority<'a>,
    terms: &'a [UpdateScatterTerm],
    /// The label keys they read, when there are at most [`WALKED_KEYS`] (`None`: more).
    walked: Option<Vec<&'a str>>,
}

impl<'a> OrderKeys<'a> {
    /// The keys of the rolling strategy (none without one).
    pub(crate) fn of(rolling: Option<&'a RollingUpdateCloneSetStrategy>) -> Self {
        Self::from_parts(
            rolling.and_then(|r| r.priority_strategy.as_ref()),
            rolling.map_or(&[][..], |r| r.scatter_strategy.as_slice()),
        )
    }

    /// The keys of a priority strategy (if any) and scatter terms.
    pub(crate) fn from_parts(
        priority: Option<&'a UpdatePriorityStrategy>,
        terms: &'a [UpdateScatterTerm],
    ) -> Self {
        let priority = priority.map_or_else(Priority::none, Priority::new);
        let mut keys = priority.label_keys();
        keys.extend(terms.iter().take(64).map(|term| term.key.as_str()));
        keys.sort_unstable();
        keys.dedup();
        Self {
            priority,
            terms,
            walked: (keys.len() <= WALKED_KEYS).then_some(keys),
        }
    }

    /// The label keys to read in the walk over the labels (none when they are looked up in the map).
    fn walked(&self) -> &[&'a str] {
        self.walked.as_deref().unwrap_or_default()
    }

    /// [`OrderKeys::keys`] from the values of [`OrderKeys::walked`] read in the walk.
    fn keys_from(&self, pod: &Pod, values: &[Option<&str>; WALKED_KEYS]) -> (PriorityKey, u64) {
        let Some(walked) = &self.walked else {
            return self.keys(pod);
        };
        let get = |key: &str| {
            walked
                .iter()
                .position(|wanted| *wanted == key)
                .and_then(|position| values.get(position).copied().flatten())
        };
        let mut scatter = 0u64;
        for (position, term) in self.terms.iter().take(64).enumerate() {
            if get(&term.key).unwrap_or("") == term.value {
                scatter |= 1 << position;
            }
        }
        (self.priority.key_with(get), scatter)
    }

    /// The priority key and the scatter bits of `pod`.
    pub(crate) fn keys(&self, pod: &Pod) -> (PriorityKey, u64) {
        let mut scatter = 0u64;
        for (position, term) in self.terms.iter().take(64).enumerate() {
            if crate::sort::scatter::matches(pod, term) {
                scatter |= 1 << position;
            }
        }
        (self.priority.key_of(pod), scatter)
    }
}

/// One pod's facts from its raw facts and the derived values; `slot` is its position in the facts.
pub(crate) fn assemble<'a>(
    (pod, index, slot): (Option<&'a Pod>, usize, usize),
    raw: &RawFacts,
    (revision, flags): (u32, u16),
    scatter: u64,
) -> PodFacts<'a> {
    PodFacts {
        pod,
        index,
        revision,
        state: raw.state,
        flags,
        slot: u32::try_from(slot).unwrap_or(u32::MAX),
        scatter,
    }
}

/// Keeps the earliest of the times a pod becomes available.
pub(crate) fn earliest(current: &mut Option<Timestamp>, at: Option<Timestamp>) {
    if let Some(at) = at {
        *current = Some(current.map_or(at, |t| t.min(at)));
    }
}

/// Reads every active pod once.
pub(crate) fn collect<'a>(
    pods: &'a [Pod],
    settings: &Settings<'_>,
    current: &str,
    update: &str,
    now: Timestamp,
) -> Facts<'a> {
    let to_delete: HashSet<&str> = settings.pods_to_delete.iter().map(String::as_str).collect();
    let order_keys = OrderKeys::of(settings.rolling);
    let mut out = Vec::with_capacity(pods.len());
    let mut keys = Vec::with_capacity(pods.len());
    let mut next_available = None;
    let mut revisions = RevisionIds::new();
    for (index, pod) in pods.iter().enumerate() {
        if !kruise_api::pod::is_active(pod) {
            continue;
        }
        let mut values = [None; WALKED_KEYS];
        let (raw, revision) = RawFacts::read_with(pod, order_keys.walked(), &mut values);
        let name = pod_view::name(pod);
        let specified =
            raw.specified_label() || (!to_delete.is_empty() && to_delete.contains(name));
        let (revision, revision_flags) = revisions.id(revision, current, update);
        let (flags, available_at) = raw.derive(revision_flags, specified, settings, now);
        earliest(&mut next_available, available_at);
        let (priority, scatter) = order_keys.keys_from(pod, &values);
        out.push(assemble(
            (Some(pod), index, keys.len()),
            &raw,
            (revision, flags),
            scatter,
        ));
        keys.push((priority, ActiveKey { name, ..raw.active }));
    }
    Facts {
        pods: out,
        keys: SortKeys::Read(keys),
        revisions: revisions.names,
        next_available,
    }
}

/// Whether `kruise_inplace::refresh` could write anything for this pod without a grace period: later
/// container batches, or an `InPlaceUpdateReady` condition that is not yet exactly `True` on a pod with the
/// gate.
fn needs_refresh(pod: &Pod, in_place_state: Option<&str>, conditions: &Conditions) -> bool {
    if in_place_state.is_some_and(|state| state.contains("\"next")) {
        return true;
    }
    !conditions.in_place_settled && kruise_inplace::condition::has_readiness_gate(pod)
}
