//! ImagePullJob v1alpha1: the same shape as v1beta1, plus the MESSAGE printer column.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    ImagePullJobNodeSelector, ImagePullJobPodSelector, ImagePullJobStatus, ImagePullJobTemplate,
    ImagePullPolicy, PullPolicy, SandboxConfig,
};

/// Pre-pulls one image on a set of nodes (through their NodeImage objects).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
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
    ),
    printcolumn(
        name = "MESSAGE",
        type_ = "string",
        json_path = ".status.message",
        description = "Progress summary, or why the job failed."
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
