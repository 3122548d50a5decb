//! Why a reconcile of a PodFleet failed. Every error names the fleet (`namespace/name`); the controller
//! retries a failed reconcile after a pause.

use std::time::Duration;

/// A failed reconcile.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// The fleet lacks a field the API server always sets.
    #[error("PodFleet {fleet}: metadata.{field} is missing")]
    Metadata {
        /// `namespace/name`.
        fleet: String,
        /// The missing field.
        field: &'static str,
    },
    /// The pod template cannot be hashed into a revision.
    #[error("PodFleet {fleet}: revision of the pod template: {source}")]
    Revision {
        /// `namespace/name`.
        fleet: String,
        /// Why.
        source: kruise_inplace::revision::RevisionError,
    },
    /// A request to the API server failed.
    #[error("PodFleet {fleet}: {what}: {}", describe(.source))]
    Api {
        /// `namespace/name`.
        fleet: String,
        /// What was asked, with the object (`delete pod ns/web-abcde`).
        what: String,
        /// The client's error.
        source: kube::Error,
    },
    /// The in-place update of a pod cannot be rendered.
    #[error("PodFleet {fleet}: in-place update of pod {pod}: {source}")]
    InPlace {
        /// `namespace/name`.
        fleet: String,
        /// The pod's name.
        pod: String,
        /// Why.
        source: kruise_inplace::Error,
    },
    /// The planner stopped (upstream's reconcile error; the actions before it were executed).
    #[error("PodFleet {fleet}: {source}")]
    Plan {
        /// `namespace/name`.
        fleet: String,
        /// The planner's error.
        source: kruise_schedule::cloneset::Error,
    },
}

impl ReconcileError {
    /// Whether a pod changed since it was listed: 409 Conflict, or 422 Invalid without causes, which is how
    /// the API server refuses a JSON patch whose `test` of the `resourceVersion` fails (the in-place
    /// patches of `kruise_inplace` start with one).
    pub fn is_conflict(&self) -> bool {
        let Self::Api {
            source: kube::Error::Api(status),
            ..
        } = self
        else {
            return false;
        };
        status.code == 409
            || (status.code == 422
                && status
                    .details
                    .as_ref()
                    .is_none_or(|details| details.causes.is_empty()))
    }

    /// How long to wait before the next attempt: a moment after a conflict (plan again from the pods as they
    /// are now), longer otherwise.
    pub fn retry_after(&self) -> Duration {
        if self.is_conflict() {
            Duration::from_millis(200)
        } else {
            Duration::from_secs(5)
        }
    }
}

/// An API error as `<code> <reason>: <message>`; other client errors as they describe themselves.
fn describe(error: &kube::Error) -> String {
    match error {
        kube::Error::Api(status) => {
            format!("{} {}: {}", status.code, status.reason, status.message)
        }
        other => other.to_string(),
    }
}
