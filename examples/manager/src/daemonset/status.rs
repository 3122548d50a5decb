//! Writing what a reconcile found back to the DaemonSet: the status through the `status` subresource (a full
//! replace carrying the `resourceVersion` it was computed from, so zero counts are written too and a
//! concurrent change gives 409).

use kruise_api::apps::v1beta1::{DaemonSet, DaemonSetStatus};
use kube::Api;

use crate::actions::{self, ActionError};

/// Whether `new` differs from what the DaemonSet shows.
#[must_use]
pub fn status_changed(daemonset: &DaemonSet, new: &DaemonSetStatus) -> bool {
    daemonset.status.as_ref() != Some(new)
}

/// Replaces the status of `daemonset` (as read) with `status`.
///
/// # Errors
/// [`ActionError::Conflict`] when the DaemonSet changed since it was read.
pub async fn write_status(
    api: &Api<DaemonSet>,
    daemonset: &DaemonSet,
    status: &DaemonSetStatus,
) -> Result<DaemonSet, ActionError> {
    actions::replace_status(api, daemonset, status).await
}
