//! Why one Advanced StatefulSet reconcile failed, and how soon to try again.

use std::time::Duration;

use crate::actions::ActionError;
use crate::workload::history::HistoryError;

/// How soon a claim expansion the API server refused is tried again: the refusal lasts until someone
/// changes the claim or its StorageClass, so retrying sooner would only repeat the request and its Event.
pub const CLAIM_EXPANSION_RETRY: Duration = Duration::from_secs(60);

/// A failed reconcile of one Advanced StatefulSet. Every variant names it (`namespace/name`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReconcileError {
    /// A write was refused or failed (409 conflicts included: decide again from the newer state).
    #[error("StatefulSet {set}: {source}")]
    Action {
        /// `namespace/name` of the StatefulSet.
        set: String,
        /// The failed write.
        #[source]
        source: ActionError,
    },
    /// The revision of the pod template cannot be built (an invalid quantity in `spec.template`).
    #[error("StatefulSet {set}: spec.template: {source}")]
    Revision {
        /// `namespace/name` of the StatefulSet.
        set: String,
        /// Why.
        #[source]
        source: kruise_inplace::revision::RevisionError,
    },
    /// The revision names kept colliding with revisions of other data.
    #[error("StatefulSet {set}: ControllerRevision names collided {attempts} times in a row")]
    Collisions {
        /// `namespace/name` of the StatefulSet.
        set: String,
        /// How many names were tried.
        attempts: i32,
    },
    /// The planner stopped with upstream's reconcile error.
    #[error("StatefulSet {set}: {source}")]
    Plan {
        /// `namespace/name` of the StatefulSet.
        set: String,
        /// Why.
        #[source]
        source: kruise_schedule::statefulset::Error,
    },
    /// An in-place update could not be rendered for a pod.
    #[error("StatefulSet {set}: pod {pod}: {source}")]
    InPlace {
        /// `namespace/name` of the StatefulSet.
        set: String,
        /// The pod's name.
        pod: String,
        /// Why.
        #[source]
        source: kruise_inplace::Error,
    },
    /// The API server refused to expand a claim (`volumeClaimUpdateStrategy: OnPodRollingUpdate`): the
    /// claim is not bound, its StorageClass does not allow expansion, ... The rollout waits; the expansion
    /// is tried again after [`CLAIM_EXPANSION_RETRY`] (or when the StatefulSet or its pods change).
    #[error("StatefulSet {set}: expanding PersistentVolumeClaim {claim} was refused: {message}")]
    ClaimExpansion {
        /// `namespace/name` of the StatefulSet.
        set: String,
        /// The claim's name.
        claim: String,
        /// The API server's message.
        message: String,
    },
    /// The object has no name, namespace or UID (not read from a cluster).
    #[error("StatefulSet {set}: metadata.{field} is missing")]
    Metadata {
        /// What is known of `namespace/name`.
        set: String,
        /// The missing field.
        field: &'static str,
    },
}

impl ReconcileError {
    /// A failed step of the ControllerRevision history of the Advanced StatefulSet `set` (`namespace/name`).
    #[must_use]
    pub fn history(set: String, error: HistoryError) -> Self {
        match error {
            HistoryError::Revision(source) => Self::Revision { set, source },
            HistoryError::Action(source) => Self::Action { set, source },
            HistoryError::Collisions { attempts } => Self::Collisions { set, attempts },
        }
    }

    /// How soon to reconcile again.
    #[must_use]
    pub fn requeue_after(&self) -> Duration {
        match self {
            Self::Action { source, .. } => source.requeue_after(),
            Self::Plan {
                source: kruise_schedule::statefulset::Error::ClaimNotExpandable { .. },
                ..
            }
            | Self::ClaimExpansion { .. } => CLAIM_EXPANSION_RETRY,
            Self::Collisions { .. } | Self::Plan { .. } | Self::InPlace { .. } => {
                Duration::from_secs(5)
            }
            Self::Revision { .. } | Self::Metadata { .. } => Duration::from_secs(60),
        }
    }

    /// Whether the failure is a stale read (409): expected under concurrency, logged quietly.
    #[must_use]
    pub fn is_conflict(&self) -> bool {
        matches!(
            self,
            Self::Action {
                source: ActionError::Conflict { .. },
                ..
            }
        )
    }
}
