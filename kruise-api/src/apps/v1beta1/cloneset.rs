//! CloneSet v1beta1 (upstream `apis/apps/v1beta1/cloneset_types.go`).

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::inplace::InPlaceUpdateStrategy;
use crate::lifecycle::Lifecycle;
use crate::omitempty::is_zero;
use crate::scatter::UpdateScatterStrategy;
use crate::update_priority::UpdatePriorityStrategy;

/// A set of interchangeable pods with in-place update, partitions, surge and unavailability budgets, and
/// lifecycle hooks.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "CloneSet",
    namespaced,
    status = "CloneSetStatus",
    shortname = "clone",
    derive = "PartialEq",
    derive = "Default",
    doc = "CloneSet manages a set of interchangeable pods.",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas",
        label_selector_path = ".status.labelSelector"
    ),
    printcolumn(
        name = "DESIRED",
        type_ = "integer",
        json_path = ".spec.replicas",
        description = "Desired number of pods."
    ),
    printcolumn(
        name = "UPDATED",
        type_ = "integer",
        json_path = ".status.updatedReplicas",
        description = "Pods at the update revision."
    ),
    printcolumn(
        name = "UPDATED_READY",
        type_ = "integer",
        json_path = ".status.updatedReadyReplicas",
        description = "Ready pods at the update revision."
    ),
    printcolumn(
        name = "UPDATED_AVAILABLE",
        type_ = "integer",
        json_path = ".status.updatedAvailableReplicas",
        description = "Available pods at the update revision."
    ),
    printcolumn(
        name = "READY",
        type_ = "integer",
        json_path = ".status.readyReplicas",
        description = "Ready pods."
    ),
    printcolumn(
        name = "TOTAL",
        type_ = "integer",
        json_path = ".status.replicas",
        description = "All pods."
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
    ),
    printcolumn(
        name = "SELECTOR",
        type_ = "string",
        priority = "1",
        json_path = ".status.labelSelector",
        description = "Pod label selector."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetSpec {
    /// Desired number of pods (defaults to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Which pods belong to the CloneSet; must match the template's labels.
    pub selector: LabelSelector,
    /// The pod template (stored schemaless; Kruise's webhook defaults it).
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub template: PodTemplateSpec,
    /// Claims created for each pod (named `<template>-<cloneset>-<instance id>`), deleted with the pod.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(schema_with = "crate::schema::preserve_unknown_object_list")]
    pub volume_claim_templates: Vec<PersistentVolumeClaim>,
    /// How pods are created and deleted.
    #[serde(default)]
    pub scale_strategy: CloneSetScaleStrategy,
    /// How pods are moved to a new revision.
    #[serde(default)]
    pub update_strategy: CloneSetUpdateStrategy,
    /// How many old ControllerRevisions to keep (defaults to 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Seconds a pod must be ready before it counts as available.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_ready_seconds: i32,
    /// Hooks that hold pods before they become normal, before deletion and around in-place updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// Seconds a rollout may make no progress before the Progressing condition reports a timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_deadline_seconds: Option<i32>,
}

/// How a v1beta1 CloneSet creates and deletes pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetScaleStrategy {
    /// Names of pods to delete (names of pods that do not exist are dropped by the controller).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pods_to_delete: Vec<String>,
    /// How many pods may be unavailable while scaling up (limits scale-up only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// Reuse PVCs left by deleted pods for new pods. Always written; the CRD defaults it to `false`, so
    /// objects created as v1beta1 do not reuse PVCs while objects converted from v1alpha1 keep reusing them.
    #[serde(default, rename = "enablePVCReuse")]
    #[schemars(extend("default" = false))]
    pub enable_pvc_reuse: bool,
    /// Leave `PreparingDelete` pods out when counting pods for scaling.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub exclude_preparing_delete: bool,
}

/// How a v1beta1 CloneSet updates pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetUpdateStrategy {
    /// `RollingUpdate` (the default) or `OnDelete`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<CloneSetUpdateStrategyType>,
    /// The rolling update parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateCloneSetStrategy>,
}

crate::open_enum! {
    /// When a v1beta1 CloneSet replaces pods.
    pub enum CloneSetUpdateStrategyType {
        /// The controller updates pods, within the rolling update budgets.
        RollingUpdate = "RollingUpdate",
        /// Pods are only replaced when someone deletes them.
        OnDelete = "OnDelete",
    }
}

