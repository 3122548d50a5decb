//! What a CloneSet plan asks a controller to do, each step with the rule that chose it, in the planners'
//! shared vocabulary ([`crate::planning`]).

use std::fmt;

use kruise_api::keys;
use kruise_lifecycle::MetadataChange;

use crate::planning::{self, Hook, PlanRule, SpecificAction, Target, UpdateHow};

/// One thing to do, with the CloneSet [`Rule`] that chose it. Existing pods and claims are referred to by
/// their index in the input.
pub type Action = planning::Action<Rule, SpecificKind>;

/// The write a CloneSet action stands for: the shared writes, and [`SpecificKind`] in
/// [`planning::ActionKind::Specific`].
pub type ActionKind = planning::ActionKind<SpecificKind>;

/// The writes only the CloneSet planner makes.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SpecificKind {
    /// Delete this claim (it belonged to a pod deleted by the same plan).
    DeleteClaim {
        /// Index into the input claims.
        claim: usize,
    },
    /// Set `apps.kruise.io/specified-delete: "true"` so the scale step recreates the pod (recreate update).
    MarkSpecifiedDelete {
        /// Index into the input pods.
        pod: usize,
    },
    /// Set the missing `pod-template-hash` label (pods created before Kruise v1.1).
    FixPodTemplateHash {
        /// Index into the input pods.
        pod: usize,
        /// The short hash.
        hash: String,
    },
}

impl SpecificAction for SpecificKind {
    /// `deleteClaim`, `markSpecifiedDelete` or `fixPodTemplateHash`.
    fn name(&self) -> &'static str {
        match self {
            Self::DeleteClaim { .. } => "deleteClaim",
            Self::MarkSpecifiedDelete { .. } => "markSpecifiedDelete",
            Self::FixPodTemplateHash { .. } => "fixPodTemplateHash",
        }
    }

    fn pod(&self) -> Option<usize> {
        match self {
            Self::MarkSpecifiedDelete { pod } | Self::FixPodTemplateHash { pod, .. } => Some(*pod),
            Self::DeleteClaim { .. } => None,
        }
    }

    fn claim(&self) -> Option<usize> {
        match self {
            Self::DeleteClaim { claim } => Some(*claim),
            Self::MarkSpecifiedDelete { .. } | Self::FixPodTemplateHash { .. } => None,
        }
    }
}

impl SpecificKind {
    /// The metadata to write (strategic-merge patch with `MetadataChange::strategic_merge_patch`) for the
    /// label-setting writes, `None` for [`SpecificKind::DeleteClaim`].
    #[must_use]
    pub fn metadata_change(&self) -> Option<MetadataChange> {
        match self {
            Self::MarkSpecifiedDelete { .. } => Some(
                MetadataChange::default()
                    .with_label(keys::cloneset::SPECIFIED_DELETE_LABEL, "true"),
            ),
            Self::FixPodTemplateHash { hash, .. } => Some(
                MetadataChange::default()
                    .with_label(keys::kubernetes::POD_TEMPLATE_HASH_LABEL, hash.clone()),
            ),
            Self::DeleteClaim { .. } => None,
        }
    }
}

impl planning::ActionKind<SpecificKind> {
    /// The metadata to write (strategic-merge patch with `MetadataChange::strategic_merge_patch`) for the
    /// CloneSet's label-setting writes ([`SpecificKind::metadata_change`]), `None` for the others.
    #[must_use]
    pub fn metadata_change(&self) -> Option<MetadataChange> {
        self.specific().and_then(SpecificKind::metadata_change)
    }
}

/// The rule of upstream's CloneSet controller that chose an action.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rule {
    /// Scale-up cancels a pending deletion (`PreparingDelete → PreparingNormal`).
    CancelDelete {
        /// Pods missing before this cancellation.
        shortfall: i64,
    },
    /// A pod (and its claims) created by scale-up.
    ScaleUp {
        /// The revision of the new pod.
        revision: Target,
        /// `scaleUpNum`.
        wanted: i64,
        /// `scaleUpLimit`.
        limit: i64,
        /// The instance id was taken from a claim left without a pod.
        reused_claim: bool,
    },
    /// A `PreparingDelete` pod whose preDelete hook was released.
    PreDeleteReleased,
    /// A pod specified for deletion (label or `scaleStrategy.podsToDelete`).
    SpecifiedDelete {
        /// Whether it was ready (then it used one of `deleteReadyLimit`).
        ready: bool,
        /// `deleteReadyLimit` left after it.
        remaining: i64,
    },
    /// A pod chosen by scale-down.
    ScaleDown {
        /// Its revision group.
        revision: Target,
        /// Its 1-based position in the group's deletion ranking.
        rank: usize,
        /// Pods in the group.
        of: usize,
        /// Whether it was ready (then it used one of `deleteReadyLimit`).
        ready: bool,
    },
    /// A claim of a pod deleted by the same plan.
    ClaimOfDeletedPod {
        /// The pod's name.
        pod: String,
    },
    /// The in-place update of the pod moves on (refresh).
    InPlaceProgress,
    /// The lifecycle refresh (`PreparingNormal → Normal`, `Updating → Updated/Normal`, …).
    LifecycleRefresh,
    /// The pod lacks `pod-template-hash`.
    MissingTemplateHash,
    /// A pod chosen by the update step.
    Update {
        /// Where it moves: `Update` forward, `Current` for a rollback.
        target: Target,
        /// Its 1-based position in the update order.
        position: usize,
        /// `|updateNum|`.
        wanted: i64,
        /// `updateMaxUnavailable`.
        max_unavailable: i64,
        /// How: in place, or recreated and why.
        how: UpdateHow,
    },
}

