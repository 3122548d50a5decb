//! ResourceDistribution v1beta1: copies one Secret or ConfigMap into many namespaces and keeps
//! the copies in sync.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use kube::CustomResource;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use crate::omitempty::is_zero;

/// Distributes a complete resource (a Secret or a ConfigMap) to a set of namespaces.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
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
    #[schemars(schema_with = "embedded_resource")]
    pub resource: serde_json::Value,
    /// Which namespaces receive a copy.
    pub targets: ResourceDistributionTargets,
}

/// Which namespaces receive the resource (v1beta1 field names): the union of `allNamespaces`,
/// `includedNamespaces` and `namespaceSelector`, minus `excludedNamespaces`. `kube-system` and `kube-public`
/// never receive a copy.
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
    /// Namespaces whose labels match (v1alpha1: `namespaceLabelSelector`).
    #[serde(default)]
    pub namespace_selector: LabelSelector,
}

/// A list of namespaces named explicitly (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceDistributionTargetNamespaces {
    /// The namespaces.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub list: Vec<ResourceDistributionNamespace>,
}

/// One namespace, by name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceDistributionNamespace {
    /// The namespace's name.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub name: String,
}

/// What the ResourceDistribution controller observed (v1beta1 field names).
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

/// One kind of failure and the namespaces it hit (v1beta1 field names).
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
    /// The namespaces where the operation failed (v1alpha1: `failedNamespace`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_namespaces: Vec<String>,
}

crate::open_enum! {
    /// The kind of failure a ResourceDistribution condition reports (identical in both versions).
    pub enum ResourceDistributionConditionType {
        /// A target namespace already holds a resource of the same name that this distribution does not own.
        ConflictOccurred = "ConflictOccurred",
        /// Some target namespaces do not exist.
        NamespaceNotExists = "NamespaceNotExists",
        /// Reading the distributed copies failed.
        GetResourceFailed = "GetResourceFailed",
        /// Creating copies failed.
        CreateResourceFailed = "CreateResourceFailed",
        /// Updating copies failed.
        UpdateResourceFailed = "UpdateResourceFailed",
        /// Deleting copies that are no longer wanted failed.
        DeleteResourceFailed = "DeleteResourceFailed",
    }
}

impl Default for ResourceDistributionConditionType {
    /// Go's zero value: the empty string.
    fn default() -> Self {
        Self::Unknown(String::new())
    }
}

/// Schema of the distributed object: any JSON object the API server keeps as it is, but validates as an
/// embedded Kubernetes object (`apiVersion`, `kind`, `metadata`), as upstream's CRD does.
pub(crate) fn embedded_resource(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::CustomResourceExt;

    #[test]
    fn crd_is_cluster_scoped_with_an_embedded_resource() {
        let crd = ResourceDistribution::crd();
        assert_eq!(crd.spec.scope, "Cluster");
        let version = &crd.spec.versions[0];
        let columns: Vec<_> = version
            .additional_printer_columns
            .as_ref()
            .unwrap()
            .iter()
            .map(|c| (c.name.as_str(), c.json_path.as_str()))
            .collect();
        assert_eq!(
            columns,
            [
                ("TOTAL", ".status.desired"),
                ("SUCCEED", ".status.succeeded"),
                ("FAILED", ".status.failed")
            ]
        );
        let schema =
            serde_json::to_value(&version.schema.as_ref().unwrap().open_api_v3_schema).unwrap();
        let resource = &schema["properties"]["spec"]["properties"]["resource"];
        assert_eq!(resource["x-kubernetes-embedded-resource"], true);
        assert_eq!(resource["x-kubernetes-preserve-unknown-fields"], true);
        assert_eq!(
            schema["properties"]["spec"]["required"],
            serde_json::json!(["resource", "targets"])
        );
    }
}
