//! The container status snapshot of a ContainerRecreateRequest.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omitempty::is_zero;

/// A container's status as the CRR controller last saw it. v1alpha1 stores a JSON list of these in the
/// `crr.apps.kruise.io/sync-container-statuses` annotation; v1beta1 in `status.containerStatusSnapshot`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatusSnapshot {
    /// Container name.
    #[serde(default)]
    pub name: String,
    /// Whether the container passed its readiness probe.
    #[serde(default)]
    pub ready: bool,
    /// The container's restart count.
    #[serde(default)]
    pub restart_count: i32,
    /// The container's ID (`<runtime>://<id>`).
    #[serde(rename = "containerID", default, skip_serializing_if = "is_zero")]
    pub container_id: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotation_value_shape() {
        let list = vec![
            ContainerStatusSnapshot {
                name: "app".into(),
                ready: true,
                restart_count: 2,
                container_id: "containerd://abc".into(),
            },
            ContainerStatusSnapshot {
                name: "log".into(),
                ready: false,
                restart_count: 0,
                container_id: String::new(),
            },
        ];
        assert_eq!(
            crate::annotations::to_value(&list),
            r#"[{"name":"app","ready":true,"restartCount":2,"containerID":"containerd://abc"},{"name":"log","ready":false,"restartCount":0}]"#
        );
    }
}
