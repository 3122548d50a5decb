//! BroadcastJob v1alpha1: the same shape as v1beta1.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    BroadcastJobPhase, BroadcastJobStatus, CompletionPolicy, CompletionPolicyType, FailurePolicy,
    FailurePolicyType, JobCondition, JobConditionType, job_condition_reason,
};
use crate::omitempty::is_zero;

/// A job that runs one pod to completion on every eligible node, like a DaemonSet of run-once pods.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
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
