//! The PodProbeMarker and NodePodProbe controllers of kruise-manager (gate `PodProbeMarkerGate`, on by
//! default as upstream since v1.4). The decisions are [`kruise_schedule::pod_probe`]'s.
//!
//! * [`marker`] (`podprobemarker`): for each PodProbeMarker, the pods it probes (active, initialized, on a
//!   node), its probes merged into the NodePodProbe of each of their nodes (created when missing), and
//!   `status.matchedPods`; a finalizer keeps a deleted marker until its probes are out of every
//!   NodePodProbe;
//! * [`node_probe`] (`nodepodprobe`): one NodePodProbe per node (created with the node, deleted with it),
//!   the probes of pods that are gone dropped from its spec, and its status (written by kruise-daemon)
//!   carried to the pods: the marker's `podConditionType` through `pods/status`, the `markerPolicy`
//!   labels and annotations through a merge patch of the pod.
//!
//! Both run on kruise-runtime's shared informers (pods, nodes, markers, NodePodProbes).
//!
//! ```
//! use kruise_runtime::controllers::ControllerSet;
//!
//! let mut controllers = ControllerSet::new();
//! kruise_manager::pod_probe_marker::register(&mut controllers, true);
//! assert_eq!(controllers.names(), ["podprobemarker", "nodepodprobe"]);
//! let mut gated_off = ControllerSet::new();
//! kruise_manager::pod_probe_marker::register(&mut gated_off, false);
//! assert!(gated_off.names().is_empty());
//! ```

pub mod marker;
pub mod node_lifecycle;
pub mod node_probe;

use std::time::Duration;

use kruise_runtime::actions::ActionError;
use kruise_runtime::controllers::ControllerSet;
use kruise_runtime::harness::Retry;

/// Adds both controllers to `controllers` when `gate` (`PodProbeMarkerGate`) is on.
pub fn register(controllers: &mut ControllerSet, gate: bool) {
    if gate {
        controllers.register_fn(marker::NAME, marker::run);
        controllers.register_fn(node_probe::NAME, node_probe::run);
    }
}

/// Why a reconcile of either controller failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PodProbeError {
    /// A write was refused or conflicted.
    #[error(transparent)]
    Action(#[from] ActionError),
}

impl Retry for PodProbeError {
    fn retry_after(&self) -> Duration {
        match self {
            Self::Action(action) => action.requeue_after(),
        }
    }

    fn is_conflict(&self) -> bool {
        matches!(self, Self::Action(ActionError::Conflict { .. }))
    }
}
