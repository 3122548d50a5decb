//! What an Advanced DaemonSet plan asks a controller to do, each with the rule that chose it, in the planners'
//! shared vocabulary ([`crate::planning`]). The DaemonSet planner makes only the shared writes.

use std::convert::Infallible;
use std::fmt;

use crate::planning::{self, Hook, PlanRule, UpdateHow};

/// One thing to do, with the Advanced DaemonSet [`Rule`] that chose it. Existing pods are referred to by their
/// index in the input.
pub type Action = planning::Action<Rule, Infallible>;

/// The write an Advanced DaemonSet action stands for: only the shared writes. A [`planning::ActionKind::CreatePod`]
/// names the node the pod is for in `node`; an [`planning::ActionKind::UpdateInPlace`] writes no lifecycle
/// change (`lifecycle` is `None`).
pub type ActionKind = planning::ActionKind<Infallible>;

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
        /// How: in place (`InPlaceIfPossible`), or deleted so that the next pass creates the new pod
        /// ([`UpdateHow::RecreatePolicy`] with the `Standard` strategy, [`UpdateHow::RecreateRequired`] when the
        /// change cannot be made in place).
        how: UpdateHow,
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

impl PlanRule for Rule {
    /// A short identifier (`missing-pod`, `node-ineligible`, `replace`, `surge`, …).
    fn id(&self) -> &'static str {
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

    /// The inPlaceUpdate hook for an in-place replacement, the preDelete hook for the deletions; none for
    /// the creations and the in-place refresh.
    fn holding_hook(&self) -> Option<Hook> {
        match self {
            Self::Replace {
                how: UpdateHow::InPlace,
                ..
            } => Some(Hook::InPlaceUpdate),
            Self::MissingPod { .. } | Self::Surge { .. } | Self::InPlaceProgress => None,
            Self::NodeIneligible { .. }
            | Self::NodeGone
            | Self::FailedPod
            | Self::PreparingDelete
            | Self::ExcessPod { .. }
            | Self::ExcessSurgePod
            | Self::OldPodNotReady
            | Self::NewPodAvailable
            | Self::Replace { .. } => Some(Hook::PreDelete),
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
                    UpdateHow::RecreatePolicy => f.write_str(", delete it"),
                    UpdateHow::InPlace => f.write_str(", in place"),
                    UpdateHow::RecreateRequired(reason) => {
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
