//! The CRI sandbox metadata of image pulls (ImagePullJob, ImageListPullJob, NodeImage).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omitempty::is_zero;

/// Labels and annotations kruise-daemon attaches to the pod sandbox config it passes to the CRI `PullImage`
/// call (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxConfig {
    /// Sandbox labels.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub labels: BTreeMap<String, String>,
    /// Sandbox annotations.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub annotations: BTreeMap<String, String>,
}
