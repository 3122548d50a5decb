//! Advanced DaemonSet (upstream `apis/apps/v1alpha1/daemonset_types.go`, `daemonset_conversion.go`).

/// Annotation on a v1alpha1 Advanced DaemonSet: `"true"` limits pod creation by the partition. The v1beta1
/// form is `spec.scaleStrategy.partitionedScaling`.
pub const PROGRESSIVE_CREATE_POD_ANNOTATION: &str = "daemonset.kruise.io/progressive-create-pod";
