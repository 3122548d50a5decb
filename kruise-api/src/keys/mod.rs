//! Every well-known label, annotation, condition, readiness gate, environment variable and finalizer that
//! OpenKruise reads or writes, as documented constants grouped by the feature that owns them.
//!
//! The strings are byte-for-byte those of upstream, so that a pod touched by the Go OpenKruise and by
//! kruise-rs is read the same way by both. Each constant says what kind of key it is, who writes it and the
//! format of its value.

pub mod broadcastjob;
pub mod cloneset;
pub mod cronjob;
pub mod crr;
pub mod daemonset;
pub mod image_pull;
pub mod inplace;
pub mod kubernetes;
pub mod launch_priority;
pub mod lifecycle;
pub mod persistent_pod_state;
pub mod pod_probe;
pub mod pod_readiness;
pub mod pub_policy;
pub mod resource_distribution;
pub mod sidecar_terminator;
pub mod sidecarset;
pub mod statefulset;
pub mod united_deployment;
pub mod workloadspread;
