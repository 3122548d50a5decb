//! NodeImage v1beta1 (upstream `apis/apps/v1beta1/nodeimage_types.go`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ImagePullPolicy, SandboxConfig};
use crate::omitempty::is_zero;

/// The images kruise-daemon should pull on one node (named like the node), and how the pulls went.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
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

/// The tags of one image to pull on a v1beta1 NodeImage.
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

/// A namespaced reference to a pull Secret, with how it got there (v1beta1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReferenceObject {
    /// The Secret's namespace.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub namespace: String,
    /// The Secret's name.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub name: String,
    /// How the Secret was provided: ImagePullJobs copy their pull secrets into kruise-daemon's namespace
    /// and write [`SECRET_MODE_BATCH`](crate::keys::image_pull::SECRET_MODE_BATCH). v1alpha1 has no such
    /// field.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mode: String,
}

/// One tag of an image to pull, with its owners (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageTagSpec {
    /// The tag.
    pub tag: String,
    /// When the tag was added (the webhook sets the current time when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<Time>,
    /// Timeout, retries, deadline and time to live of the pull.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pull_policy: Option<ImageTagPullPolicy>,
    /// The objects (ImagePullJobs) that asked for this tag.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub owner_references: Vec<ObjectReference>,
    /// A counter bumped whenever the request changes, so that the daemon pulls again; its status reports
    /// the version it handled.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub version: i64,
    /// `IfNotPresent` or `Always`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<ImagePullPolicy>,
}

/// How kruise-daemon pulls one tag.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageTagPullPolicy {
    /// Seconds one pull attempt may take (defaults to 600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<i32>,
    /// Attempts before the pull counts as failed (defaults to 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff_limit: Option<i32>,
    /// Seconds after the pull finished (either way) after which the tag is removed; unset keeps it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
    /// Seconds after the pull started after which it is given up; unset means no deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
}

/// What kruise-daemon reported for the node (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeImageStatus {
    /// Tags to pull.
    #[serde(default)]
    pub desired: i32,
    /// Pulls that succeeded.
    #[serde(default)]
    pub succeeded: i32,
    /// Pulls that failed.
    #[serde(default)]
    pub failed: i32,
    /// Pulls not finished yet.
    #[serde(default)]
    pub pulling: i32,
    /// Pulls not started yet (HEAD; older daemons leave it 0).
    #[serde(default)]
    pub waiting: i32,
    /// Image name → the state of each of its tags.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub image_statuses: BTreeMap<String, ImageStatus>,
    /// When all the pulls requested of a new node had first finished, and how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_sync_status: Option<SyncStatus>,
}

/// The pulls of one image on a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageStatus {
    /// One entry per tag.
    pub tags: Vec<ImageTagStatus>,
}

/// The pull of one tag on a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageTagStatus {
    /// The tag.
    pub tag: String,
    /// `Waiting`, `Pulling`, `Succeeded` or `Failed`.
    pub phase: ImagePullPhase,
    /// Percent done, 0 to 100 (may go back when a pull is retried).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub progress: i32,
    /// When the daemon started the pull.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When the pull finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// The spec `version` of the tag this status is about.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub version: i64,
    /// The pulled image's ID.
    #[serde(default, rename = "imageID", skip_serializing_if = "is_zero")]
    pub image_id: String,
    /// Details, such as the last error.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub message: String,
}

crate::open_enum! {
    /// The state of one image pull.
    pub enum ImagePullPhase {
        /// Not started.
        Waiting = "Waiting",
        /// Started, not finished.
        Pulling = "Pulling",
        /// Done.
        Succeeded = "Succeeded",
        /// Gave up.
        Failed = "Failed",
    }
}

impl Default for ImagePullPhase {
    /// The empty phase (Go's zero value).
    fn default() -> Self {
        Self::Unknown(String::new())
    }
}

/// The outcome of the first round of pulls on a node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SyncStatus {
    /// When it finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync_at: Option<Time>,
    /// `Succeeded` or `Failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<SyncStatusPhase>,
    /// Details.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub message: String,
}

crate::open_enum! {
    /// How the first round of pulls on a node went.
    pub enum SyncStatusPhase {
        /// Every pull succeeded.
        Succeeded = "Succeeded",
        /// Some pull failed.
        Failed = "Failed",
    }
}
