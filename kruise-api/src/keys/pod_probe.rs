//! PodProbeMarker, NodePodProbe and enhanced liveness (upstream `well_know_annotations.go` and the
//! PodProbeMarker types).

/// Annotation on a serverless pod: JSON list of probes.
pub const POD_PROBE_ANNOTATION: &str = "kruise.io/podprobe";

/// Annotation on a pod: comma list of the PodProbeMarkers that match it.
pub const POD_PROBE_MARKER_LIST_ANNOTATION: &str = "kruise.io/podprobemarker-list";

/// Finalizer on a PodProbeMarker until its NodePodProbe entries are cleaned up.
pub const NODE_POD_PROBE_CLEANUP_FINALIZER: &str = "kruise.io/node-pod-probe-cleanup";

/// Annotation on a pod: the pod uses enhanced liveness probes.
pub const USING_ENHANCED_LIVENESS_ANNOTATION: &str = "apps.kruise.io/using-enhanced-liveness";

/// Annotation on a pod: the container probe context of enhanced liveness.
pub const CONTAINER_PROBE_CONTEXT_ANNOTATION: &str = "apps.kruise.io/container-probe-context";
