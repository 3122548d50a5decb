//! What an Advanced DaemonSet plan asks a controller to do, each with the rule that chose it.

use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_inplace::{Outcome, UpdateOptions, UpdateSpec};
use kruise_lifecycle::Transition;

/// One thing to do. Existing pods are referred to by their index in the input.
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    /// What to do.
    pub kind: ActionKind,
    /// Why: the rule that chose it.
    pub rule: Rule,
}

/// The write an action stands for.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ActionKind {
    /// Create this pod for `node`. Creations go in slow-start batches of 1, 2, 4, … (`batch` 0, 1, 2, …):
    /// stop at the first batch with a failure.
    CreatePod {
        /// The node the pod is for (its required node affinity names it).
        node: String,
        /// The pod, complete (`generateName`, labels, tolerations, node affinity, owner reference).
        pod: Box<Pod>,
        /// The slow-start batch.
        batch: u32,
    },
    /// Delete this pod.
    DeletePod {
        /// Index into the input pods.
        pod: usize,
    },
    /// Write a lifecycle transition instead of deleting (the preDelete hook holds the pod in
    /// `PreparingDelete`; send `change.status` first, then `change.metadata`).
    Lifecycle {
        /// Index into the input pods.
        pod: usize,
        /// The transition.
        transition: Transition,
    },
    /// Send the writes of an in-place refresh (next container batch, or `InPlaceUpdateReady` back to `True`).
    RefreshInPlace {
        /// Index into the input pods.
        pod: usize,
        /// The writes, in order.
        outcome: Box<Outcome>,
    },
    /// Update the pod in place to `spec.revision` (the update hash); render the writes with
    /// [`ActionKind::in_place_outcome`].
    UpdateInPlace {
        /// Index into the input pods.
        pod: usize,
        /// What the update changes (shared by all pods moving between the same revisions).
        spec: Arc<UpdateSpec>,
    },
}

impl ActionKind {
    /// A short name: `createPod`, `deletePod`, `updateLifecycle`, `refreshInPlace`, `updateInPlace`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::CreatePod { .. } => "createPod",
            Self::DeletePod { .. } => "deletePod",
            Self::Lifecycle { .. } => "updateLifecycle",
            Self::RefreshInPlace { .. } => "refreshInPlace",
            Self::UpdateInPlace { .. } => "updateInPlace",
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
            Self::CreatePod { .. } => None,
        }
    }

    /// The writes of an [`ActionKind::UpdateInPlace`] for `pod` (the input pod it names), with the plan's
    /// [`UpdateOptions`](super::Plan::update_options). `None` for other kinds.
    ///
    /// # Errors
    /// The update spec's metadata patch cannot be applied to the pod.
    pub fn in_place_outcome(
        &self,
        pod: &Pod,
        now: Timestamp,
        options: &UpdateOptions,
    ) -> Option<Result<Outcome, kruise_inplace::Error>> {
        let Self::UpdateInPlace { spec, .. } = self else {
            return None;
        };
        Some(kruise_inplace::apply(pod, spec, now, options))
    }
}

impl Action {
    /// The reason, in words: the rule, and for a deletion turned into `PreparingDelete`, that the hook holds it.
    #[must_use]
    pub fn reason(&self) -> String {
        match &self.kind {
            ActionKind::Lifecycle { .. } => {
                format!(
                    "{}; the preDelete hook holds it (PreparingDelete)",
                    self.rule
                )
            }
            _ => self.rule.to_string(),
        }
    }
}

/// How a pod chosen by the rolling update is replaced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplaceHow {
    /// Deleted; the next pass creates the new pod (`Standard`).
    Delete,
    /// Updated in place (`InPlaceIfPossible`).
    InPlace,
    /// Deleted because it cannot be updated in place.
    DeleteNotInPlace(String),
}

