//! ImagePullJob v1beta1 (upstream `apis/apps/v1beta1/imagepulljob_types.go`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CompletionPolicy, SandboxConfig};
use crate::omitempty::is_zero;

/// Pre-pulls one image on a set of nodes (through their NodeImage objects).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "ImagePullJob",
    namespaced,
    status = "ImagePullJobStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "ImagePullJob pre-pulls an image on a set of nodes.",
    printcolumn(
        name = "TOTAL",
        type_ = "integer",
        json_path = ".status.desired",
        description = "Nodes the job targets."
    ),
    printcolumn(
        name = "ACTIVE",
        type_ = "integer",
        json_path = ".status.active",
        description = "Pulls in progress."
    ),
    printcolumn(
        name = "SUCCEED",
        type_ = "integer",
        json_path = ".status.succeeded",
        description = "Pulls that succeeded."
    ),
    printcolumn(
        name = "FAILED",
        type_ = "integer",
        json_path = ".status.failed",
        description = "Pulls that failed."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "Time since creation."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobSpec {
    /// The image to pull, `name:tag` (or a digest).
    pub image: String,
    /// Where, how and how fast to pull (inline in the JSON).
    #[serde(flatten)]
    pub template: ImagePullJobTemplate,
}

/// The pull parameters shared by ImagePullJob and ImageListPullJob; their JSON fields sit directly in the
/// job's spec (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobTemplate {
    /// Names of Secrets in the job's namespace to authenticate to the registry with.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pull_secrets: Vec<String>,
    /// The nodes to pull on, by name or by labels (not both); unset means all nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<ImagePullJobNodeSelector>,
    /// Pull on the nodes that run the pods this selects; excludes `selector`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_selector: Option<ImagePullJobPodSelector>,
    /// How many nodes may pull at once (1 when unset; 0 pauses the job).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<IntOrString>,
    /// Timeout and retries of each pull.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_policy: Option<PullPolicy>,
    /// When the job counts as finished and when it is deleted afterwards (`Never` re-pulls every day).
    pub completion_policy: CompletionPolicy,
    /// Metadata passed to the CRI `PullImage` call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_config: Option<SandboxConfig>,
    /// `IfNotPresent` (the default for ImagePullJobs) or `Always`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<ImagePullPolicy>,
}

/// Nodes selected by name or by labels.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobNodeSelector {
    /// Node names.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub names: Vec<String>,
    /// A node label selector (`matchLabels`, `matchExpressions`, inline in the JSON).
    #[serde(flatten)]
    pub label_selector: LabelSelector,
}

/// Pods whose nodes should pull the image.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobPodSelector {
    /// A pod label selector (`matchLabels`, `matchExpressions`, inline in the JSON).
    #[serde(flatten)]
    pub label_selector: LabelSelector,
}

/// Timeout and retries of an image pull.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PullPolicy {
    /// Seconds one pull attempt may take (defaults to 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// Attempts before the pull counts as failed (defaults to 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<i32>,
}

crate::open_enum! {
    /// When kruise-daemon pulls an image.
    pub enum ImagePullPolicy {
        /// Pull even if the image is present, to get the newest one for the tag.
        Always = "Always",
        /// Pull only when the image is missing on the node.
        IfNotPresent = "IfNotPresent",
    }
}

/// What the ImagePullJob controller observed (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePullJobStatus {
    /// When the controller first saw the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When the job finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// Nodes the job targets.
    #[serde(default)]
    pub desired: i32,
    /// Pulls in progress.
    #[serde(default)]
    pub active: i32,
    /// Pulls that succeeded.
    #[serde(default)]
    pub succeeded: i32,
    /// Pulls that failed.
    #[serde(default)]
    pub failed: i32,
    /// Progress summary, such as `job is running, progress 40.0%` or `job has completed`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub message: String,
    /// Names of the nodes where the pull failed, sorted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_nodes: Vec<String>,
}
