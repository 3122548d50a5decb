//! The `kruise` verbs that change workloads on a cluster, with kubectl's habits (as OpenKruise's
//! `kubectl kruise` has them): `rollout pause|resume|history|undo|restart|approve`, `set image` and
//! `scaledown`, plus `rollout status` which follows a rollout. Each reads the cluster named by the
//! connection flags ([`ClusterArgs`]), decides its write with a pure function ([`patches`],
//! [`revision_history`], [`restart_patch`], [`approve_patch`]), and sends it as a merge patch conditional on the `resourceVersion` it read, so a
//! concurrent change is refused (409) rather than overwritten.
//!
//! The workloads are named as kubectl names them, `KIND/NAME` ([`target`]); the API version is the one
//! the cluster serves for the kind (v1beta1 where served, else v1alpha1, as the Go OpenKruise of v1.8 serves
//! CloneSets only in v1alpha1), so the verbs work against either implementation.

pub mod approve_patch;
pub mod connection;
pub mod merge_diff;
pub mod patches;
pub mod progress_screen;
pub mod restart_patch;
pub mod revision_history;
pub mod rollout_status;
pub mod rollout_verbs;
pub mod status_follow;
pub mod strategy;
pub mod target;
pub mod verbs;

pub use connection::ClusterArgs;
pub use target::{Target, WorkloadKind};

// `set env`, `set resources` and `create job --from=advancedcronjob/NAME`.
pub mod container_selector;
pub mod create_job;
pub mod env_changes;
pub mod env_patch;
pub mod job_from_cron;
pub mod resources_patch;
pub mod set_verbs;
