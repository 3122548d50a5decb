//! BroadcastJob v1beta1 (upstream `apis/apps/v1beta1/broadcastjob_types.go`).

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omitempty::is_zero;

/// A job that runs one pod to completion on every eligible node, like a DaemonSet of run-once pods.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "BroadcastJob",
    namespaced,
    status = "BroadcastJobStatus",
    shortname = "bcj",
    derive = "PartialEq",
    derive = "Default",
    doc = "BroadcastJob runs a pod to completion on every eligible node.",
    printcolumn(
        name = "Desired",
        type_ = "integer",
        json_path = ".status.desired",
        description = "Pods wanted: usually the number of nodes the pod fits on."
    ),
    printcolumn(
        name = "Active",
        type_ = "integer",
        json_path = ".status.active",
        description = "Pods still running."
    ),
    printcolumn(
        name = "Succeeded",
        type_ = "integer",
        json_path = ".status.succeeded",
        description = "Pods that finished successfully."
    ),
    printcolumn(
        name = "Failed",
        type_ = "integer",
        json_path = ".status.failed",
        description = "Pods that failed."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "Time since creation."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct BroadcastJobSpec {
    /// How many pods may run at once (defaults to 2^31-1, that is no limit); a percentage is taken of the
    /// desired pods, rounding up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<IntOrString>,
    /// The pod to run on each node (stored schemaless; Kruise's webhook defaults it).
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub template: PodTemplateSpec,
    /// When the job counts as finished and when it is deleted afterwards.
    #[serde(default)]
    pub completion_policy: CompletionPolicy,
    /// Stop creating pods.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub paused: bool,
    /// What to do when a pod fails.
    #[serde(default)]
    pub failure_policy: FailurePolicy,
}

/// When a job (BroadcastJob, ImagePullJob, ImageListPullJob) is finished, and how long it is kept then.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CompletionPolicy {
    /// `Always` (the default) or `Never`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<CompletionPolicyType>,
    /// Seconds after `startTime` after which the job is stopped and marked failed (`Always` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
    /// Seconds after finishing after which the job is deleted; unset keeps it, 0 deletes it at once
    /// (`Always` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
}

crate::open_enum! {
    /// Whether a job ever finishes.
    pub enum CompletionPolicyType {
        /// The job finishes once every target is done (succeeded or failed), on its deadline, or when it
        /// fails (the default).
        Always = "Always",
        /// The job keeps running, so that targets added later (new nodes) are served too.
        Never = "Never",
    }
}

/// What a BroadcastJob does when one of its pods fails.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailurePolicy {
    /// `FailFast` (the default), `Continue` or `Pause`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<FailurePolicyType>,
    /// For `restartPolicy: OnFailure` pods: container restarts (summed over the pod) after which the pod
    /// counts as failed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub restart_limit: i32,
}

crate::open_enum! {
    /// The reaction of a BroadcastJob to a failed pod.
    pub enum FailurePolicyType {
        /// Keep going.
        Continue = "Continue",
        /// Mark the job failed and delete its active pods (the default).
        FailFast = "FailFast",
        /// Set `spec.paused` and stop.
        Pause = "Pause",
    }
}

/// What the BroadcastJob controller observed (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BroadcastJobStatus {
    /// The latest observations (`Complete`, `Failed`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conditions: Vec<JobCondition>,
    /// When the controller first saw the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When the job finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// Pods still running.
    #[serde(default)]
    pub active: i32,
    /// Pods that succeeded.
    #[serde(default)]
    pub succeeded: i32,
    /// Pods that failed.
    #[serde(default)]
    pub failed: i32,
    /// Pods wanted: usually the number of nodes the pod fits on.
    #[serde(default)]
    pub desired: i32,
    /// The phase, in lower case. Always written; an empty phase (Go's zero value) is the `Default`.
    #[serde(default)]
    pub phase: BroadcastJobPhase,
}

crate::open_enum! {
    /// The phase of a BroadcastJob (lower-case wire values).
    pub enum BroadcastJobPhase {
        /// Every target is done.
        Completed = "completed",
        /// Pods are being created or are running.
        Running = "running",
        /// `spec.paused` is set.
        Paused = "paused",
        /// The job failed (a pod failed with `FailFast`, or the deadline passed).
        Failed = "failed",
    }
}

impl Default for BroadcastJobPhase {
    /// The empty phase, which is what Go writes before the controller has set one.
    fn default() -> Self {
        Self::Unknown(String::new())
    }
}

/// One observation about a job.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct JobCondition {
    /// `Complete` or `Failed`.
    #[serde(rename = "type")]
    pub type_: JobConditionType,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// When the condition was last checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason (the BroadcastJob controller uses the type, or `DeadlineExceeded`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reason: String,
    /// Human-readable details.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub message: String,
}

crate::open_enum! {
    /// The type of a job condition.
    pub enum JobConditionType {
        /// Every desired node has run its pod to the end (successfully or not).
        Complete = "Complete",
        /// The job failed: its deadline passed or a pod failed with `FailFast`.
        Failed = "Failed",
    }
}

impl Default for JobConditionType {
    /// The empty type (Go's zero value).
    fn default() -> Self {
        Self::Unknown(String::new())
    }
}

/// Reasons of BroadcastJob conditions besides the condition type itself.
pub mod job_condition_reason {
    /// The `Failed` condition when `completionPolicy.activeDeadlineSeconds` passed.
    pub const DEADLINE_EXCEEDED: &str = "DeadlineExceeded";
}
