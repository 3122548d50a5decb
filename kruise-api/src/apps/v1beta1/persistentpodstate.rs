//! PersistentPodState v1beta1: remembers where the pods of a StatefulSet ran (node topology)
//! and some of their annotations, so that a recreated pod lands in the same place and gets them back.

use std::collections::BTreeMap;

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::TargetReference;
use crate::omitempty::is_zero;

/// Keeps the node topology and chosen annotations of a StatefulSet's pods across pod recreation.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
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
    #[schemars(with = "PersistentPodStateRetentionPolicyType")]
    pub persistent_pod_state_retention_policy: Option<PersistentPodStateRetentionPolicyType>,
}

/// A weighted set of node label keys (v1beta1 field names).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PreferredTopologyTerm {
    /// The preference's weight (up to 100; never negative).
    #[schemars(range(min = 0))]
    pub weight: i32,
    /// The node label keys.
    pub preference: NodeTopologyTerm,
}

/// Node label keys whose values a recreated pod keeps (v1beta1 field names).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NodeTopologyTerm {
    /// The node label keys, e.g. `kubernetes.io/hostname` (v1alpha1: `nodeTopologyKeys`).
    pub keys: Vec<String>,
}

/// A pod annotation to record (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PersistentPodAnnotation {
    /// The annotation key.
    pub key: String,
}

crate::open_enum! {
    #[schema_enum]
    /// When the record of a pod is removed (v1beta1: a closed enum in the CRD).
    pub enum PersistentPodStateRetentionPolicyType {
        /// When the workload scales down below the pod's ordinal (the default).
        WhenScaled = "WhenScaled",
        /// Only when the workload is deleted.
        WhenDeleted = "WhenDeleted",
    }
}

/// The recorded pod states (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersistentPodStateStatus {
    /// The generation the status describes.
    #[serde(default)]
    pub observed_generation: i64,
    /// What was recorded, by pod name, once each pod became ready.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pod_states: BTreeMap<String, PodState>,
}

/// What was recorded about one pod (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodState {
    /// The node the pod ran on.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub node_name: String,
    /// The node's topology labels, `key: value`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub node_topology_labels: BTreeMap<String, String>,
    /// The recorded pod annotations.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub annotations: BTreeMap<String, String>,
}
