//! Advanced DaemonSet (spec 1.3, 1.4).

/// Annotation on a v1alpha1 Advanced DaemonSet: `"true"` limits pod creation by the partition. The v1beta1
/// form is `spec.scaleStrategy.partitionedScaling`.
pub const PROGRESSIVE_CREATE_POD_ANNOTATION: &str = "daemonset.kruise.io/progressive-create-pod";
