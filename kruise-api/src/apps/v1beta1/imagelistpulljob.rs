//! ImageListPullJob v1beta1 (upstream `apis/apps/v1beta1/imagelistpulljob_types.go`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ImagePullJobTemplate;
use crate::omitempty::is_zero;

/// Pre-pulls a list of images, through one ImagePullJob per image.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "ImageListPullJob",
    namespaced,
    status = "ImageListPullJobStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "ImageListPullJob pre-pulls a list of images on a set of nodes.",
    printcolumn(
        name = "TOTAL",
        type_ = "integer",
        json_path = ".status.desired",
        description = "ImagePullJobs wanted (one per image)."
    ),
    printcolumn(
        name = "SUCCEEDED",
        type_ = "integer",
        json_path = ".status.succeeded",
        description = "ImagePullJobs that pulled on every node."
    ),
    printcolumn(
        name = "COMPLETED",
        type_ = "integer",
        json_path = ".status.completed",
        description = "ImagePullJobs that finished."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "Time since creation."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ImageListPullJobSpec {
    /// The images to pull, each `name:tag` (or a digest).
    pub images: Vec<String>,
    /// Where, how and how fast to pull, applied to every image (inline in the JSON).
    #[serde(flatten)]
    pub template: ImagePullJobTemplate,
}

/// What the ImageListPullJob controller observed (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageListPullJobStatus {
    /// When the controller first saw the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When every ImagePullJob had finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// ImagePullJobs wanted (one per image).
    #[serde(default)]
    pub desired: i32,
    /// ImagePullJobs with pulls in progress.
    #[serde(default)]
    pub active: i32,
    /// ImagePullJobs that finished (every node succeeded or failed).
    #[serde(default)]
    pub completed: i32,
    /// ImagePullJobs that pulled successfully on every node.
    #[serde(default)]
    pub succeeded: i32,
    /// The ImagePullJobs with failed nodes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_image_statuses: Vec<FailedImageStatus>,
}

/// An ImagePullJob of the list that failed on some nodes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailedImageStatus {
    /// The ImagePullJob's name.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub image_pull_job: String,
    /// The image.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub name: String,
    /// The ImagePullJob's status message.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub message: String,
}
