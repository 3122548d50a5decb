//! WorkloadSpread v1alpha1 (upstream `apis/apps/v1alpha1/workloadspread_types.go`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelectorTerm, PreferredSchedulingTerm, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    AdaptiveWorkloadSpreadStrategy, TargetFilter, TargetReference, WorkloadSpreadScheduleStrategy,
    WorkloadSpreadScheduleStrategyType,
};
use crate::omitempty::is_zero;

/// Spreads the pods of a workload over subsets of nodes (zones, node pools, virtual nodes, ...).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "WorkloadSpread",
    namespaced,
    status = "WorkloadSpreadStatus",
    shortname = "ws",
    derive = "PartialEq",
    derive = "Default",
    doc = "WorkloadSpread spreads the pods of a workload over subsets of nodes, with a maximum per subset.",
    printcolumn(
        name = "WorkloadName",
        type_ = "string",
        json_path = ".spec.targetRef.name",
        description = "The workload whose pods are spread."
    ),
    printcolumn(
        name = "WorkloadKind",
        type_ = "string",
        json_path = ".spec.targetRef.kind",
        description = "The kind of that workload."
    ),
    printcolumn(
        name = "Adaptive",
        type_ = "boolean",
        json_path = ".spec.scheduleStrategy.type[?(@ == \"Adaptive\")]",
        description = "Whether unschedulable pods are moved to other subsets."
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "Time since creation."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadSpec {
    /// The workload whose pods are spread (CloneSet, Deployment, ReplicaSet, Job, Advanced StatefulSet, or a
    /// whitelisted custom workload).
    #[serde(rename = "targetRef")]
    pub target_reference: TargetReference,
    /// Manage only some of the workload's pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_filter: Option<TargetFilter>,
    /// The subsets, in order of preference.
    pub subsets: Vec<WorkloadSpreadSubset>,
    /// How pods are placed into subsets.
    #[serde(default)]
    pub schedule_strategy: WorkloadSpreadScheduleStrategy,
}

/// One subset of nodes, with what is injected into the pods placed there (v1alpha1 field names).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadSubset {
    /// Unique among the subsets.
    pub name: String,
    /// Node affinity every pod of the subset requires (v1beta1: `requiredNodeSelector`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_node_selector_term: Option<NodeSelectorTerm>,
    /// Node affinity the pods of the subset prefer (v1beta1: `preferredNodeSelector`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub preferred_node_selector_terms: Vec<PreferredSchedulingTerm>,
    /// Tolerations added to the pods of the subset.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tolerations: Vec<Toleration>,
    /// At most this many (or this share of the workload's) pods; no limit when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<IntOrString>,
    /// A strategic merge patch applied to the pods of the subset (labels, annotations, resources, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::raw_extension")]
    pub patch: Option<serde_json::Value>,
}

/// What the WorkloadSpread controller and webhook observed (v1alpha1 field names).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    /// One entry per subset, in spec order.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub subset_statuses: Vec<WorkloadSpreadSubsetStatus>,
    /// The subset statuses per workload revision, so that a rolling update that creates new pods before it
    /// deletes old ones is counted correctly.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub versioned_subset_statuses: BTreeMap<String, Vec<WorkloadSpreadSubsetStatus>>,
}

/// The observed state of one subset (v1alpha1: WorkloadSpread-specific conditions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadSubsetStatus {
    /// The subset's name.
    pub name: String,
    /// Active pods in the subset.
    #[serde(default)]
    pub replicas: i32,
    /// The subset's conditions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conditions: Vec<WorkloadSpreadSubsetCondition>,
    /// Pods the subset still lacks to reach `maxReplicas`; `-1` when the subset has no maximum.
    #[serde(default)]
    pub missing_replicas: i32,
    /// Pods admitted into the subset that the controller has not seen yet, by name, with the admission time.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub creating_pods: BTreeMap<String, Time>,
    /// Pods whose deletion was admitted but not yet observed, by name, with the admission time.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub deleting_pods: BTreeMap<String, Time>,
}

/// One observation about a subset (v1alpha1 shape; v1beta1 uses `metav1.Condition`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadSubsetCondition {
    /// What the condition is about.
    #[serde(rename = "type")]
    pub type_: WorkloadSpreadSubsetConditionType,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last change.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reason: String,
    /// Human-readable details.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub message: String,
}

crate::open_enum! {
    /// The type of a v1alpha1 subset condition.
    pub enum WorkloadSpreadSubsetConditionType {
        /// Whether the subset's nodes have room for its pods. False after a pod of the subset failed to
        /// schedule; the controller sets it back to True after a while.
        Schedulable = "Schedulable",
    }
}

impl Default for WorkloadSpreadSubsetConditionType {
    /// Go's zero value: the empty string.
    fn default() -> Self {
        Self::Unknown(String::new())
    }
}
