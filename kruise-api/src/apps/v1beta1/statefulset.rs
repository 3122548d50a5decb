//! Advanced StatefulSet v1beta1 (upstream `apis/apps/v1beta1/statefulset_types.go`): the storage version since
//! upstream v1.8.

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::inplace::InPlaceUpdateStrategy;
use crate::lifecycle::Lifecycle;
use crate::omitempty::is_zero;
use crate::update_priority::UpdatePriorityStrategy;

/// A StatefulSet with in-place update, parallel rolling update within an unavailability budget, reserved
/// ordinals, update priorities and lifecycle hooks.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "StatefulSet",
    namespaced,
    status = "StatefulSetStatus",
    shortname = "sts",
    shortname = "asts",
    derive = "PartialEq",
    derive = "Default",
    doc = "Advanced StatefulSet: pods with stable identities and storage, updated in order or in parallel.",
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
        name = "CURRENT",
        type_ = "integer",
        json_path = ".status.replicas",
        description = "All pods."
    ),
    printcolumn(
        name = "UPDATED",
        type_ = "integer",
        json_path = ".status.updatedReplicas",
        description = "Pods at the update revision."
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
pub struct StatefulSetSpec {
    /// Desired number of pods, not counting reserved ordinals (defaults to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Which pods belong to the StatefulSet; must match the template's labels.
    pub selector: LabelSelector,
    /// The pod template (stored schemaless; Kruise's webhook defaults it).
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub template: PodTemplateSpec,
    /// Claims created for each pod (named `<template>-<pod>`), kept with the pod's identity.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(schema_with = "crate::schema::preserve_unknown_object_list")]
    pub volume_claim_templates: Vec<PersistentVolumeClaim>,
    /// When changed claim templates reach existing claims (only with the `StatefulSetAutoResizePVCGate` gate).
    #[serde(default)]
    pub volume_claim_update_strategy: VolumeClaimUpdateStrategy,
    /// The headless Service that gives the pods their DNS names.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub service_name: String,
    /// Whether pods are created and deleted one at a time in ordinal order (`OrderedReady`, the default) or
    /// all at once (`Parallel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_management_policy: Option<PodManagementPolicy>,
    /// How pods are moved to a new revision.
    #[serde(default)]
    pub update_strategy: StatefulSetUpdateStrategy,
    /// How many old ControllerRevisions to keep (defaults to 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Ordinals that get no pod: integers or inclusive `"a-b"` ranges. `replicas` pods still run, on the next
    /// free ordinals.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reserve_ordinals: Vec<IntOrString>,
    /// Hooks that hold pods before deletion and around in-place updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifecycle: Option<Lifecycle>,
    /// How fast pods are created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_strategy: Option<StatefulSetScaleStrategy>,
    /// Whether claims are deleted with the StatefulSet or on scale-down (gate `StatefulSetAutoDeletePVC`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persistent_volume_claim_retention_policy:
        Option<StatefulSetPersistentVolumeClaimRetentionPolicy>,
    /// The first ordinal (only honoured with the `StatefulSetStartOrdinal` gate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ordinals: Option<StatefulSetOrdinals>,
}

crate::open_enum! {
    /// How an Advanced StatefulSet creates and deletes pods.
    pub enum PodManagementPolicy {
        /// One pod at a time, in ordinal order, each waiting for the previous to be ready (the default).
        OrderedReady = "OrderedReady",
        /// All pods at once.
        Parallel = "Parallel",
    }
}

/// How an Advanced StatefulSet updates pods (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetUpdateStrategy {
    /// `RollingUpdate` (the default) or `OnDelete`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<StatefulSetUpdateStrategyType>,
    /// The rolling update parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_update: Option<RollingUpdateStatefulSetStrategy>,
}

crate::open_enum! {
    /// When an Advanced StatefulSet replaces pods.
    pub enum StatefulSetUpdateStrategyType {
        /// The controller updates pods, within the rolling update parameters.
        RollingUpdate = "RollingUpdate",
        /// Pods are only replaced when someone deletes them.
        OnDelete = "OnDelete",
    }
}

/// The rolling update parameters of an Advanced StatefulSet (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateStatefulSetStrategy {
    /// Slots below this index (ordinal minus start, reserved slots included) keep their revision; with
    /// `unorderedUpdate`, the number of pods kept at old revisions. Defaults to 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<i32>,
    /// How many pods may be unavailable during the update (defaults to 1; percentages round down; anything
    /// but 1 needs `Parallel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// How pods are updated: recreated (the default), or patched in place when possible or always.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_update_policy: Option<StatefulSetPodUpdatePolicy>,
    /// Stop updating pods (scaling goes on).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub paused: bool,
    /// Update pods by priority instead of by ordinal (needs `Parallel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unordered_update: Option<UnorderedUpdateStrategy>,
    /// In-place update parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_place_update_strategy: Option<InPlaceUpdateStrategy>,
    /// Seconds an updated pod must be ready before it counts as available (defaults to 0, at most 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ready_seconds: Option<i32>,
}

