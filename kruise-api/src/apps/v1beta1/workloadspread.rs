//! WorkloadSpread v1beta1: spreads the pods of an existing workload over subsets of nodes,
//! with a maximum per subset, through the pod admission webhook.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelectorTerm, PreferredSchedulingTerm, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omitempty::is_zero;

/// Spreads the pods of a workload over subsets of nodes (zones, node pools, virtual nodes, ...).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
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

/// The object a WorkloadSpread (or a PersistentPodState) applies to (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetReference {
    /// The referent's `apiVersion`.
    pub api_version: String,
    /// The referent's kind.
    pub kind: String,
    /// The referent's name (in the same namespace).
    pub name: String,
}

/// Narrows a WorkloadSpread to some of the target's pods, for workloads that create several kinds of pods
/// (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetFilter {
    /// Only pods matching this selector are managed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Dot-separated paths into the target object (for example `spec.tfReplicaSpecs.Worker.replicas`, list
    /// items by index) whose integer values add up to the number of managed pods.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replicas_path_list: Vec<String>,
}

/// How a WorkloadSpread places pods into subsets (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadScheduleStrategy {
    /// `Fixed` (the default when empty) or `Adaptive`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "WorkloadSpreadScheduleStrategyType")]
    pub type_: Option<WorkloadSpreadScheduleStrategyType>,
    /// Parameters of the `Adaptive` strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveWorkloadSpreadStrategy>,
}

crate::open_enum! {
    #[schema_enum]
    /// The placement strategy of a WorkloadSpread.
    pub enum WorkloadSpreadScheduleStrategyType {
        /// Pods that cannot be scheduled in their subset are moved to the next one with room, and admission
        /// may simulate scheduling to skip full subsets.
        Adaptive = "Adaptive",
        /// A pod stays in the subset it was admitted to.
        Fixed = "Fixed",
        /// Written as an empty string; means `Fixed`.
        Unset = "",
    }
}

/// Parameters of the `Adaptive` strategy (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdaptiveWorkloadSpreadStrategy {
    /// Do not check node resources at admission before choosing a subset.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub disable_simulation_schedule: bool,
    /// How long a pod may stay unschedulable before it is moved to another subset with room.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reschedule_critical_seconds: Option<i32>,
}

/// One subset of nodes, with what is injected into the pods placed there (v1beta1 field names).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadSubset {
    /// Unique among the subsets.
    pub name: String,
    /// Node affinity every pod of the subset requires (v1alpha1: `requiredNodeSelectorTerm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_node_selector: Option<NodeSelectorTerm>,
    /// Node affinity the pods of the subset prefer (v1alpha1: `preferredNodeSelectorTerms`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub preferred_node_selector: Vec<PreferredSchedulingTerm>,
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

/// What the WorkloadSpread controller and webhook observed (v1beta1 field names).
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

/// The observed state of one subset (v1beta1: standard `metav1.Condition`s).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadSpreadSubsetStatus {
    /// The subset's name.
    pub name: String,
    /// Active pods in the subset.
    #[serde(default)]
    pub replicas: i32,
    /// The subset's conditions (type [`SUBSET_SCHEDULABLE`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conditions: Vec<Condition>,
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

/// Subset condition type: whether the subset's nodes have room for its pods. False after a pod of the subset
/// failed to schedule; the controller sets it back to True after a while.
pub const SUBSET_SCHEDULABLE: &str = "Schedulable";

#[cfg(test)]
mod tests {
    use super::*;
    use kube::CustomResourceExt;

    #[test]
    fn crd_columns_and_schemaless_patch() {
        let crd = WorkloadSpread::crd();
        let version = &crd.spec.versions[0];
        let columns = version.additional_printer_columns.as_ref().unwrap();
        let names: Vec<_> = columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["WorkloadName", "WorkloadKind", "Adaptive", "Age"]);
        let adaptive = &columns[2];
        assert_eq!(adaptive.type_, "boolean");
        assert_eq!(
            adaptive.json_path,
            r#".spec.scheduleStrategy.type[?(@ == "Adaptive")]"#
        );
        let schema =
            serde_json::to_value(&version.schema.as_ref().unwrap().open_api_v3_schema).unwrap();
        let subset = &schema["properties"]["spec"]["properties"]["subsets"]["items"]["properties"];
        assert_eq!(
            subset["patch"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        let strategy_type =
            &schema["properties"]["spec"]["properties"]["scheduleStrategy"]["properties"]["type"];
        assert_eq!(
            strategy_type["enum"],
            serde_json::json!(["Adaptive", "Fixed", ""])
        );
    }
}
