//! Cheap, allocation-free readings of a pod that the planners take once per pod: labels, readiness, availability
//! and lifecycle state, with the exact rules of upstream's `IsPodReady`, `IsPodAvailable` and revision matching.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::keys;
use kruise_api::pod::label;

/// A pod's lifecycle state label, read without allocating.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum State {
    /// No label, or an empty one.
    None,
    /// `PreparingNormal`.
    PreparingNormal,
    /// `Normal`.
    Normal,
    /// `PreparingUpdate`.
    PreparingUpdate,
    /// `Updating`.
    Updating,
    /// `Updated`.
    Updated,
    /// `PreparingDelete`.
    PreparingDelete,
    /// Any other value.
    Unknown,
}

impl State {
    /// The state of `pod`.
    #[must_use]
    pub fn of(pod: &Pod) -> Self {
        Self::from_label(label(pod, keys::lifecycle::STATE_LABEL))
    }

    /// The state a `lifecycle.apps.kruise.io/state` label value (or its absence) stands for.
    #[must_use]
    pub fn from_label(value: Option<&str>) -> Self {
        match value {
            None | Some("") => Self::None,
            Some("PreparingNormal") => Self::PreparingNormal,
            Some("Normal") => Self::Normal,
            Some("PreparingUpdate") => Self::PreparingUpdate,
            Some("Updating") => Self::Updating,
            Some("Updated") => Self::Updated,
            Some("PreparingDelete") => Self::PreparingDelete,
            Some(_) => Self::Unknown,
        }
    }

    /// The state as `kruise_lifecycle` reads it (`Some(None)`: no state), or `None` for
    /// [`State::Unknown`], whose label value this enum does not keep.
    #[must_use]
    pub fn lifecycle(self) -> Option<Option<kruise_api::lifecycle::LifecycleStateType>> {
        use kruise_api::lifecycle::LifecycleStateType as L;
        Some(match self {
            Self::None => None,
            Self::PreparingNormal => Some(L::PreparingNormal),
            Self::Normal => Some(L::Normal),
            Self::PreparingUpdate => Some(L::PreparingUpdate),
            Self::Updating => Some(L::Updating),
            Self::Updated => Some(L::Updated),
            Self::PreparingDelete => Some(L::PreparingDelete),
            Self::Unknown => return None,
        })
    }

    /// Absent or `Normal`: the only states in which a pod counts as available.
    #[must_use]
    pub fn is_normal(self) -> bool {
        matches!(self, Self::None | Self::Normal)
    }
}

/// The pod's name, or `""`.
#[must_use]
pub fn name(pod: &Pod) -> &str {
    pod.metadata.name.as_deref().unwrap_or("")
}

/// The pod's node, or `""` when unscheduled.
#[must_use]
pub fn node_name(pod: &Pod) -> &str {
    pod.spec
        .as_ref()
        .and_then(|spec| spec.node_name.as_deref())
        .unwrap_or("")
}

/// The pod's phase, or `""`.
#[must_use]
pub fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|status| status.phase.as_deref())
        .unwrap_or("")
}

/// What one scan of a pod's conditions says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Conditions {
    /// `Ready` is `True`.
    pub ready: bool,
    /// When `Ready` last changed (only read when ready; `None` is Go's zero time).
    pub ready_since: Option<Timestamp>,
    /// `InPlaceUpdateReady` is absent or `True`.
    pub in_place_ready: bool,
    /// `InPlaceUpdateReady` is exactly `True` with empty reason and message (what in-place refresh writes).
    pub in_place_settled: bool,
}

impl Conditions {
    /// Reads the conditions of `pod` in one pass.
    #[must_use]
    pub fn of(pod: &Pod) -> Self {
        let mut out = Self {
            in_place_ready: true,
            ..Self::default()
        };
        let conditions = pod
            .status
            .as_ref()
            .and_then(|status| status.conditions.as_deref())
            .unwrap_or_default();
        for condition in conditions {
            match condition.type_.as_str() {
                "Ready" => {
                    out.ready = condition.status == "True";
                    out.ready_since = condition.last_transition_time.as_ref().map(|time| time.0);
                }
                keys::inplace::INPLACE_UPDATE_READY => {
                    out.in_place_ready = condition.status == "True";
                    out.in_place_settled = out.in_place_ready
                        && condition.reason.as_deref().unwrap_or("").is_empty()
                        && condition.message.as_deref().unwrap_or("").is_empty();
                }
                _ => {}
            }
        }
        out
    }

    /// Ready, and ready for longer than `min_ready_seconds` at `now` (a zero transition time counts as long
    /// ago).
    #[must_use]
    pub fn available(&self, min_ready_seconds: i32, now: Timestamp) -> bool {
        if !self.ready {
            return false;
        }
        if min_ready_seconds <= 0 {
            return true;
        }
        self.ready_since.is_none_or(|since| {
            since
                .checked_add(SignedDuration::from_secs(i64::from(min_ready_seconds)))
                .is_ok_and(|until| until < now)
        })
    }

    /// When a ready pod becomes available for `min_ready_seconds` (`None` when it is not ready, already
    /// available, or `min_ready_seconds` is 0).
    #[must_use]
    pub fn available_at(&self, min_ready_seconds: i32, now: Timestamp) -> Option<Timestamp> {
        if !self.ready || min_ready_seconds <= 0 || self.available(min_ready_seconds, now) {
            return None;
        }
        let since = self.ready_since?;
        since
            .checked_add(SignedDuration::from_secs(i64::from(min_ready_seconds) + 1))
            .ok()
    }
}

/// Whether the pod's `controller-revision-hash` label denotes `revision` as CloneSet compares it: equal, or
/// equal in the last `-`-separated segment.
#[must_use]
pub fn cloneset_revision_matches(pod: &Pod, revision: &str) -> bool {
    let current = label(pod, keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL).unwrap_or("");
    kruise_api::pod::revision_matches(current, revision)
}

/// Whether the pod's `controller-revision-hash` label is exactly `revision` (Advanced StatefulSet).
#[must_use]
pub fn revision_is(pod: &Pod, revision: &str) -> bool {
    label(pod, keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL).unwrap_or("") == revision
}
