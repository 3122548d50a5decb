//! What a lifecycle decision returns: the state before and after, the pod changes, and for the two
//! decisions that gate an action (updating, deleting) whether to go ahead.

use k8s_openapi::api::core::v1::Pod;
use kruise_api::lifecycle::LifecycleStateType;

use crate::change::PodChange;
use crate::state::state;

/// One step of the state machine for one pod.
///
/// `change` holds exactly what to write: the state label and timestamp when the state changes, the
/// `KruisePodReady`/`Ready` conditions when a not-ready entry is added or removed, and for
/// `Updated → PreparingUpdate` the inPlaceUpdate hook's labels and finalizers. An empty change means there is
/// nothing to write.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transition {
    /// The state before (`None`: no state label).
    pub from: Option<LifecycleStateType>,
    /// The state after; equal to `from` when the state does not change.
    pub to: Option<LifecycleStateType>,
    /// What to write to the pod (send `change.status` before `change.metadata`).
    pub change: PodChange,
}

impl Transition {
    /// The pod stays as it is: nothing to write.
    #[must_use]
    pub fn stay(pod: &Pod) -> Self {
        let current = state(pod);
        Self {
            from: current.clone(),
            to: current,
            change: PodChange::default(),
        }
    }

    /// Nothing to write.
    #[must_use]
    pub fn is_noop(&self) -> bool {
        self.change.is_empty()
    }

    /// Whether the lifecycle state changes.
    #[must_use]
    pub fn changes_state(&self) -> bool {
        self.from != self.to
    }

    /// A copy of `pod` with the change written into it.
    #[must_use]
    pub fn apply(&self, pod: &Pod) -> Pod {
        self.change.apply(pod)
    }
}

/// The answer to "this pod should be updated in place now".
#[derive(Clone, Debug, PartialEq)]
pub enum UpdateDecision {
    /// Do not update: the inPlaceUpdate hook holds the pod. The transition moves it to (or keeps it in)
    /// `PreparingUpdate`; it may be a no-op when the pod is already held there.
    Hold(Transition),
    /// Update in place now. The transition (metadata only: `Updating` and its timestamp, or nothing) must be
    /// written in the same pod update as the in-place patch, as upstream's `AdditionalFuncs` do.
    UpdateNow(Transition),
}

impl UpdateDecision {
    /// The transition, whichever the decision.
    #[must_use]
    pub fn transition(&self) -> &Transition {
        match self {
            Self::Hold(transition) | Self::UpdateNow(transition) => transition,
        }
    }

    /// Whether the pod may be updated now.
    #[must_use]
    pub fn is_update_now(&self) -> bool {
        matches!(self, Self::UpdateNow(_))
    }
}

/// [`UpdateDecision`] before the "update now" transition is built (see
/// [`Workload::update_gate_in`](crate::Workload::update_gate_in)): planners that update many pods at once
/// build that transition once per lifecycle state with
/// [`Workload::updating_transition`](crate::Workload::updating_transition) and share it.
#[derive(Clone, Debug, PartialEq)]
pub enum UpdateGate {
    /// Do not update, as [`UpdateDecision::Hold`].
    Hold(Transition),
    /// Update in place now, writing [`Workload::updating_transition`](crate::Workload::updating_transition)
    /// of the pod's state with the patch.
    Proceed,
}

/// The answer to "this pod should be deleted" (scale-in, specified delete, recreate update, ASTS condemn).
#[derive(Clone, Debug, PartialEq)]
pub enum DeleteDecision {
    /// Do not delete: the preDelete hook holds the pod. The transition moves it to (or keeps it in)
    /// `PreparingDelete`, adding the `preDeleteHook` not-ready entry when the hook asks for it.
    Hold(Transition),
    /// Delete the pod now.
    Delete,
}

impl DeleteDecision {
    /// Whether the pod may be deleted now.
    #[must_use]
    pub fn is_delete(&self) -> bool {
        matches!(self, Self::Delete)
    }
}

/// What the caller knows about a pod at refresh time (every reconcile, before planning updates).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RefreshInput {
    /// The pod's in-place update has completed (upstream `CheckPodUpdateCompleted`; `kruise-inplace`
    /// computes it). Only read in `Updating`.
    pub update_completed: bool,
    /// The pod already carries the workload's update revision (a rollback while it waited in
    /// `PreparingUpdate`). `CloneSet` also accepts a short-hash match (`kruise_api::pod::is_at_revision`);
    /// Advanced `StatefulSet` compares the `controller-revision-hash` label exactly. Only read in
    /// `PreparingUpdate`.
    pub at_update_revision: bool,
}
