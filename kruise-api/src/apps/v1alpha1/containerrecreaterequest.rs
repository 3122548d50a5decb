//! `ContainerRecreateRequest` v1alpha1: the status has no conditions and no snapshot; those
//! live in the annotations `crr.apps.kruise.io/unready-acquired` and
//! `crr.apps.kruise.io/sync-container-statuses`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::apps::v1beta1::{
    ContainerRecreateRequestContainer, ContainerRecreateRequestContainerContext,
    ContainerRecreateRequestContainerRecreateState, ContainerRecreateRequestFailurePolicy,
    ContainerRecreateRequestPhase, ContainerRecreateRequestStrategy, CrrProbeHandler,
};
use crate::omitempty::is_zero;

/// A request to kruise-daemon to restart (recreate) some containers of a running pod, in order, with their
/// preStop hooks, without recreating the pod. The spec is immutable.
// kube's `printcolumn(...)` entries repeat `type_ = ...`, which clippy takes for duplicated attributes.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "ContainerRecreateRequest",
    namespaced,
    status = "ContainerRecreateRequestStatus",
    shortname = "crr",
    derive = "PartialEq",
    derive = "Default",
    doc = "ContainerRecreateRequest asks kruise-daemon to recreate containers of a pod in place.",
    printcolumn(
        name = "PHASE",
        type_ = "string",
        json_path = ".status.phase",
        description = "Phase of the request."
    ),
    printcolumn(
        name = "POD",
        type_ = "string",
        json_path = ".spec.podName",
        description = "The pod whose containers are recreated."
    ),
    printcolumn(
        name = "NODE",
        type_ = "string",
        json_path = ".metadata.labels.crr\\.apps\\.kruise\\.io/node-name",
        description = "The node of the pod."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "Time since creation."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestSpec {
    /// The pod whose containers are recreated (same namespace).
    pub pod_name: String,
    /// The containers to recreate, in order; each must exist in the pod.
    pub containers: Vec<ContainerRecreateRequestContainer>,
    /// How the containers are recreated (the webhook defaults it to `{failurePolicy: Fail}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<ContainerRecreateRequestStrategy>,
    /// Seconds after creation at which the request is completed even if it has not finished (≥ 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
    /// Seconds after completion at which the request is deleted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
}

/// What the request's controllers observed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestStatus {
    /// Where the request stands (always written, empty until kruise-daemon picks the request up).
    #[serde(default)]
    pub phase: ContainerRecreateRequestPhase,
    /// When the request completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// Details.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub message: String,
    /// Where the recreation of each container stands.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub container_recreate_states: Vec<ContainerRecreateRequestContainerRecreateState>,
}
