//! What an Advanced StatefulSet plan asks a controller to do, each step with the rule that chose it.

use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use k8s_openapi::jiff::Timestamp;
use kruise_inplace::{Outcome, UpdateOptions, UpdateSpec};
use kruise_lifecycle::{LifecycleStateType, Transition};

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
    /// Create this pod.
    CreatePod {
        /// The pod, complete (identity labels, revision, lifecycle state, owner reference, claim volumes).
        pod: Box<Pod>,
    },
    /// Delete this pod.
    DeletePod {
        /// Index into the input pods.
        pod: usize,
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
    /// Update the pod in place to the update revision, writing the lifecycle change (`Updating`, only on a
    /// pod that already has a state) in the same pod write; render the writes with
    /// [`ActionKind::in_place_outcome`].
    UpdateInPlace {
        /// Index into the input pods.
        pod: usize,
        /// What the update changes (shared by all pods moving between the same revisions).
        spec: Arc<UpdateSpec>,
        /// The lifecycle change written with it.
        lifecycle: Transition,
    },
    /// Update the pod to this object: its identity (`statefulset.kubernetes.io/pod-name`, pod index label,
    /// namespace) or its claim volumes did not match (upstream `UpdateStatefulPod`).
    UpdateIdentity {
        /// Index into the input pods.
        pod: usize,
        /// The pod as it should be.
        updated: Box<Pod>,
    },
    /// Replace the owner references of this claim (`persistentVolumeClaimRetentionPolicy`).
    UpdateClaimOwners {
        /// Index into the input claims.
        claim: usize,
        /// The owner references it should have.
        owner_references: Vec<OwnerReference>,
    },
}

impl ActionKind {
    /// A short name: `createClaim`, `createPod`, `deletePod`, `updateLifecycle`, `refreshInPlace`,
    /// `updateInPlace`, `updateIdentity`, `updateClaimOwners`.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::CreateClaim { .. } => "createClaim",
            Self::CreatePod { .. } => "createPod",
            Self::DeletePod { .. } => "deletePod",
            Self::Lifecycle { .. } => "updateLifecycle",
            Self::RefreshInPlace { .. } => "refreshInPlace",
            Self::UpdateInPlace { .. } => "updateInPlace",
            Self::UpdateIdentity { .. } => "updateIdentity",
            Self::UpdateClaimOwners { .. } => "updateClaimOwners",
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
            | Self::UpdateIdentity { pod, .. } => Some(*pod),
            Self::CreateClaim { .. } | Self::CreatePod { .. } | Self::UpdateClaimOwners { .. } => {
                None
            }
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
    /// The name of the object acted on: the input pod's or claim's name, or the new object's.
    #[must_use]
    pub fn object_name<'p>(
        &'p self,
        pods: &'p [Pod],
        claims: &'p [PersistentVolumeClaim],
    ) -> &'p str {
        let name = match &self.kind {
            ActionKind::CreateClaim { claim } => claim.metadata.name.as_deref(),
            ActionKind::CreatePod { pod } => pod.metadata.name.as_deref(),
            ActionKind::UpdateClaimOwners { claim, .. } => {
                claims.get(*claim).and_then(|c| c.metadata.name.as_deref())
            }
            kind => kind
                .pod()
                .and_then(|index| pods.get(index))
                .and_then(|pod| pod.metadata.name.as_deref()),
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
            ActionKind::Lifecycle { transition, .. }
                if matches!(self.rule, Rule::Update { .. }) =>
            {
                format!(
                    "{}; the inPlaceUpdate hook holds it{}",
                    self.rule,
                    state_change(transition)
                )
            }
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
    /// The update revision.
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

/// Why a pod is condemned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Condemned {
    /// Its ordinal is below the start ordinal.
    BeforeStart,
    /// Its ordinal is at or beyond the end of the kept range (scale-down).
    BeyondEnd,
    /// Its ordinal is reserved (`spec.reserveOrdinals`).
    Reserved,
}

impl fmt::Display for Condemned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::BeforeStart => "its ordinal is below the start ordinal",
            Self::BeyondEnd => "its ordinal is beyond the replicas",
            Self::Reserved => "its ordinal is reserved",
        })
    }
}

/// How an update is carried out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpdateHow {
    /// In place.
    InPlace,
    /// Recreated (deleted; the scale step creates it again) because the policy is `ReCreate`.
    RecreatePolicy,
    /// Recreated because the change cannot be made in place (`InPlaceIfPossible`).
    RecreateRequired(String),
}

