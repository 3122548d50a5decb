//! UnitedDeployment v1alpha1: the v1.8 shape plus the HEAD additions (`reservedPods`, subset
//! `readyReplicas`/`reservedPods`, adaptive `reserveUnschedulablePods` and `unschedulableDuration`, kept
//! next to v1.8's `unschedulableLastSeconds`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::CloneSetSpec;
pub use crate::apps::v1beta1::{
    AdvancedStatefulSetTemplateSpec, DEFAULT_RESCHEDULE_CRITICAL_SECONDS,
    DEFAULT_UNSCHEDULABLE_DURATION_SECONDS, DeploymentTemplateSpec, ManualUpdate,
    StatefulSetTemplateSpec, Subset, UnitedDeploymentCondition, UnitedDeploymentConditionType,
    UnitedDeploymentScheduleStrategyType, UnitedDeploymentSubsetCondition,
    UnitedDeploymentSubsetConditionType, UnitedDeploymentSubsetStatus,
    UnitedDeploymentUpdateStrategy, UnitedDeploymentUpdateStrategyType,
};
use crate::omitempty::is_zero;

/// One workload template spread over several subsets (node pools, zones), each a workload of its own with
/// its share of the replicas.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "UnitedDeployment",
    namespaced,
    status = "UnitedDeploymentStatus",
    shortname = "ud",
    derive = "PartialEq",
    derive = "Default",
    doc = "UnitedDeployment manages one workload per subset of nodes from a single template.",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas",
        label_selector_path = ".status.labelSelector"
    ),
    printcolumn(
        name = "DESIRED",
        type_ = "integer",
        json_path = ".spec.replicas",
        description = "Desired number of pods over all subsets."
    ),
    printcolumn(
        name = "CURRENT",
        type_ = "integer",
        json_path = ".status.replicas",
        description = "All pods."
    ),
    printcolumn(
        name = "UPDATED",
        type_ = "integer",
        json_path = ".status.updatedReplicas",
        description = "Pods at the updated revision."
    ),
    printcolumn(
        name = "READY",
        type_ = "integer",
        json_path = ".status.readyReplicas",
        description = "Ready pods."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "Time since creation."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentSpec {
    /// Desired number of pods over all subsets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Which pods belong to the UnitedDeployment; must match the template's pod labels.
    pub selector: LabelSelector,
    /// The workload every subset is made from (exactly one kind).
    #[serde(default)]
    pub template: SubsetTemplate,
    /// The subsets and how pods are spread over them.
    #[serde(default)]
    pub topology: Topology,
    /// How template changes reach the subsets.
    #[serde(default)]
    pub update_strategy: UnitedDeploymentUpdateStrategy,
    /// How many old ControllerRevisions to keep (defaults to 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
}

/// The workload template of a v1alpha1 UnitedDeployment; set exactly one.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubsetTemplate {
    /// Subsets are Kubernetes StatefulSets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stateful_set_template: Option<StatefulSetTemplateSpec>,
    /// Subsets are Advanced StatefulSets (the v1beta1 spec, as in upstream v1.8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advanced_stateful_set_template: Option<AdvancedStatefulSetTemplateSpec>,
    /// Subsets are CloneSets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clone_set_template: Option<CloneSetTemplateSpec>,
    /// Subsets are Kubernetes Deployments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment_template: Option<DeploymentTemplateSpec>,
}

/// A CloneSet template of a v1alpha1 UnitedDeployment (the v1alpha1 CloneSet spec).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetTemplateSpec {
    /// Labels and annotations of the subset CloneSets (stored schemaless).
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub metadata: ObjectMeta,
    /// The v1alpha1 CloneSet spec.
    pub spec: CloneSetSpec,
}

/// The subsets of a v1alpha1 UnitedDeployment and how pods are spread over them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Topology {
    /// The subsets, each provisioned as one workload named `<ud>-<subset>-<suffix>`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub subsets: Vec<Subset>,
    /// How pods move between subsets when they cannot be scheduled.
    #[serde(default)]
    pub schedule_strategy: UnitedDeploymentScheduleStrategy,
}

/// How a v1alpha1 UnitedDeployment moves pods between subsets.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentScheduleStrategy {
    /// `Fixed` (the default; also what an empty value means) or `Adaptive`.
    #[serde(rename = "type", default, skip_serializing_if = "is_zero")]
    pub type_: UnitedDeploymentScheduleStrategyType,
    /// The parameters of the `Adaptive` strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveUnitedDeploymentStrategy>,
}

/// The parameters of the v1alpha1 `Adaptive` schedule strategy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdaptiveUnitedDeploymentStrategy {
    /// Seconds a pod may stay unschedulable before it is rescheduled to another subset (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reschedule_critical_seconds: Option<i32>,
    /// Seconds a subset stays marked unschedulable: the v1.8 name of `unschedulableDuration` (which wins
    /// when both are set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unschedulable_last_seconds: Option<i32>,
    /// Seconds a subset stays marked unschedulable (HEAD; default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unschedulable_duration: Option<i32>,
    /// Keep pending pods in their subset and run temporary substitutes elsewhere until they are ready
    /// (HEAD).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reserve_unschedulable_pods: bool,
}

/// What the UnitedDeployment controller observed (v1alpha1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    /// Ready pods.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ready_replicas: i32,
    /// Pods over all subsets, not counting reserved ones.
    #[serde(default)]
    pub replicas: i32,
    /// Pods at the updated revision.
    #[serde(default)]
    pub updated_replicas: i32,
    /// Pods reserved by the adaptive strategy (HEAD).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reserved_pods: i32,
    /// Ready pods at the updated revision.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub updated_ready_replicas: i32,
    /// Hash collisions met while naming ControllerRevisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// The revision all subsets were at when the last rollout finished (always written).
    #[serde(default)]
    pub current_revision: String,
    /// Subset name → the replicas the controller gave it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub subset_replicas: BTreeMap<String, i32>,
    /// One entry per subset: replicas, partition, reserved pods and conditions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub subset_statuses: Vec<UnitedDeploymentSubsetStatus>,
    /// The latest observations.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conditions: Vec<UnitedDeploymentCondition>,
    /// The rollout progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_status: Option<UnitedDeploymentUpdateStatus>,
    /// The selector in string form, for the scale subresource (HPA).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub label_selector: String,
}

/// The rollout progress of a v1alpha1 UnitedDeployment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentUpdateStatus {
    /// The newest revision.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub updated_revision: String,
    /// Subset name → the partition currently passed to its workload.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub current_partitions: BTreeMap<String, i32>,
}
