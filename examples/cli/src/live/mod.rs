//! The `kruise` verbs that change workloads on a cluster, with kubectl's habits (as OpenKruise's
//! `kubectl kruise` has them): `rollout pause|resume`, `set image` and `scaledown`. Each reads the cluster
//! named by the connection flags ([`ClusterArgs`]), decides its write with a pure function
//! ([`patches`]), and sends it as a merge patch conditional on the `resourceVersion` it read, so a
//! concurrent change is refused (409) rather than overwritten.
//!
//! The workloads are named as kubectl names them, `KIND/NAME` ([`target`]); the API version is the one
//! the cluster serves for the kind (v1beta1 where served, else v1alpha1, as the Go OpenKruise of v1.8 serves
//! CloneSets only in v1alpha1), so the verbs work against either implementation.

pub mod connection;
pub mod patches;
pub mod target;
pub mod verbs;

pub use connection::ClusterArgs;
pub use target::{Target, WorkloadKind};
