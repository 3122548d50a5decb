//! What a plan asks a controller to do, each step with the rule that chose it.

use std::borrow::Borrow;
use std::convert::Infallible;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::jiff::Timestamp;
use kruise_inplace::{Outcome, UpdateOptions, UpdateSpec};
use kruise_lifecycle::{LifecycleStateType, Transition};

use super::rule::PlanRule;

/// One thing to do, and the rule `R` that chose it. Existing pods and claims are referred to by their index
/// in the input; `S` is the workload's own kind of write ([`SpecificAction`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Action<R, S> {
    /// What to do.
    pub kind: ActionKind<S>,
    /// Why: the rule that chose it.
    pub rule: R,
}

/// The write an action stands for: the writes every workload makes, and [`ActionKind::Specific`] for the
/// writes of one workload only (`S`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ActionKind<S> {
    /// Create this claim (before the pod that mounts it).
    CreateClaim {
        /// The claim, complete.
        claim: Box<PersistentVolumeClaim>,
    },
    /// Create this pod. CloneSet and Advanced DaemonSet create in slow-start batches of 1, 2, 4, … (`batch`
    /// 0, 1, 2, …): stop at the first batch with a failure. Advanced StatefulSet orders its creations itself
    /// (one per pass with `OrderedReady`) and puts them all in batch 0.
    CreatePod {
        /// The pod, complete (labels, lifecycle state, owner reference, claim volumes, …).
        pod: Box<Pod>,
        /// The slow-start batch.
        batch: u32,
        /// The node the pod is made for, when the workload places one pod per node (Advanced DaemonSet: the
        /// pod's required node affinity names it); `None` when the scheduler places it.
        node: Option<String>,
    },
    /// Delete this pod.
    DeletePod {
        /// Index into the input pods.
        pod: usize,
    },
    /// Write a lifecycle transition (status first, then metadata; see `kruise_lifecycle::Transition`):
    /// a lifecycle refresh, or a hook holding a pod instead of deleting or updating it.
    Lifecycle {
        /// Index into the input pods.
        pod: usize,
        /// The transition.
        transition: Transition,
    },
    /// Send the writes of an in-place refresh (grace period over, next container batch, or
    /// `InPlaceUpdateReady` back to `True`).
    RefreshInPlace {
        /// Index into the input pods.
        pod: usize,
        /// The writes, in order.
        outcome: Box<Outcome>,
    },
    /// Update the pod in place to `spec.revision`; render the writes with [`ActionKind::in_place_outcome`].
    UpdateInPlace {
        /// Index into the input pods.
        pod: usize,
        /// What the update changes (shared by all pods moving between the same revisions).
        spec: Arc<UpdateSpec>,
        /// The lifecycle change written in the same pod write (CloneSet: `Updating`; Advanced StatefulSet:
        /// `Updating` on a pod that already has a state, else no change), shared by all pods leaving the same
        /// lifecycle state. `None` when the workload writes none with the update (Advanced DaemonSet).
        lifecycle: Option<Arc<Transition>>,
    },
    /// A write only this workload makes.
    Specific(S),
}

/// The writes only one workload makes (CloneSet's `markSpecifiedDelete`, Advanced StatefulSet's
/// `updateIdentity`, …): what [`ActionKind`] asks of them. A workload without any uses [`Infallible`].
pub trait SpecificAction {
    /// A short name (`markSpecifiedDelete`, `updateIdentity`, …).
    fn name(&self) -> &'static str;

    /// The index of the existing pod acted on, if any.
    fn pod(&self) -> Option<usize>;

    /// The index of the existing claim acted on, if any.
    fn claim(&self) -> Option<usize>;
}

impl SpecificAction for Infallible {
    fn name(&self) -> &'static str {
        match *self {}
    }

    fn pod(&self) -> Option<usize> {
        match *self {}
    }

    fn claim(&self) -> Option<usize> {
        match *self {}
    }
}

impl<S: SpecificAction> ActionKind<S> {
    /// A short name: `createClaim`, `createPod`, `deletePod`, `updateLifecycle`, `refreshInPlace`,
    /// `updateInPlace`, or the workload's own ([`SpecificAction::name`]).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::CreateClaim { .. } => "createClaim",
            Self::CreatePod { .. } => "createPod",
            Self::DeletePod { .. } => "deletePod",
            Self::Lifecycle { .. } => "updateLifecycle",
            Self::RefreshInPlace { .. } => "refreshInPlace",
            Self::UpdateInPlace { .. } => "updateInPlace",
            Self::Specific(specific) => specific.name(),
        }
    }

    /// The index of the existing pod acted on, if any.
    #[must_use]
    pub fn pod(&self) -> Option<usize> {
        match self {
            Self::DeletePod { pod }
            | Self::Lifecycle { pod, .. }
            | Self::RefreshInPlace { pod, .. }
            | Self::UpdateInPlace { pod, .. } => Some(*pod),
            Self::CreateClaim { .. } | Self::CreatePod { .. } => None,
            Self::Specific(specific) => specific.pod(),
        }
    }

    /// The workload's own write, if this is one.
    #[must_use]
    pub fn specific(&self) -> Option<&S> {
        match self {
            Self::Specific(specific) => Some(specific),
            _ => None,
        }
    }

    /// The writes of an [`ActionKind::UpdateInPlace`] for `pod` (the input pod it names), with the plan's
    /// update options: the in-place patch, with the lifecycle change (if any) in the same pod write. `None`
    /// for other kinds.
    ///
    /// # Errors
    /// The update spec's metadata patch cannot be applied to the pod.
    pub fn in_place_outcome(
        &self,
        pod: &Pod,
        now: Timestamp,
        options: &UpdateOptions,
    ) -> Option<Result<Outcome, kruise_inplace::Error>> {
        let Self::UpdateInPlace {
            spec, lifecycle, ..
        } = self
        else {
            return None;
        };
        Some(match lifecycle {
            Some(lifecycle) => kruise_inplace::apply_with(pod, spec, now, options, |pod| {
                lifecycle.change.metadata.apply_to(pod);
            }),
            None => kruise_inplace::apply(pod, spec, now, options),
        })
    }
}