crate::open_enum! {
    /// How an Advanced StatefulSet moves a pod to a new revision.
    pub enum StatefulSetPodUpdatePolicy {
        /// Delete the pod and create it again (the default).
        ReCreate = "ReCreate",
        /// Patch the pod in place when only images (or metadata) changed; otherwise recreate it.
        InPlaceIfPossible = "InPlaceIfPossible",
        /// Always patch in place; other template changes are rejected.
        InPlaceOnly = "InPlaceOnly",
    }
}

/// Update pods in priority order rather than by ordinal.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnorderedUpdateStrategy {
    /// Which pods are updated first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_strategy: Option<UpdatePriorityStrategy>,
}

/// When changes to the volume claim templates are applied to existing claims.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VolumeClaimUpdateStrategy {
    /// `OnPodRollingUpdate` or `OnDelete`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<VolumeClaimUpdateStrategyType>,
}

crate::open_enum! {
    /// When changed volume claim templates reach existing claims.
    pub enum VolumeClaimUpdateStrategyType {
        /// Claims are resized as their pods are updated.
        OnPodRollingUpdate = "OnPodRollingUpdate",
        /// Claims change only when they are deleted and created again.
        OnDelete = "OnDelete",
    }
}

/// How fast an Advanced StatefulSet creates pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetScaleStrategy {
    /// How many created pods may be unavailable at once while scaling (percentages round down, at least 1;
    /// needs `Parallel`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
}

/// What happens to the claims of an Advanced StatefulSet's pods.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetPersistentVolumeClaimRetentionPolicy {
    /// What happens to claims when the StatefulSet is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_deleted: Option<PersistentVolumeClaimRetentionPolicyType>,
    /// What happens to the claims of pods removed by a scale-down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_scaled: Option<PersistentVolumeClaimRetentionPolicyType>,
}

crate::open_enum! {
    /// Whether claims outlive their pods.
    pub enum PersistentVolumeClaimRetentionPolicyType {
        /// Keep the claims (the default).
        Retain = "Retain",
        /// Delete the claims.
        Delete = "Delete",
    }
}

/// Where the ordinals of an Advanced StatefulSet start.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetOrdinals {
    /// The first ordinal (always written).
    #[serde(default)]
    pub start: i32,
}

/// What the Advanced StatefulSet controller observed (v1beta1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetStatus {
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    /// Pods owned by the StatefulSet.
    #[serde(default)]
    pub replicas: i32,
    /// Pods with a `Ready` condition.
    #[serde(default)]
    pub ready_replicas: i32,
    /// Pods ready for at least `minReadySeconds`.
    #[serde(default)]
    pub available_replicas: i32,
    /// Pods at the current revision.
    #[serde(default)]
    pub current_replicas: i32,
    /// Pods at the update revision.
    #[serde(default)]
    pub updated_replicas: i32,
    /// Ready pods at the update revision.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub updated_ready_replicas: i32,
    /// Available pods at the update revision.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub updated_available_replicas: i32,
    /// The revision all pods were at when the last rollout finished.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub current_revision: String,
    /// The newest revision.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub update_revision: String,
    /// Hash collisions met while naming ControllerRevisions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_count: Option<i32>,
    /// The latest observations.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conditions: Vec<StatefulSetCondition>,
    /// The selector in string form, for the scale subresource (HPA).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub label_selector: String,
    /// How many pods' claims match each volume claim template.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub volume_claims: Vec<VolumeClaimStatus>,
}

/// How far the claims of one volume claim template have caught up with it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VolumeClaimStatus {
    /// The volume claim template's name.
    pub volume_claim_name: String,
    /// Pods whose claim requests at least what the template asks for.
    #[serde(default)]
    pub compatible_replicas: i32,
    /// Of those, pods whose claim also has that capacity.
    #[serde(default)]
    pub compatible_ready_replicas: i32,
}

/// One observation about an Advanced StatefulSet (the shape of the apps/v1 StatefulSet condition; identical
/// in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatefulSetCondition {
    /// What the condition is about (Kruise adds `FailedCreatePod` and `FailedUpdatePod`).
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

/// Condition types the Advanced StatefulSet controller writes.
pub mod statefulset_condition_type {
    /// Creating a pod failed.
    pub const FAILED_CREATE_POD: &str = "FailedCreatePod";
    /// Updating a pod failed.
    pub const FAILED_UPDATE_POD: &str = "FailedUpdatePod";
}
