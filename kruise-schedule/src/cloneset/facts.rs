//! One pass over the pods: the compact facts every later step reads, so that no step walks the pods' maps
//! again (spec 3b "inputs").

use std::collections::HashSet;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::keys;

use super::settings::Settings;
use crate::pod_view::{self, Conditions, State};

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
}

/// The facts of all active pods, in input order, and what they add up to.
#[derive(Clone, Debug, Default)]
pub(crate) struct Facts<'a> {
    pub(crate) pods: Vec<PodFacts<'a>>,
    /// The earliest time a ready pod becomes available for `minReadySeconds` (for the requeue).
    pub(crate) next_available: Option<Timestamp>,
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
    let mut facts = Facts {
        pods: Vec::with_capacity(pods.len()),
        next_available: None,
    };
    for (index, pod) in pods.iter().enumerate() {
        if !kruise_api::pod::is_active(pod) {
            continue;
        }
        let state = State::of(pod);
        let conditions = Conditions::of(pod);
        let running = pod_view::phase(pod) == "Running";
        let mut flags = 0;
        let revision = pod_view::label(pod, keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL);
        let revision = revision.unwrap_or("");
        if kruise_api::pod::revision_matches(revision, update) {
            flags |= UPDATED | UPDATED_FOR_SCALE;
        } else if settings.preparing_update_as_update && state == State::PreparingUpdate {
            flags |= UPDATED_FOR_SCALE;
        }
        if kruise_api::pod::revision_matches(revision, current) {
            flags |= CURRENT;
        }
        let labels = kruise_api::pod::labels(pod);
        if labels.contains_key(keys::cloneset::SPECIFIED_DELETE_LABEL)
            || (!to_delete.is_empty() && to_delete.contains(pod_view::name(pod)))
        {
            flags |= SPECIFIED;
        }
        if !labels.contains_key(keys::kubernetes::POD_TEMPLATE_HASH_LABEL) {
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
        if needs_refresh(pod, &conditions) {
            flags |= NEEDS_REFRESH;
        }
        if pod_view::annotation(pod, keys::inplace::GRACE_ANNOTATION).is_some_and(|g| !g.is_empty())
            || pod_view::annotation(pod, keys::inplace::LEGACY_GRACE_ANNOTATION)
                .is_some_and(|g| !g.is_empty())
        {
            flags |= GRACE;
        }
        facts.pods.push(PodFacts {
            pod,
            index,
            state,
            flags,
        });
    }
    facts
}

/// Whether `kruise_inplace::refresh` could write anything for this pod: a grace period, later container
/// batches, or an `InPlaceUpdateReady` condition that is not yet exactly `True` on a pod with the gate.
fn needs_refresh(pod: &Pod, conditions: &Conditions) -> bool {
    let grace = |key| pod_view::annotation(pod, key).is_some_and(|g: &str| !g.is_empty());
    if grace(keys::inplace::GRACE_ANNOTATION) || grace(keys::inplace::LEGACY_GRACE_ANNOTATION) {
        return true;
    }
    let state = pod_view::annotation(pod, keys::inplace::STATE_ANNOTATION)
        .or_else(|| pod_view::annotation(pod, keys::inplace::LEGACY_STATE_ANNOTATION));
    if state.is_some_and(|state| state.contains("\"next")) {
        return true;
    }
    !conditions.in_place_settled && kruise_inplace::condition::has_readiness_gate(pod)
}
