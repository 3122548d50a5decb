//! Advanced DaemonSet v1beta1 (upstream `apis/apps/v1beta1/daemonset_types.go`).

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::lifecycle::Lifecycle;
use crate::omitempty::is_zero;

/// A DaemonSet with in-place update, partitions, node-selector canaries, pausing and a pre-delete hook.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "DaemonSet",
    namespaced,
    status = "DaemonSetStatus",
    shortname = "daemon",
    shortname = "ads",
    derive = "PartialEq",
    derive = "Default",
    doc = "Advanced DaemonSet: one pod per matching node, with partitioned, canary and in-place updates.",
    printcolumn(
        name = "DESIRED",
        type_ = "integer",
        json_path = ".status.desiredNumberScheduled",
        description = "Nodes that should run the pod."
    ),
    printcolumn(
        name = "CURRENT",
        type_ = "integer",
        json_path = ".status.currentNumberScheduled",
        description = "Nodes that run the pod."
    ),
    printcolumn(
        name = "READY",
        type_ = "integer",
        json_path = ".status.numberReady",
        description = "Nodes with a ready pod."
    ),
    printcolumn(
        name = "UP-TO-DATE",
        type_ = "integer",
        json_path = ".status.updatedNumberScheduled",
        description = "Nodes with a pod at the update revision."
    ),
    printcolumn(
        name = "AVAILABLE",
        type_ = "integer",
        json_path = ".status.numberAvailable",
        description = "Nodes with an available pod."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "Time since creation."
    ),
    printcolumn(
        name = "CONTAINERS",
        type_ = "string",
        priority = "1",
        json_path = ".spec.template.spec.containers[*].name",
        description = "Container names."
    ),
    printcolumn(
        name = "IMAGES",
        type_ = "string",
        priority = "1",
        json_path = ".spec.template.spec.containers[*].image",
        description = "Container images."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetSpec {
    /// Which pods belong to the DaemonSet; must match the template's labels.
    pub selector: LabelSelector,
    /// The pod template (stored schemaless).
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub template: PodTemplateSpec,
    /// How pods are moved to a new revision.
    #[serde(default)]
    pub update_strategy: DaemonSetUpdateStrategy,
    /// Seconds a pod must be ready before it counts as available.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_ready_seconds: i32,
    /// How many pods may be created in one pass (defaults to 250).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst_replicas: Option<IntOrString>,
    /// How many old ControllerRevisions to keep (defaults to 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Pod lifecycle hooks (only `preDelete` is honoured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// How pods are created on new nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_strategy: Option<DaemonSetScaleStrategy>,
}

/// How a v1beta1 Advanced DaemonSet updates pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetUpdateStrategy {
    /// `RollingUpdate` (the default) or `OnDelete`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<DaemonSetUpdateStrategyType>,
    /// The rolling update parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateDaemonSet>,
}

crate::open_enum! {
    /// When an Advanced DaemonSet replaces pods (identical in both versions).
    pub enum DaemonSetUpdateStrategyType {
        /// The controller updates pods node by node, within the rolling update budgets.
        RollingUpdate = "RollingUpdate",
        /// Pods are only replaced when someone deletes them.
        OnDelete = "OnDelete",
    }
}

/// The rolling update parameters of a v1beta1 Advanced DaemonSet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateDaemonSet {
    /// How a pod is replaced: `Standard` (the default) or `InPlaceIfPossible`.
    #[serde(
        rename = "rollingUpdateType",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub type_: Option<DaemonSetRollingUpdateType>,
    /// How many nodes may be without an available pod during the update (percentages of
    /// `desiredNumberScheduled` round up; defaults to 1 when `maxSurge` is unset too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// How many nodes may run an extra new pod before the old one goes (percentages round up; defaults to 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// Only nodes matching this label selector are updated (canary by node).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// How many (or what percentage of) pods to keep at old revisions; percentages of
    /// `desiredNumberScheduled` round down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    /// Stop updating pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
}

crate::open_enum! {
    /// How a v1beta1 Advanced DaemonSet replaces a pod (the deprecated `Surging` alias is gone).
    pub enum DaemonSetRollingUpdateType {
        /// Delete the old pod and create a new one, as the Kubernetes DaemonSet does (the default).
        Standard = "Standard",
        /// Patch the pod in place when only images changed; otherwise recreate it.
        InPlaceIfPossible = "InPlaceIfPossible",
    }
}

/// How a v1beta1 Advanced DaemonSet creates pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetScaleStrategy {
    /// Let the rolling update partition also hold back pod creation on new nodes (the v1alpha1
    /// annotation `daemonset.kruise.io/progressive-create-pod: "true"`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub partitioned_scaling: bool,
}

/// What the Advanced DaemonSet controller observed (v1beta1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetStatus {
    /// Nodes that run at least one daemon pod and should.
    #[serde(default)]
    pub current_number_scheduled: i32,
    /// Nodes that run a daemon pod but should not.
    #[serde(default)]
    pub number_misscheduled: i32,
    /// Nodes that should run the daemon pod.
    #[serde(default)]
    pub desired_number_scheduled: i32,
    /// Nodes that should run the daemon pod and have a ready one.
    #[serde(default)]
    pub number_ready: i32,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    /// Nodes that run a pod at the update revision.
    #[serde(default)]
    pub updated_number_scheduled: i32,
    /// Nodes that should run the daemon pod and have an available one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub number_available: i32,
    /// Nodes that should run the daemon pod and have no available one.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub number_unavailable: i32,
    /// Hash collisions met while naming ControllerRevisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// The latest observations.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conditions: Vec<DaemonSetCondition>,
    /// The hash of the newest revision (the pods' `controller-revision-hash` label); v1alpha1
    /// `daemonSetHash`. Always written.
    #[serde(default)]
    pub update_revision: String,
}

/// One observation about an Advanced DaemonSet (the shape of the apps/v1 DaemonSet condition; identical in
/// both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DaemonSetCondition {
    /// What the condition is about.
    #[serde(rename = "type")]
    pub type_: String,
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
