//! The Node objects of the simulated kubelets: Ready, with capacity, addresses and node info.
//!
//! ```
//! use kruise_simulator::node::{NodeShape, node};
//!
//! let now = "2024-05-01T10:00:00Z".parse().unwrap();
//! let node = node("sim-0", 0, &NodeShape::default(), now);
//! let status = node.status.unwrap();
//! assert_eq!(status.capacity.unwrap()["pods"].0, "110");
//! assert!(status.conditions.unwrap().iter().any(|c| c.type_ == "Ready" && c.status == "True"));
//! ```

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Node, NodeAddress, NodeCondition, NodeSpec, NodeStatus, NodeSystemInfo, Taint,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::ObjectMeta;

use super::identity;

/// The label every simulated node carries (value `"true"`).
pub const SIMULATED_LABEL: &str = "kruise-rs.io/simulated-node";

/// The resources a simulated node offers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeShape {
    /// CPU capacity (a Kubernetes quantity).
    pub cpu: String,
    /// Memory capacity (a Kubernetes quantity).
    pub memory: String,
    /// The most pods the node takes.
    pub max_pods: usize,
}

impl Default for NodeShape {
    fn default() -> Self {
        Self {
            cpu: "8".into(),
            memory: "32Gi".into(),
            max_pods: 110,
        }
    }
}

/// The node `name`, the `index`-th of the simulator, as its kubelet would register it at `now`.
#[must_use]
pub fn node(name: &str, index: usize, shape: &NodeShape, now: Timestamp) -> Node {
    let labels = BTreeMap::from([
        ("kubernetes.io/hostname".to_owned(), name.to_owned()),
        ("kubernetes.io/os".to_owned(), "linux".to_owned()),
        ("kubernetes.io/arch".to_owned(), "amd64".to_owned()),
        (SIMULATED_LABEL.to_owned(), "true".to_owned()),
    ]);
    let resources = BTreeMap::from([
        ("cpu".to_owned(), Quantity(shape.cpu.clone())),
        ("memory".to_owned(), Quantity(shape.memory.clone())),
        ("pods".to_owned(), Quantity(shape.max_pods.to_string())),
        ("ephemeral-storage".to_owned(), Quantity("100Gi".into())),
    ]);
    Node {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(labels),
            ..Default::default()
        },
        spec: Some(NodeSpec::default()),
        status: Some(NodeStatus {
            capacity: Some(resources.clone()),
            allocatable: Some(resources),
            conditions: Some(conditions(now)),
            addresses: Some(vec![
                NodeAddress {
                    type_: "InternalIP".into(),
                    address: identity::node_ip(index),
                },
                NodeAddress {
                    type_: "Hostname".into(),
                    address: name.to_owned(),
                },
            ]),
            node_info: Some(NodeSystemInfo {
                architecture: "amd64".into(),
                boot_id: format!("simulated-{index}"),
                container_runtime_version: "docker://simulated".into(),
                kernel_version: "simulated".into(),
                kube_proxy_version: "v1.20.2".into(),
                kubelet_version: "v1.20.2".into(),
                machine_id: format!("simulated-{index}"),
                operating_system: "linux".into(),
                os_image: "kruise-rs node simulator".into(),
                system_uuid: format!("simulated-{index}"),
                ..Default::default()
            }),
            phase: Some("Running".into()),
            ..Default::default()
        }),
    }
}

/// The taint the API server gives a node at registration until it is Ready.
pub const NOT_READY_TAINT: &str = "node.kubernetes.io/not-ready";

/// `taints` without [`NOT_READY_TAINT`], or `None` when it is not there (nothing to write).
#[must_use]
pub fn without_not_ready_taint(taints: &[Taint]) -> Option<Vec<Taint>> {
    let kept: Vec<Taint> = taints
        .iter()
        .filter(|taint| taint.key != NOT_READY_TAINT)
        .cloned()
        .collect();
    (kept.len() != taints.len()).then_some(kept)
}

/// The node conditions with heartbeats at `now`: Ready, no pressure of any kind.
#[must_use]
pub fn conditions(now: Timestamp) -> Vec<NodeCondition> {
    let condition = |kind: &str, status: &str, reason: &str, message: &str| NodeCondition {
        type_: kind.to_owned(),
        status: status.to_owned(),
        reason: Some(reason.to_owned()),
        message: Some(message.to_owned()),
        last_heartbeat_time: Some(Time(now)),
        last_transition_time: None,
    };
    vec![
        condition(
            "MemoryPressure",
            "False",
            "KubeletHasSufficientMemory",
            "kubelet has sufficient memory available",
        ),
        condition(
            "DiskPressure",
            "False",
            "KubeletHasNoDiskPressure",
            "kubelet has no disk pressure",
        ),
        condition(
            "PIDPressure",
            "False",
            "KubeletHasSufficientPID",
            "kubelet has sufficient PID available",
        ),
        condition(
            "Ready",
            "True",
            "KubeletReady",
            "kubelet is posting ready status (simulated)",
        ),
    ]
}

/// A strategic-merge patch for `nodes/<name>/status` that renews the heartbeats (conditions merge by type).
#[must_use]
pub fn heartbeat_patch(now: Timestamp) -> serde_json::Value {
    serde_json::json!({ "status": { "conditions": conditions(now) } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_are_labelled_and_addressed() {
        let now: Timestamp = "2024-05-01T10:00:00Z".parse().unwrap();
        let node = node(
            "sim-3",
            3,
            &NodeShape {
                max_pods: 7,
                ..NodeShape::default()
            },
            now,
        );
        let labels = node.metadata.labels.unwrap();
        assert_eq!(
            labels.get(SIMULATED_LABEL).map(String::as_str),
            Some("true")
        );
        assert_eq!(
            labels.get("kubernetes.io/hostname").map(String::as_str),
            Some("sim-3")
        );
        let status = node.status.unwrap();
        assert_eq!(
            status.allocatable.unwrap().get("pods"),
            Some(&Quantity("7".into()))
        );
        assert_eq!(status.addresses.unwrap()[0].address, "172.16.0.4");
    }

    #[test]
    fn only_the_not_ready_taint_is_removed() {
        let taint = |key: &str| Taint {
            key: key.to_owned(),
            effect: "NoSchedule".to_owned(),
            ..Taint::default()
        };
        assert_eq!(
            without_not_ready_taint(&[taint(NOT_READY_TAINT), taint("dedicated")]),
            Some(vec![taint("dedicated")])
        );
        assert_eq!(without_not_ready_taint(&[taint("dedicated")]), None);
        assert_eq!(without_not_ready_taint(&[]), None);
    }

    #[test]
    fn heartbeats_carry_the_time() {
        let now: Timestamp = "2024-05-01T10:00:00Z".parse().unwrap();
        let patch = heartbeat_patch(now);
        assert_eq!(patch["status"]["conditions"][3]["type"], "Ready");
        assert_eq!(
            patch["status"]["conditions"][3]["lastHeartbeatTime"],
            "2024-05-01T10:00:00Z"
        );
    }
}
