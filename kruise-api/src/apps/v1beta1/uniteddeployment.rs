//! UnitedDeployment v1beta1 (upstream `apis/apps/v1beta1/uniteddeployment_types.go`).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1 as apps;
use k8s_openapi::api::core::v1::{NodeSelectorTerm, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CloneSetSpec, StatefulSetSpec};
use crate::omitempty::is_zero;

/// The default `rescheduleCriticalSeconds` of the adaptive schedule strategy.
pub const DEFAULT_RESCHEDULE_CRITICAL_SECONDS: i32 = 30;

/// The default `unschedulableDuration` of the adaptive schedule strategy, in seconds.
pub const DEFAULT_UNSCHEDULABLE_DURATION_SECONDS: i32 = 300;

/// One workload template spread over several subsets (node pools, zones), each a workload of its own with
/// its share of the replicas.
///
/// Decoding one is deep: four workload templates sit inline, each holding a pod template. In debug builds
/// that takes more than tokio's default 2 MiB thread stack; a program that decodes UnitedDeployments on
/// runtime threads should give them larger stacks (`tokio::runtime::Builder::thread_stack_size`;
/// kruise-manager uses 8 MiB).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
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

/// The workload template of a v1beta1 UnitedDeployment; set exactly one.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubsetTemplate {
    /// Subsets are Kubernetes StatefulSets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stateful_set_template: Option<StatefulSetTemplateSpec>,
    /// Subsets are Advanced StatefulSets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advanced_stateful_set_template: Option<AdvancedStatefulSetTemplateSpec>,
    /// Subsets are CloneSets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clone_set_template: Option<CloneSetTemplateSpec>,
    /// Subsets are Kubernetes Deployments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment_template: Option<DeploymentTemplateSpec>,
}

/// A Kubernetes StatefulSet template (identical in both versions; stored schemaless).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetTemplateSpec {
    /// Labels and annotations of the subset StatefulSets.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub metadata: ObjectMeta,
    /// The apps/v1 StatefulSet spec.
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub spec: apps::StatefulSetSpec,
}

/// An Advanced StatefulSet template (identical in both versions: both embed the v1beta1 spec).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdvancedStatefulSetTemplateSpec {
    /// Labels and annotations of the subset Advanced StatefulSets (stored schemaless).
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub metadata: ObjectMeta,
    /// The v1beta1 Advanced StatefulSet spec.
    pub spec: StatefulSetSpec,
}

/// A CloneSet template of a v1beta1 UnitedDeployment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetTemplateSpec {
    /// Labels and annotations of the subset CloneSets (stored schemaless).
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub metadata: ObjectMeta,
    /// The v1beta1 CloneSet spec.
    pub spec: CloneSetSpec,
}

/// A Kubernetes Deployment template (identical in both versions; stored schemaless).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentTemplateSpec {
    /// Labels and annotations of the subset Deployments.
    #[serde(default)]
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub metadata: ObjectMeta,
    /// The apps/v1 Deployment spec.
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub spec: apps::DeploymentSpec,
}

/// How template changes reach the subsets (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentUpdateStrategy {
    /// `Manual` (the default).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<UnitedDeploymentUpdateStrategyType>,
    /// The parameters of the `Manual` strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manual_update: Option<ManualUpdate>,
}

crate::open_enum! {
    /// How a UnitedDeployment rolls a template change out.
    pub enum UnitedDeploymentUpdateStrategyType {
        /// Every subset is updated down to its partition in `manualUpdate.partitions` (the default).
        Manual = "Manual",
    }
}

/// Per-subset partitions of the `Manual` update strategy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ManualUpdate {
    /// Subset name → the partition passed to that subset's workload.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub partitions: BTreeMap<String, i32>,
}

/// The subsets of a v1beta1 UnitedDeployment and how pods are spread over them.
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

