//! Why one Advanced DaemonSet reconcile failed, and how soon to try again.

use std::time::Duration;

use crate::actions::ActionError;
use crate::workload::history::HistoryError;

/// A failed reconcile of one Advanced DaemonSet. Every variant names the DaemonSet (`namespace/name`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReconcileError {
    /// A write was refused or failed (409 conflicts included: decide again from the newer state).
    #[error("DaemonSet {daemonset}: {source}")]
    Action {
        /// `namespace/name` of the DaemonSet.
        daemonset: String,
        /// The failed write.
        #[source]
        source: ActionError,
    },
    /// The revision of the pod template cannot be built (an invalid quantity in `spec.template`).
    #[error("DaemonSet {daemonset}: spec.template: {source}")]
    Revision {
        /// `namespace/name` of the DaemonSet.
        daemonset: String,
        /// Why.
        #[source]
        source: kruise_inplace::revision::RevisionError,
    },
    /// The revision names kept colliding with revisions of other data.
    #[error("DaemonSet {daemonset}: ControllerRevision names collided {attempts} times in a row")]
    Collisions {
        /// `namespace/name` of the DaemonSet.
        daemonset: String,
        /// How many names were tried.
        attempts: i32,
    },
    /// The planner stopped with upstream's reconcile error (an invalid `maxUnavailable`, `maxSurge`,
    /// `partition` or `burstReplicas`, or an in-place state that does not parse).
    #[error("DaemonSet {daemonset}: the plan stopped: {source}")]
    Plan {
        /// `namespace/name` of the DaemonSet.
        daemonset: String,
        /// Why.
        #[source]
        source: kruise_schedule::daemonset::Error,
    },
    /// An in-place update could not be rendered for a pod.
    #[error("DaemonSet {daemonset}: pod {pod}: {source}")]
    InPlace {
        /// `namespace/name` of the DaemonSet.
        daemonset: String,
        /// The pod's name.
        pod: String,
        /// Why.
        #[source]
        source: kruise_inplace::Error,
    },
    /// The object has no namespace or UID (not read from a cluster).
    #[error("DaemonSet {daemonset}: metadata.{field} is missing")]
    Metadata {
        /// What is known of `namespace/name`.
        daemonset: String,
        /// The missing field.
        field: &'static str,
    },
}

impl ReconcileError {
    /// A failed step of the ControllerRevision history of the Advanced DaemonSet `daemonset` (`namespace/name`).
    #[must_use]
    pub fn history(daemonset: String, error: HistoryError) -> Self {
        match error {
            HistoryError::Revision(source) => Self::Revision { daemonset, source },
            HistoryError::Action(source) => Self::Action { daemonset, source },
            HistoryError::Collisions { attempts } => Self::Collisions {
                daemonset,
                attempts,
            },
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

impl kruise_runtime::harness::Retry for ReconcileError {
    fn retry_after(&self) -> Duration {
        self.requeue_after()
    }

    fn is_conflict(&self) -> bool {
        ReconcileError::is_conflict(self)
    }
}
