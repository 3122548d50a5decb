//! `SidecarSet` v1alpha1: the v1.8 shape with HEAD's `shareVolumeDevicePolicy` and
//! `resourcesPolicy` on sidecar containers.

use k8s_openapi::api::core::v1::{LocalObjectReference, Volume};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    PodInjectPolicy, ResourceExpressions, ResourcesExpr, ResourcesPolicy, ShareVolumePolicy,
    ShareVolumePolicyType, SidecarContainer, SidecarContainerUpgradeStrategy,
    SidecarContainerUpgradeType, SidecarSetInjectRevision, SidecarSetInjectRevisionPolicy,
    SidecarSetInjectionStrategy, SidecarSetPatchPodMetadata, SidecarSetPatchPolicy,
    SidecarSetStatus, SidecarSetUpdateStrategy, SidecarSetUpdateStrategyType,
    SourceContainerNameSource, TargetContainersMode, TransferEnvVar,
};
use crate::omitempty::is_zero;

/// Sidecar containers (and init containers, volumes, pull secrets and pod metadata) injected into every pod
/// the selectors match, and updated in place when the `SidecarSet` changes.
///
/// The custom version of a v1alpha1 `SidecarSet` is its label `apps.kruise.io/sidecarset-custom-version`.
// kube's `printcolumn(...)` entries repeat `type_ = ...`, which clippy takes for duplicated attributes.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "SidecarSet",
    status = "SidecarSetStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "SidecarSet injects sidecar containers into the pods it selects and keeps them up to date.",
    printcolumn(
        name = "MATCHED",
        type_ = "integer",
        json_path = ".status.matchedPods",
        description = "Pods the SidecarSet selects."
    ),
    printcolumn(
        name = "UPDATED",
        type_ = "integer",
        json_path = ".status.updatedPods",
        description = "Selected pods running the latest sidecars."
    ),
    printcolumn(
        name = "READY",
        type_ = "integer",
        json_path = ".status.readyPods",
        description = "Selected pods that are ready."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "Time since creation."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct SidecarSetSpec {
    /// Which pods get the sidecars. Must be set and non-empty: an empty selector matches no pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Only pods of this namespace get the sidecars (empty: every namespace).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub namespace: String,
    /// Which namespaces' pods get the sidecars, by namespace labels (unset: every namespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace_selector: Option<LabelSelector>,
    /// Init containers injected when a pod is created (never into existing pods), in name order. Native
    /// sidecars (`restartPolicy: Always`) also count for the `SidecarSet` hash.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub init_containers: Vec<SidecarContainer>,
    /// Sidecar containers injected into the pods.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub containers: Vec<SidecarContainer>,
    /// Volumes the sidecars mount; added to the pod unless it has a volume of the same name. Schemaless in the
    /// CRD, as upstream.
    #[serde(default, skip_serializing_if = "is_zero")]
    #[schemars(schema_with = "crate::schema::preserve_unknown_object_list")]
    pub volumes: Vec<Volume>,
    /// How pods that already run the sidecars are updated.
    #[serde(default)]
    pub update_strategy: SidecarSetUpdateStrategy,
    /// How (and which revision of) the sidecars are injected into new pods.
    #[serde(default)]
    pub injection_strategy: SidecarSetInjectionStrategy,
    /// Image pull secrets added to the pod for the sidecar images.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    /// How many old `ControllerRevisions` to keep (defaults to 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision_history_limit: Option<i32>,
    /// Pod annotations written on injection (and, for non-`Retain` policies, on in-place updates).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub patch_pod_metadata: Vec<SidecarSetPatchPodMetadata>,
}