/// One subset of a UnitedDeployment (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Subset {
    /// The subset name (a DNS label, unique within the UnitedDeployment).
    pub name: String,
    /// The nodes this subset's pods run on (immutable).
    #[serde(default)]
    pub node_selector_term: NodeSelectorTerm,
    /// Tolerations added to this subset's pods (immutable).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub tolerations: Vec<Toleration>,
    /// Pods in this subset: a number or a percentage of `spec.replicas`; subsets without it share the rest
    /// evenly. Excludes `minReplicas`/`maxReplicas`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<IntOrString>,
    /// The fewest pods this subset gets, filled in subset order (defaults to 0 when some subset has bounds
    /// and none has `replicas`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_replicas: Option<IntOrString>,
    /// The most pods this subset gets (unset: no limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<IntOrString>,
    /// A strategic merge patch applied to this subset's workload template (stored schemaless).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::raw_extension")]
    pub patch: Option<RawExtension>,
}

/// How a v1beta1 UnitedDeployment moves pods between subsets.
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

crate::open_enum! {
    #[schema_enum]
    /// Whether pods that cannot be scheduled move to another subset (identical in both versions).
    #[derive(Default)]
    pub enum UnitedDeploymentScheduleStrategyType {
        /// Pods that stay pending move to subsets with room, and the subset is avoided for a while.
        Adaptive = "Adaptive",
        /// Pods stay in their subset even when they cannot be scheduled.
        Fixed = "Fixed",
        /// Empty (the Go zero value, left out when writing): the same as `Fixed`.
        #[default]
        Empty = "",
    }
}

/// The parameters of the v1beta1 `Adaptive` schedule strategy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdaptiveUnitedDeploymentStrategy {
    /// Seconds a pod may stay unschedulable before it is rescheduled to another subset (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reschedule_critical_seconds: Option<i32>,
    /// Seconds a subset stays marked unschedulable (default 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unschedulable_duration: Option<i32>,
    /// Keep pending pods in their subset and run temporary substitutes elsewhere until they are ready.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reserve_unschedulable_pods: bool,
}

/// What the UnitedDeployment controller observed (v1beta1).
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
    /// Pods reserved by the adaptive strategy.
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
    /// The newest revision (v1alpha1 `updateStatus.updatedRevision`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub updated_revision: String,
    /// One entry per subset: replicas, partition, reserved pods and conditions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub subset_statuses: Vec<UnitedDeploymentSubsetStatus>,
    /// The latest observations.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conditions: Vec<UnitedDeploymentCondition>,
    /// The selector in string form, for the scale subresource (HPA).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub label_selector: String,
}

/// What the controller observed about one subset (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentSubsetStatus {
    /// The subset's name.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub name: String,
    /// The subset's replicas.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replicas: i32,
    /// The subset's ready pods.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ready_replicas: i32,
    /// The partition passed to the subset's workload.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub partition: i32,
    /// The subset's pods reserved by the adaptive strategy.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reserved_pods: i32,
    /// The subset's conditions.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conditions: Vec<UnitedDeploymentSubsetCondition>,
}

/// One observation about a subset (identical in both versions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentSubsetCondition {
    /// What the condition is about.
    #[serde(rename = "type")]
    pub type_: UnitedDeploymentSubsetConditionType,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reason: String,
    /// Human-readable details.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub message: String,
}

crate::open_enum! {
    /// The type of a subset condition.
    pub enum UnitedDeploymentSubsetConditionType {
        /// `False` while the subset is treated as unable to schedule new pods.
        Schedulable = "Schedulable",
    }
}

/// One observation about a UnitedDeployment (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnitedDeploymentCondition {
    /// What the condition is about.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<UnitedDeploymentConditionType>,
    /// `True`, `False` or `Unknown`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub status: String,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reason: String,
    /// Human-readable details.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub message: String,
}

crate::open_enum! {
    /// The type of a UnitedDeployment condition.
    pub enum UnitedDeploymentConditionType {
        /// Every expected subset exists and no unexpected one does.
        SubsetProvisioned = "SubsetProvisioned",
        /// Every subset is updated.
        SubsetUpdated = "SubsetUpdated",
        /// A subset failed while reconciling.
        SubsetFailure = "SubsetFailure",
        /// Whether the UnitedDeployment reached its updated revision.
        UnitedDeploymentUpdated = "UnitedDeploymentUpdated",
    }
}
