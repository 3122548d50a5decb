//! ImageListPullJob v1alpha1: the same shape as v1beta1.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ImagePullJobTemplate;
pub use crate::apps::v1beta1::{FailedImageStatus, ImageListPullJobStatus};

/// Pre-pulls a list of images, through one ImagePullJob per image.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
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
