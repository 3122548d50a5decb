//! Why one CloneSet reconcile failed, and how soon to try again.

use std::time::Duration;

use crate::actions::ActionError;
use crate::workload::history::HistoryError;

/// A failed reconcile of one CloneSet. Every variant names the CloneSet (`namespace/name`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReconcileError {
    /// A write was refused or failed (409 conflicts included: decide again from the newer state).
    #[error("CloneSet {cloneset}: {source}")]
    Action {
        /// `namespace/name` of the CloneSet.
        cloneset: String,
        /// The failed write.
        #[source]
        source: ActionError,
    },
    /// The revision of the pod template cannot be built (an invalid quantity in `spec.template`).
    #[error("CloneSet {cloneset}: spec.template: {source}")]
    Revision {
        /// `namespace/name` of the CloneSet.
        cloneset: String,
        /// Why.
        #[source]
        source: kruise_inplace::revision::RevisionError,
    },
    /// The revision names kept colliding with revisions of other data.
    #[error("CloneSet {cloneset}: ControllerRevision names collided {attempts} times in a row")]
    Collisions {
        /// `namespace/name` of the CloneSet.
        cloneset: String,
        /// How many names were tried.
        attempts: i32,
    },
    /// The planner stopped with upstream's reconcile error (written into the status as well).
    #[error("CloneSet {cloneset}: {source}")]
    Plan {
        /// `namespace/name` of the CloneSet.
        cloneset: String,
        /// Why.
        #[source]
        source: kruise_schedule::cloneset::Error,
    },
    /// An in-place update could not be rendered for a pod.
    #[error("CloneSet {cloneset}: pod {pod}: {source}")]
    InPlace {
        /// `namespace/name` of the CloneSet.
        cloneset: String,
        /// The pod's name.
        pod: String,
        /// Why.
        #[source]
        source: kruise_inplace::Error,
    },
    /// The object has no name, namespace or UID (not read from a cluster).
    #[error("CloneSet {cloneset}: metadata.{field} is missing")]
    Metadata {
        /// What is known of `namespace/name`.
        cloneset: String,
        /// The missing field.
        field: &'static str,
    },
}

impl ReconcileError {
    /// A failed step of the ControllerRevision history of the CloneSet `cloneset` (`namespace/name`).
    #[must_use]
    pub fn history(cloneset: String, error: HistoryError) -> Self {
        match error {
            HistoryError::Revision(source) => Self::Revision { cloneset, source },
            HistoryError::Action(source) => Self::Action { cloneset, source },
            HistoryError::Collisions { attempts } => Self::Collisions { cloneset, attempts },
        }
    }

    /// How soon to reconcile again.
    #[must_use]
    pub fn requeue_after(&self) -> Duration {
        match self {
            Self::Action { source, .. } => source.requeue_after(),
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
