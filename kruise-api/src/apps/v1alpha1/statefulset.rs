//! Advanced StatefulSet v1alpha1: the subset of the v1beta1 shape that upstream still serves as
//! v1alpha1 (no reserved ordinals, lifecycle, scale strategy, claim retention, ordinals or claim statuses).

use k8s_openapi::api::core::v1::{PersistentVolumeClaim, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    PodManagementPolicy, RollingUpdateStatefulSetStrategy, StatefulSetCondition,
    StatefulSetPodUpdatePolicy, StatefulSetUpdateStrategy, StatefulSetUpdateStrategyType,
    UnorderedUpdateStrategy, statefulset_condition_type,
};
use crate::omitempty::is_zero;

/// A StatefulSet with in-place update, parallel rolling update within an unavailability budget and update
/// priorities (the v1alpha1 subset of the Advanced StatefulSet API).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
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
    /// Desired number of pods (defaults to 1).
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
}

/// What the Advanced StatefulSet controller observed (v1alpha1: no updated-ready, updated-available or
/// volume claim counts).
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
}
