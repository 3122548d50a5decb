//! PersistentPodState v1alpha1 (upstream `apis/apps/v1alpha1/persistentpodstate_types.go`).

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::apps::v1beta1::TargetReference;
pub use crate::apps::v1beta1::{PersistentPodAnnotation, PersistentPodStateStatus, PodState};
use crate::omitempty::is_zero;

/// Keeps the node topology and chosen annotations of a StatefulSet's pods across pod recreation.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "PersistentPodState",
    namespaced,
    status = "PersistentPodStateStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "PersistentPodState keeps where the pods of a StatefulSet ran, so that recreated pods return there."
)]
#[serde(rename_all = "camelCase")]
pub struct PersistentPodStateSpec {
    /// The workload whose pods are recorded (a StatefulSet, Advanced StatefulSet, or a whitelisted custom
    /// workload); immutable.
    #[serde(rename = "targetRef")]
    pub target_reference: TargetReference,
    /// Pod annotations to record and restore on the recreated pod.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub persistent_pod_annotations: Vec<PersistentPodAnnotation>,
    /// Node labels a recreated pod must match again (required node affinity).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_persistent_topology: Option<NodeTopologyTerm>,
    /// Node labels a recreated pod should match again (preferred node affinity, weighted).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub preferred_persistent_topology: Vec<PreferredTopologyTerm>,
    /// When a pod's record is dropped: `WhenScaled` (the default) or `WhenDeleted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_pod_state_retention_policy: Option<PersistentPodStateRetentionPolicyType>,
}

/// A weighted set of node label keys (v1alpha1 field names).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PreferredTopologyTerm {
    /// The preference's weight (1 to 100).
    pub weight: i32,
    /// The node label keys.
    pub preference: NodeTopologyTerm,
}

/// Node label keys whose values a recreated pod keeps (v1alpha1 field names).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeTopologyTerm {
    /// The node label keys, e.g. `kubernetes.io/hostname` (v1beta1: `keys`).
    pub node_topology_keys: Vec<String>,
}

crate::open_enum! {
    /// When the record of a pod is removed (v1alpha1: any string is accepted).
    pub enum PersistentPodStateRetentionPolicyType {
        /// When the workload scales down below the pod's ordinal (the default).
        WhenScaled = "WhenScaled",
        /// Only when the workload is deleted.
        WhenDeleted = "WhenDeleted",
    }
}
