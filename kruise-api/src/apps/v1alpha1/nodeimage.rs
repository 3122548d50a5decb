//! NodeImage v1alpha1: v1beta1 without the pull secrets' `mode`.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::SandboxConfig;
pub use crate::apps::v1beta1::{
    ImagePullPhase, ImageStatus, ImageTagPullPolicy, ImageTagSpec, ImageTagStatus, NodeImageStatus,
    SyncStatus, SyncStatusPhase,
};
use crate::omitempty::is_zero;

/// The images kruise-daemon should pull on one node (named like the node), and how the pulls went.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "NodeImage",
    status = "NodeImageStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "NodeImage lists the images to pull on one node and reports the pulls.",
    printcolumn(
        name = "DESIRED",
        type_ = "integer",
        json_path = ".status.desired",
        description = "Image tags to pull on this node."
    ),
    printcolumn(
        name = "PULLING",
        type_ = "integer",
        json_path = ".status.pulling",
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
pub struct NodeImageSpec {
    /// Image name (without tag) → what to pull of it; at most 256 images per node.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub images: BTreeMap<String, ImageSpec>,
}

/// The tags of one image to pull on a v1alpha1 NodeImage.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageSpec {
    /// Secrets to authenticate to the registry with.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pull_secrets: Vec<ReferenceObject>,
    /// The tags to pull.
    pub tags: Vec<ImageTagSpec>,
    /// Metadata passed to the CRI `PullImage` call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_config: Option<SandboxConfig>,
}

/// A namespaced reference to a pull Secret (v1alpha1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReferenceObject {
    /// The Secret's namespace.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub namespace: String,
    /// The Secret's name.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub name: String,
}