/// The rule of upstream's Advanced DaemonSet controller that chose an action.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rule {
    /// The node should run a daemon pod and has none.
    MissingPod {
        /// Creations were limited by the partition (`scaleStrategy.partitionedScaling`): how many were allowed.
        partitioned: Option<i64>,
    },
    /// The node should not run the daemon pod.
    NodeIneligible {
        /// Why.
        reason: String,
    },
    /// A pod not scheduled yet whose node no longer exists.
    NodeGone,
    /// The pod failed.
    FailedPod,
    /// The pod is `PreparingDelete`; it goes once the preDelete hook releases it.
    PreparingDelete,
    /// More than one pod on a node without surge: all but the oldest go.
    ExcessPod {
        /// The pod kept.
        kept: String,
    },
    /// More than one pod of the same kind (update or old revision) on a node while surging: all but the oldest
    /// of each kind go.
    ExcessSurgePod,
    /// Surging: the old pod is no longer ready, the new pod replaces it.
    OldPodNotReady,
    /// Surging: the new pod is available, the old one goes.
    NewPodAvailable,
    /// The in-place update of the pod moves on (refresh).
    InPlaceProgress,
    /// The rolling update (maxSurge 0) replaces an old pod.
    Replace {
        /// The old pod was unavailable (replaced whatever the budget).
        unavailable: bool,
        /// The node's position in the update order (updated, updating, then selected or rest nodes, each by
        /// name descending), 1-based.
        position: usize,
        /// `maxUnavailable`.
        max_unavailable: i64,
        /// Nodes without an available pod before this pass.
        unavailable_nodes: i64,
        /// How.
        how: ReplaceHow,
    },
    /// The rolling update (maxSurge > 0) creates the new pod next to the old one.
    Surge {
        /// The old pod was unavailable (surged whatever the budget).
        unavailable: bool,
        /// `maxSurge`.
        max_surge: i64,
        /// Nodes already surging before this pass.
        surging: i64,
    },
}

impl Rule {
    /// A short identifier (`missing-pod`, `node-ineligible`, `replace`, `surge`, …).
    #[must_use]
    pub fn id(&self) -> &'static str {
        match self {
            Self::MissingPod { .. } => "missing-pod",
            Self::NodeIneligible { .. } => "node-ineligible",
            Self::NodeGone => "node-gone",
            Self::FailedPod => "failed-pod",
            Self::PreparingDelete => "preparing-delete",
            Self::ExcessPod { .. } => "excess-pod",
            Self::ExcessSurgePod => "excess-surge-pod",
            Self::OldPodNotReady => "old-pod-not-ready",
            Self::NewPodAvailable => "new-pod-available",
            Self::InPlaceProgress => "in-place-refresh",
            Self::Replace { .. } => "replace",
            Self::Surge { .. } => "surge",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingPod { partitioned: None } => {
                f.write_str("the node should run a daemon pod and has none")
            }
            Self::MissingPod {
                partitioned: Some(allowed),
            } => write!(
                f,
                "the node should run a daemon pod and has none ({allowed} creation(s) allowed by the partition)"
            ),
            Self::NodeIneligible { reason } => {
                write!(f, "the node should not run the daemon pod: {reason}")
            }
            Self::NodeGone => f.write_str("the pod is not scheduled and its node no longer exists"),
            Self::FailedPod => f.write_str("the daemon pod failed"),
            Self::PreparingDelete => {
                f.write_str("PreparingDelete and the preDelete hook released it")
            }
            Self::ExcessPod { kept } => {
                write!(
                    f,
                    "more than one daemon pod on the node; the oldest ({kept}) stays"
                )
            }
            Self::ExcessSurgePod => f.write_str(
                "more than one daemon pod of the same revision on the node; the oldest stays",
            ),
            Self::OldPodNotReady => {
                f.write_str("surge: the old pod is not ready, the new pod replaces it")
            }
            Self::NewPodAvailable => {
                f.write_str("surge: the new pod is available, the old one goes")
            }
            Self::InPlaceProgress => f.write_str("in-place update in progress moves on"),
            Self::Replace {
                unavailable,
                position,
                max_unavailable,
                unavailable_nodes,
                how,
            } => {
                if *unavailable {
                    write!(
                        f,
                        "update: node {position} in the update order, its old pod is unavailable"
                    )?;
                } else {
                    write!(
                        f,
                        "update: node {position} in the update order ({unavailable_nodes} unavailable of maxUnavailable {max_unavailable})"
                    )?;
                }
                match how {
                    ReplaceHow::Delete => f.write_str(", delete it"),
                    ReplaceHow::InPlace => f.write_str(", in place"),
                    ReplaceHow::DeleteNotInPlace(reason) => {
                        write!(f, ", delete it (cannot update in place: {reason})")
                    }
                }
            }
            Self::Surge {
                unavailable,
                max_surge,
                surging,
            } => {
                if *unavailable {
                    f.write_str("surge: the old pod is unavailable, create the new pod")
                } else {
                    write!(
                        f,
                        "surge: create the new pod next to the old one ({surging} surging of maxSurge {max_surge})"
                    )
                }
            }
        }
    }
}