/// The rolling update parameters of a v1beta1 CloneSet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateCloneSetStrategy {
    /// How many (or what percentage of) pods to keep at old revisions. Percentages round up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<IntOrString>,
    /// How many pods may be unavailable during an update or scale (defaults to `20%`; rounds down when
    /// `maxSurge` is used, up otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// How many pods may be created above `replicas` during an update or specified delete (rounds up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
    /// How pods are updated: recreated, or patched in place when possible or always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_update_policy: Option<CloneSetPodUpdatePolicy>,
    /// Stop updating pods.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub paused: bool,
    /// Which pods are updated first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
    /// Label pairs whose pods should be spread across update batches.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub scatter_strategy: UpdateScatterStrategy,
    /// In-place update parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
}

crate::open_enum! {
    /// How a CloneSet moves a pod to a new revision (the v1alpha1 `updateStrategy.type` values).
    pub enum CloneSetPodUpdatePolicy {
        /// Delete the pod and create a new one (the default).
        ReCreate = "ReCreate",
        /// Patch the pod in place when only images (or metadata) changed; otherwise recreate it.
        InPlaceIfPossible = "InPlaceIfPossible",
        /// Always patch in place; other template changes are rejected.
        InPlaceOnly = "InPlaceOnly",
    }
}

/// What the CloneSet controller observed (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    /// Pods owned by the CloneSet.
    #[serde(default)]
    pub replicas: i32,
    /// Pods with a `Ready` condition.
    #[serde(default)]
    pub ready_replicas: i32,
    /// Pods ready for at least `minReadySeconds`.
    #[serde(default)]
    pub available_replicas: i32,
    /// Pods at the update revision.
    #[serde(default)]
    pub updated_replicas: i32,
    /// Ready pods at the update revision.
    #[serde(default)]
    pub updated_ready_replicas: i32,
    /// Available pods at the update revision.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub updated_available_replicas: i32,
    /// Pods that should reach the update revision: `replicas - partition`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub expected_updated_replicas: i32,
    /// The newest revision.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub update_revision: String,
    /// The revision all pods were at when the last rollout finished.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub current_revision: String,
    /// Hash collisions met while naming ControllerRevisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// The latest observations.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conditions: Vec<CloneSetCondition>,
    /// The selector in string form, for the scale subresource (HPA).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub label_selector: String,
}

/// One observation about a CloneSet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CloneSetCondition {
    /// What the condition is about.
    #[serde(rename = "type")]
    pub type_: CloneSetConditionType,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// When the condition was last written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_time: Option<Time>,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason (see [`progressing_reason`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reason: String,
    /// Human-readable details.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub message: String,
}

crate::open_enum! {
    /// The type of a CloneSet condition.
    pub enum CloneSetConditionType {
        /// Creating or deleting pods or PVCs failed.
        FailedScale = "FailedScale",
        /// Updating pods failed.
        FailedUpdate = "FailedUpdate",
        /// Whether the rollout makes progress.
        Progressing = "Progressing",
        /// kruise-rs addition (upstream's webhook refuses such a spec instead): a spec value is invalid; the
        /// message names each field and value and how the controller reads it (reason
        /// [`INVALID_SPEC_REASON`]). Removed when the spec is fixed.
        InvalidSpec = "InvalidSpec",
    }
}

/// The reason of the `InvalidSpec` condition.
pub const INVALID_SPEC_REASON: &str = "InvalidValue";

/// Reasons of the `Progressing` condition.
pub mod progressing_reason {
    /// The rollout made no progress within `progressDeadlineSeconds`.
    pub const PROGRESS_DEADLINE_EXCEEDED: &str = "ProgressDeadlineExceeded";
    /// Updates are paused.
    pub const PAUSED: &str = "CloneSetPaused";
    /// The rollout is updating pods.
    pub const UPDATED: &str = "CloneSetUpdated";
    /// The pods outside the partition are updated and available.
    pub const PARTITION_AVAILABLE: &str = "ProgressPartitionAvailable";
    /// All pods are updated and available.
    pub const AVAILABLE: &str = "CloneSetAvailable";
}
