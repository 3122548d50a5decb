//! PersistentPodState (upstream `apis/apps/v1alpha1/persistentpodstate_types.go`).

/// Annotation on a workload: `"true"` makes Kruise create a PersistentPodState for it.
pub const AUTO_GENERATE_ANNOTATION: &str = "kruise.io/auto-generate-persistent-pod-state";

/// Annotation on a workload: comma list of node label keys required to stay the same.
pub const REQUIRED_TOPOLOGY_ANNOTATION: &str = "kruise.io/required-persistent-topology";

/// Annotation on a workload: comma list of node label keys preferred to stay the same.
pub const PREFERRED_TOPOLOGY_ANNOTATION: &str = "kruise.io/preferred-persistent-topology";

/// Annotation on a workload: comma list of pod annotation keys to persist.
pub const PERSISTENT_POD_ANNOTATIONS_ANNOTATION: &str = "kruise.io/persistent-pod-annotations";

/// Annotation on a pod: the PersistentPodState injected into it.
pub const INJECTED_ANNOTATION: &str = "kruise.io/injected-persistent-pod-state";
