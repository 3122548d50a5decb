//! `PodUnavailableBudget` v1beta1 (upstream `apis/policy/v1beta1/podunavailablebudget_types.go`).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omitempty::is_zero;

/// A budget of pods that may be unavailable at once, enforced by Kruise's webhooks on pod deletion,
/// eviction and in-place update (and, optionally, resize).
// kube's `printcolumn(...)` entries repeat `type_ = ...`, which clippy takes for duplicated attributes.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "policy.kruise.io",
    version = "v1beta1",
    kind = "PodUnavailableBudget",
    namespaced,
    status = "PodUnavailableBudgetStatus",
    shortname = "pub",
    derive = "PartialEq",
    derive = "Default",
    doc = "PodUnavailableBudget limits how many of the pods it covers may be disrupted at once.",
    printcolumn(
        name = "Allowed",
        type_ = "integer",
        json_path = ".status.unavailableAllowed",
        description = "Pods that may become unavailable now."
    ),
    printcolumn(
        name = "Current",
        type_ = "integer",
        json_path = ".status.currentAvailable",
        description = "Available pods."
    ),
    printcolumn(
        name = "Desired",
        type_ = "integer",
        json_path = ".status.desiredAvailable",
        description = "Pods that must stay available."
    ),
    printcolumn(
        name = "Total",
        type_ = "integer",
        json_path = ".status.totalReplicas",
        description = "Pods the budget covers."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct PodUnavailableBudgetSpec {
    /// The pods the budget covers (ignored when `targetRef` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// The workload whose pods the budget covers (wins over `selector`).
    #[serde(rename = "targetRef", default, skip_serializing_if = "Option::is_none")]
    pub target_reference: Option<TargetReference>,
    /// At most this many (or this percentage of) covered pods may be unavailable after an operation (wins
    /// over `minAvailable`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_unavailable: Option<IntOrString>,
    /// At least this many (or this percentage of) covered pods must stay available after an operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_available: Option<IntOrString>,
    /// The operations the budget guards (empty: `DELETE`, `UPDATE` and `EVICT`). v1alpha1: the annotation
    /// `kruise.io/pub-protect-operations`, still honoured when this is empty.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub protect_operations: Vec<PubOperation>,
    /// The number of pods to protect when the workload cannot tell (no scale subresource, no workload);
    /// at least 1. v1alpha1: the annotation `pub.kruise.io/protect-total-replicas`, still honoured when this
    /// is unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub protect_total_replicas: Option<i32>,
    /// Pods this selector matches are never protected. The pod annotation `pub.kruise.io/no-protect` still
    /// does the same per pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored_pod_selector: Option<LabelSelector>,
}

crate::open_enum! {
    #[schema_enum]
    /// A voluntary disruption a budget can guard.
    pub enum PubOperation {
        /// Deleting a pod.
        Delete = "DELETE",
        /// Updating a pod in place (image or metadata changes that restart containers).
        Update = "UPDATE",
        /// Evicting a pod.
        Evict = "EVICT",
        /// Resizing a pod's resources in place (an extension of `UPDATE`).
        Resize = "RESIZE",
    }
}

/// The workload a budget covers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetReference {
    /// The workload's API version.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub api_version: String,
    /// The workload's kind.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub kind: String,
    /// The workload's name.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub name: String,
}

/// What the `PodUnavailableBudget` controller observed (v1beta1 leaves a zero `observedGeneration` out).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodUnavailableBudgetStatus {
    /// The generation the status describes; the other fields are valid only when it equals the object's.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub observed_generation: i64,
    /// Pods whose deletion or eviction the webhook allowed but the controller has not seen yet, with the
    /// time of the decision.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub disrupted_pods: BTreeMap<String, Time>,
    /// Pods updated in place that are not available again yet, with the time of the update.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unavailable_pods: BTreeMap<String, Time>,
    /// How many more pods may become unavailable now.
    #[serde(default)]
    pub unavailable_allowed: i32,
    /// Covered pods that are available.
    #[serde(default)]
    pub current_available: i32,
    /// Covered pods that must stay available.
    #[serde(default)]
    pub desired_available: i32,
    /// Covered pods.
    #[serde(default)]
    pub total_replicas: i32,
}
