//! What a CloneSet plan asks a controller to do, each step with the rule that chose it.

use std::borrow::Borrow;
use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::jiff::Timestamp;
use kruise_api::keys;
use kruise_inplace::{Outcome, UpdateOptions, UpdateSpec};
use kruise_lifecycle::{LifecycleStateType, MetadataChange, Transition};

/// One thing to do. Existing pods and claims are referred to by their index in the input.
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
    /// Create this claim (before the pod that mounts it).
    CreateClaim {
        /// The claim, complete.
        claim: Box<PersistentVolumeClaim>,
    },
    /// Create this pod. Creations go in slow-start batches of 1, 2, 4, … (`batch` 0, 1, 2, …): stop at the
    /// first batch with a failure.
    CreatePod {
        /// The pod, complete (labels, lifecycle state, readiness gate, owner reference, claim volumes).
        pod: Box<Pod>,
        /// The slow-start batch.
        batch: u32,
    },
    /// Delete this pod.
    DeletePod {
        /// Index into the input pods.
        pod: usize,
    },
    /// Delete this claim (it belonged to a pod deleted by the same plan).
    DeleteClaim {
        /// Index into the input claims.
        claim: usize,
    },
    /// Write a lifecycle transition (status first, then metadata; see `kruise_lifecycle::Transition`).
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
    /// Update the pod in place to `spec.revision`, writing the lifecycle `Updating` state in the same pod
    /// write; render the writes with [`ActionKind::in_place_outcome`].
    UpdateInPlace {
        /// Index into the input pods.
        pod: usize,
        /// What the update changes (shared by all pods moving between the same revisions).
        spec: Arc<UpdateSpec>,
        /// The lifecycle change written with it (shared by all pods leaving the same lifecycle state).
        lifecycle: Arc<Transition>,
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

impl ActionKind {
    /// A short name: `createClaim`, `createPod`, `deletePod`, `deleteClaim`, `updateLifecycle`,
    /// `refreshInPlace`, `updateInPlace`, `markSpecifiedDelete`, `fixPodTemplateHash`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::CreateClaim { .. } => "createClaim",
            Self::CreatePod { .. } => "createPod",
            Self::DeletePod { .. } => "deletePod",
            Self::DeleteClaim { .. } => "deleteClaim",
            Self::Lifecycle { .. } => "updateLifecycle",
            Self::RefreshInPlace { .. } => "refreshInPlace",
            Self::UpdateInPlace { .. } => "updateInPlace",
            Self::MarkSpecifiedDelete { .. } => "markSpecifiedDelete",
            Self::FixPodTemplateHash { .. } => "fixPodTemplateHash",
        }
    }

    /// The index of the existing pod acted on, if any.
    #[must_use]
    pub fn pod(&self) -> Option<usize> {
        match self {
            Self::DeletePod { pod }
            | Self::Lifecycle { pod, .. }
            | Self::RefreshInPlace { pod, .. }
            | Self::UpdateInPlace { pod, .. }
            | Self::MarkSpecifiedDelete { pod }
            | Self::FixPodTemplateHash { pod, .. } => Some(*pod),
            Self::CreateClaim { .. } | Self::CreatePod { .. } | Self::DeleteClaim { .. } => None,
        }
    }

    /// The metadata to write (strategic-merge patch with `MetadataChange::strategic_merge_patch`) for the
    /// label-setting actions, `None` for the others.
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
            _ => None,
        }
    }

    /// The writes of an [`ActionKind::UpdateInPlace`] for `pod` (the input pod it names): the in-place patch
    /// with the lifecycle state in the same pod write. `None` for other kinds.
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
        Some(kruise_inplace::apply_with(pod, spec, now, options, |pod| {
            lifecycle.change.metadata.apply_to(pod);
        }))
    }
}

impl Action {
    /// The name of the object acted on: the input pod's or claim's name, or the new object's. `pods` are
    /// the pods the plan's indexes refer to: `PlanInput::pods`, or `PodFactsCache::pods` for a plan from a
    /// cache.
    #[must_use]
    pub fn object_name<'p, P: Borrow<Pod>>(
        &'p self,
        pods: &'p [P],
        claims: &'p [PersistentVolumeClaim],
    ) -> &'p str {
        let name = match &self.kind {
            ActionKind::CreateClaim { claim } => claim.metadata.name.as_deref(),
            ActionKind::CreatePod { pod, .. } => pod.metadata.name.as_deref(),
            ActionKind::DeleteClaim { claim } => {
                claims.get(*claim).and_then(|c| c.metadata.name.as_deref())
            }
            kind => kind
                .pod()
                .and_then(|index| pods.get(index))
                .and_then(|pod| pod.borrow().metadata.name.as_deref()),
        };
        name.unwrap_or("")
    }

    /// The reason, in words: the rule, and for a deletion or update held by a hook, what holds it.
    #[must_use]
    pub fn reason(&self) -> String {
        match &self.kind {
            ActionKind::Lifecycle { transition, .. } if self.rule.is_deletion() => format!(
                "{}; the preDelete hook holds it{}",
                self.rule,
                state_change(transition)
            ),
            ActionKind::Lifecycle { transition, .. } if self.rule.is_update() => format!(
                "{}; the inPlaceUpdate hook holds it{}",
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

/// Which revision something is at or moves to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `status.currentRevision`.
    Current,
    /// `status.updateRevision`.
    Update,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Current => "current",
            Self::Update => "update",
        })
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

/// How an update is carried out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpdateHow {
    /// In place.
    InPlace,
    /// Recreated because the policy is `ReCreate`.
    RecreatePolicy,
    /// Recreated because the change cannot be made in place.
    RecreateRequired(String),
}

impl Rule {
    fn is_deletion(&self) -> bool {
        matches!(
            self,
            Self::PreDeleteReleased | Self::SpecifiedDelete { .. } | Self::ScaleDown { .. }
        )
    }

    fn is_update(&self) -> bool {
        matches!(self, Self::Update { .. })
    }

    /// A short identifier of the rule (`scale-up`, `specified-delete`, `scale-down`, `update`, …).
    #[must_use]
    pub fn id(&self) -> &'static str {
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
