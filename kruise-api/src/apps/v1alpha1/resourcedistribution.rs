//! ResourceDistribution v1alpha1 (upstream `apis/apps/v1alpha1/resourcedistribution_types.go`).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    ResourceDistributionConditionType, ResourceDistributionNamespace,
    ResourceDistributionTargetNamespaces,
};
use crate::omitempty::is_zero;

/// Distributes a complete resource (a Secret or a ConfigMap) to a set of namespaces.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "ResourceDistribution",
    status = "ResourceDistributionStatus",
    shortname = "distributor",
    derive = "PartialEq",
    derive = "Default",
    doc = "ResourceDistribution copies a Secret or ConfigMap into many namespaces and keeps the copies in sync.",
    printcolumn(
        name = "TOTAL",
        type_ = "integer",
        json_path = ".status.desired",
        description = "Namespaces the resource should reach."
    ),
    printcolumn(
        name = "SUCCEED",
        type_ = "integer",
        json_path = ".status.succeeded",
        description = "Namespaces holding an up-to-date copy."
    ),
    printcolumn(
        name = "FAILED",
        type_ = "integer",
        json_path = ".status.failed",
        description = "Namespaces where distribution failed."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionSpec {
    /// The complete object to distribute (`apiVersion`, `kind`, `metadata`, data), kept as raw JSON.
    #[schemars(schema_with = "crate::apps::v1beta1::embedded_resource")]
    pub resource: serde_json::Value,
    /// Which namespaces receive a copy.
    pub targets: ResourceDistributionTargets,
}

/// Which namespaces receive the resource (v1alpha1 field names): the union of `allNamespaces`,
/// `includedNamespaces` and `namespaceLabelSelector`, minus `excludedNamespaces`. `kube-system` and
/// `kube-public` never receive a copy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionTargets {
    /// Every namespace (except the forbidden ones).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub all_namespaces: bool,
    /// Namespaces that never receive a copy; wins over every other rule.
    #[serde(default)]
    pub excluded_namespaces: ResourceDistributionTargetNamespaces,
    /// Namespaces named explicitly.
    #[serde(default)]
    pub included_namespaces: ResourceDistributionTargetNamespaces,
    /// Namespaces whose labels match (v1beta1: `namespaceSelector`).
    #[serde(default)]
    pub namespace_label_selector: LabelSelector,
}

/// What the ResourceDistribution controller observed (v1alpha1 field names).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionStatus {
    /// Namespaces the resource should reach.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub desired: i32,
    /// Namespaces holding an up-to-date copy.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub succeeded: i32,
    /// Namespaces where creating, updating or deleting the copy failed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed: i32,
    /// The generation the status describes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    /// What went wrong, per kind of failure.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conditions: Vec<ResourceDistributionCondition>,
}

/// One kind of failure and the namespaces it hit (v1alpha1 field names).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceDistributionCondition {
    /// What failed.
    #[serde(rename = "type")]
    pub type_: ResourceDistributionConditionType,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// Human-readable details of the last change.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reason: String,
    /// The namespaces where the operation failed (singular JSON name in v1alpha1; v1beta1:
    /// `failedNamespaces`).
    #[serde(default, rename = "failedNamespace", skip_serializing_if = "is_zero")]
    pub failed_namespaces: Vec<String>,
}
