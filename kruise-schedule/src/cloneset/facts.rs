//! One pass over the pods: the compact facts every later step reads, so that no step walks the pods' maps
//! again (spec 3b "inputs").

use std::collections::HashSet;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::keys;

use super::settings::Settings;
use crate::pod_view::{self, Conditions, State};
use crate::sort::active::ActiveKey;
use crate::sort::priority::{Priority, PriorityKey};

/// Facts about one active pod.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PodFacts<'a> {
    /// The pod.
    pub(crate) pod: &'a Pod,
    /// Index into the input pods.
    pub(crate) index: usize,
    /// The lifecycle state.
    pub(crate) state: State,
    flags: u16,
    /// Which of the first 64 scatter terms the pod matches (bit `i` for term `i`).
    scatter: u64,
    /// The update-priority key (`PriorityKey::Equal` without a priority strategy).
    pub(crate) priority: PriorityKey,
    /// The `ActivePods` key.
    pub(crate) active: ActiveKey<'a>,
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

impl PodFacts<'_> {
    /// Whether every flag in `flags` is set.
    pub(crate) fn has(&self, flags: u16) -> bool {
        self.flags & flags == flags
    }

    /// Whether the pod matches scatter term `position` of `terms` (a missing label reads as `""`).
    pub(crate) fn matches_scatter(
        &self,
        position: usize,
        term: &kruise_api::scatter::UpdateScatterTerm,
    ) -> bool {
        if position < 64 {
            self.scatter & (1 << position) != 0
        } else {
            crate::sort::scatter::matches(self.pod, term)
        }
    }
}

/// The facts of all active pods, in input order, and what they add up to.
#[derive(Clone, Debug, Default)]
pub(crate) struct Facts<'a> {
    pub(crate) pods: Vec<PodFacts<'a>>,
    /// The earliest time a ready pod becomes available for `minReadySeconds` (for the requeue).
    pub(crate) next_available: Option<Timestamp>,
}

/// The labels the planner reads, found in one walk over the label map.
#[derive(Default)]
struct Labels<'a> {
    revision: &'a str,
    state: Option<&'a str>,
    specified_delete: bool,
    template_hash: bool,
}

fn read_labels(pod: &Pod) -> Labels<'_> {
    let mut out = Labels::default();
    for (key, value) in kruise_api::pod::labels(pod) {
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

/// Reads every active pod once.
pub(crate) fn collect<'a>(
    pods: &'a [Pod],
    settings: &Settings<'_>,
    current: &str,
    update: &str,
    now: Timestamp,
) -> Facts<'a> {
    let to_delete: HashSet<&str> = settings.pods_to_delete.iter().map(String::as_str).collect();
    let rolling = settings.rolling;
    let priority = rolling
        .and_then(|r| r.priority_strategy.as_ref())
        .map_or_else(Priority::none, Priority::new);
    let terms = rolling.map_or(&[][..], |r| r.scatter_strategy.as_slice());
    let mut facts = Facts {
        pods: Vec::with_capacity(pods.len()),
        next_available: None,
    };
    for (index, pod) in pods.iter().enumerate() {
        if !kruise_api::pod::is_active(pod) {
            continue;
        }
        let labels = read_labels(pod);
        let state = State::from_label(labels.state);
        let conditions = Conditions::of(pod);
        let running = pod_view::phase(pod) == "Running";
        let mut flags = 0;
        if kruise_api::pod::revision_matches(labels.revision, update) {
            flags |= UPDATED | UPDATED_FOR_SCALE;
        } else if settings.preparing_update_as_update && state == State::PreparingUpdate {
            flags |= UPDATED_FOR_SCALE;
        }
        if kruise_api::pod::revision_matches(labels.revision, current) {
            flags |= CURRENT;
        }
        if labels.specified_delete
            || (!to_delete.is_empty() && to_delete.contains(pod_view::name(pod)))
        {
            flags |= SPECIFIED;
        }
        if !labels.template_hash {
            flags |= NO_TEMPLATE_HASH;
        }
        let serving = running && conditions.in_place_ready;
        if serving && conditions.ready {
            flags |= UPDATE_READY;
            if state.is_normal() {
                flags |= READY;
            }
        }
        if serving && state.is_normal() && conditions.available(settings.min_ready_seconds, now) {
            flags |= AVAILABLE;
        } else if serving
            && state.is_normal()
            && let Some(at) = conditions.available_at(settings.min_ready_seconds, now)
        {
            facts.next_available = Some(facts.next_available.map_or(at, |t| t.min(at)));
        }
        let (grace, in_place_state) = read_annotations(pod);
        if grace {
            flags |= GRACE | NEEDS_REFRESH;
        } else if needs_refresh(pod, in_place_state, &conditions) {
            flags |= NEEDS_REFRESH;
        }
        let mut scatter = 0u64;
        for (position, term) in terms.iter().take(64).enumerate() {
            if crate::sort::scatter::matches(pod, term) {
                scatter |= 1 << position;
            }
        }
        facts.pods.push(PodFacts {
            pod,
            index,
            state,
            flags,
            scatter,
            priority: priority.key_of(pod),
            active: ActiveKey::with_conditions(pod, &conditions),
        });
    }
    facts
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
