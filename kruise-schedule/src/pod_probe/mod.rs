//! The PodProbeMarker and NodePodProbe decisions (upstream `pkg/controller/podprobemarker`,
//! `pkg/controller/nodepodprobe`, `pkg/daemon/podprobe` and `pkg/webhook/podprobemarker`) as pure functions:
//!
//! * [`node_spec`]: which pods a PodProbeMarker probes, and the NodePodProbe spec of a node once a marker's
//!   probes are merged in, removed (marker deleted), or the probes of vanished pods dropped;
//! * [`pod_marking`]: from one pod's probe results, its pod conditions (a strategic patch of
//!   `pods/status`) and the labels and annotations of the markers' `markerPolicy` (a merge patch);
//! * [`prober_state`]: one probe worker of the node prober (initial delay, thresholds, the result to
//!   report), fed with the container it sees and the probe's outcome;
//! * [`probe_status`]: the NodePodProbe status from its spec and the worker results, with transition times;
//! * [`validation`]: the rules of upstream's PodProbeMarker validating webhook.
//!
//! The callers observe the cluster and the container runtime, call these with the clock's `now`, and write.
//!
//! ```
//! use kruise_schedule::pod_probe::{probe_name, split_probe_name};
//!
//! assert_eq!(probe_name("healthy", "idle"), "healthy#idle");
//! assert_eq!(split_probe_name("healthy#idle"), Some(("healthy", "idle")));
//! assert_eq!(split_probe_name("no-marker"), None);
//! ```

pub mod node_spec;
pub mod pod_marking;
pub mod probe_status;
pub mod prober_state;
pub mod validation;

/// The finalizer the PodProbeMarker controller puts on every marker, removed once the marker's probes
/// are out of the NodePodProbes.
pub const CLEANUP_FINALIZER: &str = "kruise.io/node-pod-probe-cleanup";

/// The name of a probe in a NodePodProbe: `<PodProbeMarker name>#<probe name>`.
#[must_use]
pub fn probe_name(marker: &str, probe: &str) -> String {
    format!("{marker}#{probe}")
}

/// `(marker, probe)` of a NodePodProbe probe name, `None` without a `#`.
#[must_use]
pub fn split_probe_name(name: &str) -> Option<(&str, &str)> {
    name.split_once('#')
}