impl<R: PlanRule, S: SpecificAction> Action<R, S> {
    /// The name of the object acted on: the input pod's or claim's name, or the new object's. `pods` and
    /// `claims` are those the plan's indexes refer to (the input's; for a CloneSet plan from a cache,
    /// `PodFactsCache::pods`).
    #[must_use]
    pub fn object_name<'p, P: Borrow<Pod>>(
        &'p self,
        pods: &'p [P],
        claims: &'p [PersistentVolumeClaim],
    ) -> &'p str {
        let name = match &self.kind {
            ActionKind::CreateClaim { claim } => claim.metadata.name.as_deref(),
            ActionKind::CreatePod { pod, .. } => pod.metadata.name.as_deref(),
            ActionKind::Specific(specific) if specific.claim().is_some() => specific
                .claim()
                .and_then(|index| claims.get(index))
                .and_then(|claim| claim.metadata.name.as_deref()),
            kind => kind
                .pod()
                .and_then(|index| pods.get(index))
                .and_then(|pod| pod.borrow().metadata.name.as_deref()),
        };
        name.unwrap_or("")
    }

    /// The reason, in words: the rule, and for a deletion or update held by a hook, which hook holds it and
    /// the state change written.
    #[must_use]
    pub fn reason(&self) -> String {
        match (&self.kind, self.rule.holding_hook()) {
            (ActionKind::Lifecycle { transition, .. }, Some(hook)) => format!(
                "{}; the {hook} hook holds it{}",
                self.rule,
                state_change(transition)
            ),
            _ => self.rule.to_string(),
        }
    }
}

fn state_change(transition: &Transition) -> String {
    let name = |state: &Option<LifecycleStateType>| {
        state
            .as_ref()
            .map_or_else(|| "(none)".to_owned(), |s| s.as_str().to_owned())
    };
    if transition.changes_state() {
        format!(" ({} -> {})", name(&transition.from), name(&transition.to))
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use kruise_lifecycle::{LifecycleStateType, Transition};

    use crate::daemonset;
    use crate::planning::{ActionKind, UpdateHow};
    use crate::statefulset;

    fn held(from: LifecycleStateType, to: LifecycleStateType) -> Transition {
        Transition {
            from: Some(from),
            to: Some(to),
            ..Transition::default()
        }
    }

    #[test]
    fn a_held_action_names_its_hook_and_the_state_change() {
        let deletion = statefulset::Action {
            kind: ActionKind::Lifecycle {
                pod: 0,
                transition: held(
                    LifecycleStateType::Normal,
                    LifecycleStateType::PreparingDelete,
                ),
            },
            rule: statefulset::Rule::SpecifiedDelete { slot: 1 },
        };
        assert_eq!(
            deletion.reason(),
            "labelled apps.kruise.io/specified-delete (slot 1); not limited by the partition; \
             the preDelete hook holds it (Normal -> PreparingDelete)"
        );
        // An Advanced DaemonSet pod held before an in-place update is held by the inPlaceUpdate hook.
        let update = daemonset::Action {
            kind: ActionKind::Lifecycle {
                pod: 0,
                transition: held(
                    LifecycleStateType::Normal,
                    LifecycleStateType::PreparingUpdate,
                ),
            },
            rule: daemonset::Rule::Replace {
                unavailable: false,
                position: 1,
                max_unavailable: 1,
                unavailable_nodes: 0,
                how: UpdateHow::InPlace,
            },
        };
        assert_eq!(
            update.reason(),
            "update: node 1 in the update order (0 unavailable of maxUnavailable 1), in place; \
             the inPlaceUpdate hook holds it (Normal -> PreparingUpdate)"
        );
        // Other kinds are the rule's words alone.
        let deleted = daemonset::Action {
            kind: ActionKind::DeletePod { pod: 0 },
            rule: daemonset::Rule::FailedPod,
        };
        assert_eq!(deleted.reason(), "the daemon pod failed");
        assert_eq!(
            deleted.object_name::<k8s_openapi::api::core::v1::Pod>(&[], &[]),
            ""
        );
    }
}
