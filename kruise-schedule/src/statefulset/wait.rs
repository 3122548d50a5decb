//! Why a pass stopped before doing everything it could: what it waits for.

use std::fmt;

/// What the pass waits for (upstream returns from the reconcile at these points).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Wait {
    /// `OrderedReady`: one pod was created; the next waits for it to be Running and Ready.
    Created {
        /// The new pod's name.
        pod: String,
    },
    /// `OrderedReady`: this pod must be Running and available (lifecycle absent or `Normal`) first.
    NotAvailable {
        /// The pod's name.
        pod: String,
    },
    /// `OrderedReady`: this pod is terminating.
    Terminating {
        /// The pod's name.
        pod: String,
    },
    /// A finished pod was (or is being) deleted; it is created again on a later pass.
    FinishedPod {
        /// The pod's name.
        pod: String,
    },
    /// A claim of the pod to create still belongs to an earlier pod of the same name (claim retention).
    StaleClaim {
        /// The pod's name.
        pod: String,
        /// The claim's name.
        claim: String,
    },
    /// `OrderedReady` scale-down: this pod must be Running, Ready and available before a condemned pod
    /// above it is deleted.
    CondemnedBlocked {
        /// The condemned pod's name.
        pod: String,
    },
    /// `OrderedReady` scale-down: one condemned pod was deleted (or moved to `PreparingDelete`).
    CondemnedDeleted {
        /// The pod's name.
        pod: String,
    },
    /// A lifecycle state was refreshed; updates wait for the next pass.
    LifecycleRefreshed,
    /// `updateStrategy.type: OnDelete`: pods are only replaced when deleted by someone else.
    OnDelete,
    /// `rollingUpdate.paused`.
    Paused,
    /// The rolling update reached `maxUnavailable` at this pod.
    MaxUnavailable {
        /// The pod that waits.
        pod: String,
        /// Pods unavailable.
        unavailable: usize,
        /// `maxUnavailable`.
        max_unavailable: i64,
    },
    /// `volumeClaimUpdateStrategy: OnPodRollingUpdate`: this pod is updated once each of its claims
    /// requests its template's storage and has the capacity it requests.
    ClaimsNotReady {
        /// The pod that waits.
        pod: String,
    },
    /// The StatefulSet is being deleted: only the status is written.
    Deleting,
}

impl fmt::Display for Wait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Created { pod } => write!(
                f,
                "OrderedReady: created {pod}, waiting for it to be Running and Ready"
            ),
            Self::NotAvailable { pod } => {
                write!(
                    f,
                    "OrderedReady: waiting for {pod} to be Running and available"
                )
            }
            Self::Terminating { pod } => write!(f, "OrderedReady: waiting for {pod} to terminate"),
            Self::FinishedPod { pod } => {
                write!(f, "{pod} finished; it is created again once deleted")
            }
            Self::StaleClaim { pod, claim } => {
                write!(
                    f,
                    "claim {claim} of {pod} still belongs to an earlier {pod}"
                )
            }
            Self::CondemnedBlocked { pod } => write!(
                f,
                "OrderedReady scale-down: waiting for pods to be Running and available before deleting {pod}"
            ),
            Self::CondemnedDeleted { pod } => {
                write!(f, "OrderedReady scale-down: deleting {pod}, one at a time")
            }
            Self::LifecycleRefreshed => {
                f.write_str("lifecycle states refreshed; updates wait for the next pass")
            }
            Self::OnDelete => {
                f.write_str("updateStrategy OnDelete: pods are replaced only when deleted")
            }
            Self::Paused => f.write_str("rolling update paused"),
            Self::MaxUnavailable {
                pod,
                unavailable,
                max_unavailable,
            } => write!(
                f,
                "{unavailable} pod(s) unavailable, maxUnavailable {max_unavailable}: {pod} waits"
            ),
            Self::ClaimsNotReady { pod } => write!(
                f,
                "{pod} waits for its claims to request and have their templates' storage"
            ),
            Self::Deleting => f.write_str("the StatefulSet is being deleted"),
        }
    }
}