/// The rule of upstream's Advanced StatefulSet controller that chose an action.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rule {
    /// A missing pod (and its claims) is created.
    CreateMissing {
        /// Its ordinal.
        ordinal: i64,
        /// Its slot index (`ordinal - start`).
        slot: i64,
        /// Its revision.
        revision: Target,
    },
    /// A claim of an existing `Pending` pod is missing.
    MissingClaim,
    /// The pod finished (`Failed` or `Succeeded`): delete it so it is created again.
    RecreateFinished {
        /// Its phase.
        phase: String,
    },
    /// The in-place update of the pod moves on (refresh).
    InPlaceProgress,
    /// The lifecycle refresh (`PreparingNormal → Normal`, `Updating → Updated/Normal`, …).
    LifecycleRefresh,
    /// The pod's identity or claim volumes do not match its ordinal.
    Identity,
    /// The claim's owner references do not follow `persistentVolumeClaimRetentionPolicy`.
    ClaimRetention,
    /// A condemned pod is deleted (highest ordinal first).
    Condemned {
        /// Its ordinal.
        ordinal: i64,
        /// Why it is condemned.
        why: Condemned,
    },
    /// A pod labelled `apps.kruise.io/specified-delete` is deleted (not limited by the partition).
    SpecifiedDelete {
        /// Its slot index.
        slot: i64,
    },
    /// A pod chosen by the rolling update.
    Update {
        /// Its 1-based position in the update order.
        position: usize,
        /// Its slot index.
        slot: i64,
        /// `rollingUpdate.maxUnavailable` as a number.
        max_unavailable: i64,
        /// How.
        how: UpdateHow,
    },
}

impl Rule {
    fn is_deletion(&self) -> bool {
        matches!(
            self,
            Self::RecreateFinished { .. } | Self::Condemned { .. } | Self::SpecifiedDelete { .. }
        ) || matches!(
            self,
            Self::Update {
                how: UpdateHow::RecreatePolicy | UpdateHow::RecreateRequired(_),
                ..
            }
        )
    }

    /// A short identifier of the rule (`create-missing`, `condemned`, `update`, …).
    #[must_use]
    pub fn id(&self) -> &'static str {
        match self {
            Self::CreateMissing { .. } => "create-missing",
            Self::MissingClaim => "missing-claim",
            Self::RecreateFinished { .. } => "recreate-finished",
            Self::InPlaceProgress => "in-place-refresh",
            Self::LifecycleRefresh => "lifecycle-refresh",
            Self::Identity => "identity",
            Self::ClaimRetention => "claim-retention",
            Self::Condemned { .. } => "condemned",
            Self::SpecifiedDelete { .. } => "specified-delete",
            Self::Update { .. } => "update",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CreateMissing {
                ordinal,
                slot,
                revision,
            } => write!(
                f,
                "ordinal {ordinal} (slot {slot}) has no pod: create it at the {revision} revision"
            ),
            Self::MissingClaim => f.write_str("the Pending pod's claim is missing"),
            Self::RecreateFinished { phase } => {
                write!(
                    f,
                    "the pod is {phase}: delete it so that it is created again"
                )
            }
            Self::InPlaceProgress => f.write_str("in-place update in progress moves on"),
            Self::LifecycleRefresh => f.write_str("lifecycle refresh"),
            Self::Identity => {
                f.write_str("the pod's identity or claim volumes do not match its ordinal")
            }
            Self::ClaimRetention => f.write_str(
                "the claim's owner references do not follow persistentVolumeClaimRetentionPolicy",
            ),
            Self::Condemned { ordinal, why } => {
                write!(
                    f,
                    "condemned: {why} (ordinal {ordinal}); deleted highest first"
                )
            }
            Self::SpecifiedDelete { slot } => write!(
                f,
                "labelled apps.kruise.io/specified-delete (slot {slot}); not limited by the partition"
            ),
            Self::Update {
                position,
                slot,
                max_unavailable,
                how,
            } => {
                write!(
                    f,
                    "update: position {position} in the update order (slot {slot}, maxUnavailable {max_unavailable}), "
                )?;
                match how {
                    UpdateHow::InPlace => f.write_str("in place"),
                    UpdateHow::RecreatePolicy => f.write_str("recreate (podUpdatePolicy ReCreate)"),
                    UpdateHow::RecreateRequired(reason) => {
                        write!(f, "recreate (cannot update in place: {reason})")
                    }
                }
            }
        }
    }
}
