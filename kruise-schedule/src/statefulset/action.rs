//! What an Advanced StatefulSet plan asks a controller to do, each step with the rule that chose it, in the
//! planners' shared vocabulary ([`crate::planning`]).

use std::fmt;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use crate::planning::{self, Hook, PlanRule, SpecificAction, Target, UpdateHow};

/// One thing to do, with the Advanced StatefulSet [`Rule`] that chose it. Existing pods and claims are
/// referred to by their index in the input.
pub type Action = planning::Action<Rule, SpecificKind>;

/// The write an Advanced StatefulSet action stands for: the shared writes, and [`SpecificKind`] in
/// [`planning::ActionKind::Specific`].
pub type ActionKind = planning::ActionKind<SpecificKind>;

/// The writes only the Advanced StatefulSet planner makes.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SpecificKind {
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
    /// Raise this claim's `spec.resources.requests.storage` to its template's (`volumeClaimUpdateStrategy:
    /// OnPodRollingUpdate`; upstream `TryPatchPVC`), and mark it with the annotation
    /// `apps.kruise.io/owned-by-asts: <StatefulSet name>` so that its changes reach the StatefulSet.
    ExpandClaim {
        /// Index into the input claims.
        claim: usize,
        /// Index into the input pods: the pod the claim belongs to (for the Event; the write is the
        /// claim's).
        pod: usize,
        /// The storage request to write, as the template spells it.
        storage: String,
    },
}

impl SpecificAction for SpecificKind {
    /// `updateIdentity`, `updateClaimOwners` or `expandClaim`.
    fn name(&self) -> &'static str {
        match self {
            Self::UpdateIdentity { .. } => "updateIdentity",
            Self::UpdateClaimOwners { .. } => "updateClaimOwners",
            Self::ExpandClaim { .. } => "expandClaim",
        }
    }

    /// The pod written to: only [`SpecificKind::UpdateIdentity`] writes a pod.
    fn pod(&self) -> Option<usize> {
        match self {
            Self::UpdateIdentity { pod, .. } => Some(*pod),
            Self::UpdateClaimOwners { .. } | Self::ExpandClaim { .. } => None,
        }
    }

    fn claim(&self) -> Option<usize> {
        match self {
            Self::UpdateClaimOwners { claim, .. } | Self::ExpandClaim { claim, .. } => Some(*claim),
            Self::UpdateIdentity { .. } => None,
        }
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
    /// `volumeClaimUpdateStrategy: OnPodRollingUpdate`: a claim of a pod the rolling update is about to
    /// update requests less storage than its template; it is expanded first.
    ExpandClaim {
        /// The pod's slot index.
        slot: i64,
        /// The volume claim template's name.
        template: String,
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
}

impl PlanRule for Rule {
    /// A short identifier of the rule (`create-missing`, `condemned`, `update`, …).
    fn id(&self) -> &'static str {
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
            Self::ExpandClaim { .. } => "expand-claim",
            Self::Update { .. } => "update",
        }
    }

    /// The preDelete hook for the deletions (a recreating update included), the inPlaceUpdate hook for an
    /// in-place update.
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
            Self::ExpandClaim { slot, template } => write!(
                f,
                "volumeClaimUpdateStrategy OnPodRollingUpdate: the claim of template {template} requests less storage than the template; expanded before the pod (slot {slot}) is updated"
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