impl Rule {
    fn is_deletion(&self) -> bool {
        matches!(
            self,
            Self::PreDeleteReleased | Self::SpecifiedDelete { .. } | Self::ScaleDown { .. }
        )
    }
}

impl PlanRule for Rule {
    /// A short identifier of the rule (`scale-up`, `specified-delete`, `scale-down`, `update`, …).
    fn id(&self) -> &'static str {
        match self {
            Self::CancelDelete { .. } => "cancel-delete",
            Self::ScaleUp { .. } => "scale-up",
            Self::PreDeleteReleased => "pre-delete",
            Self::SpecifiedDelete { .. } => "specified-delete",
            Self::ScaleDown { .. } => "scale-down",
            Self::ClaimOfDeletedPod { .. } => "claim-of-deleted-pod",
            Self::InPlaceProgress => "in-place-refresh",
            Self::LifecycleRefresh => "lifecycle-refresh",
            Self::MissingTemplateHash => "pod-template-hash",
            Self::Update { .. } => "update",
        }
    }

    /// The preDelete hook for the deletions, the inPlaceUpdate hook for the update.
    fn holding_hook(&self) -> Option<Hook> {
        if self.is_deletion() {
            Some(Hook::PreDelete)
        } else if matches!(self, Self::Update { .. }) {
            Some(Hook::InPlaceUpdate)
        } else {
            None
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CancelDelete { shortfall } => write!(
                f,
                "scale-up: {shortfall} pod(s) short of replicas, cancel the pending deletion"
            ),
            Self::ScaleUp {
                revision,
                wanted,
                limit,
                reused_claim,
            } => {
                write!(
                    f,
                    "scale-up at the {revision} revision ({wanted} wanted, {limit} allowed by scaleStrategy.maxUnavailable)"
                )?;
                if *reused_claim {
                    f.write_str(", reusing the instance id of a claim left by a deleted pod")?;
                }
                Ok(())
            }
            Self::PreDeleteReleased => {
                f.write_str("PreparingDelete and the preDelete hook released it")
            }
            Self::SpecifiedDelete { ready, remaining } => {
                if *ready {
                    write!(
                        f,
                        "specified for deletion; ready, so it uses deleteReadyLimit ({remaining} left)"
                    )
                } else {
                    f.write_str("specified for deletion; not ready, so deleted at once")
                }
            }
            Self::ScaleDown {
                revision,
                rank,
                of,
                ready,
            } => write!(
                f,
                "scale-down: ranked {rank} of {of} {revision}-revision pods for deletion{}",
                if *ready {
                    " (ready: uses deleteReadyLimit)"
                } else {
                    " (not ready)"
                }
            ),
            Self::ClaimOfDeletedPod { pod } => write!(f, "claim of deleted pod {pod}"),
            Self::InPlaceProgress => f.write_str("in-place update in progress moves on"),
            Self::LifecycleRefresh => f.write_str("lifecycle refresh"),
            Self::MissingTemplateHash => {
                f.write_str("pod-template-hash label missing (pod created before Kruise v1.1)")
            }
            Self::Update {
                target,
                position,
                wanted,
                max_unavailable,
                how,
            } => {
                let verb = match target {
                    Target::Update => "update",
                    Target::Current => "roll back",
                };
                write!(
                    f,
                    "{verb}: position {position} in the update order ({wanted} to {verb}, updateMaxUnavailable {max_unavailable}), "
                )?;
                match how {
                    UpdateHow::InPlace => f.write_str("in place"),
                    UpdateHow::RecreatePolicy => f.write_str("recreate (policy ReCreate)"),
                    UpdateHow::RecreateRequired(reason) => {
                        write!(f, "recreate (cannot update in place: {reason})")
                    }
                }
            }
        }
    }
}
