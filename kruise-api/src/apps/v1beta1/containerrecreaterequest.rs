//! `ContainerRecreateRequest` v1beta1 (upstream
//! `apis/apps/v1beta1/containerrecreaterequest_types.go`).
//!
//! Everything but the top-level spec and the status is identical in both versions and re-exported by
//! [`v1alpha1`](crate::apps::v1alpha1).

use k8s_openapi::api::core::v1::{ContainerPort, ExecAction, HTTPGetAction, TCPSocketAction};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::annotations::ContainerStatusSnapshot;
use crate::omitempty::is_zero;

/// A request to kruise-daemon to restart (recreate) some containers of a running pod, in order, with their
/// preStop hooks, without recreating the pod. The spec is immutable.
// kube's `printcolumn(...)` entries repeat `type_ = ...`, which clippy takes for duplicated attributes.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
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

/// A container to recreate.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestContainer {
    /// The container's name in the pod.
    pub name: String,
    /// The container's preStop hook, copied from the pod by the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pre_stop: Option<CrrProbeHandler>,
    /// The container's ports, copied from the pod by the webhook when the preStop hook is an HTTP call.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ports: Vec<ContainerPort>,
    /// The container's ID and restart count when the request was created, copied from the pod status by
    /// the webhook.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_context: Option<ContainerRecreateRequestContainerContext>,
}

/// A preStop hook: exactly one of the actions.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CrrProbeHandler {
    /// Run a command in the container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exec: Option<ExecAction>,
    /// Send an HTTP GET request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_get: Option<HTTPGetAction>,
    /// Open a TCP connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_socket: Option<TCPSocketAction>,
}

/// A container's identity when the request was created; a different ID or a higher restart count later
/// means it was recreated.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestContainerContext {
    /// The container's ID (`<runtime>://<id>`).
    #[serde(rename = "containerID")]
    pub container_id: String,
    /// The container's restart count.
    pub restart_count: i32,
}

/// How the containers of a request are recreated.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestStrategy {
    /// What a failed container does to the request: `Fail` (the default: complete it) or `Ignore`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_policy: Option<ContainerRecreateRequestFailurePolicy>,
    /// Recreate a container only after the previous one has been recreated.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ordered_recreate: bool,
    /// Kill a container even if its previous incarnation is still starting.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub force_recreate: bool,
    /// Seconds a container may take to stop (the webhook defaults it to the pod's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub termination_grace_period_seconds: Option<i64>,
    /// Seconds the pod is kept not-ready before the preStop hooks and the kills.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unready_grace_period_seconds: Option<i64>,
    /// Seconds a recreated container must run (and be ready) to count as succeeded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_started_seconds: i32,
}

crate::open_enum! {
    /// What a container that fails to be recreated does to the request.
    pub enum ContainerRecreateRequestFailurePolicy {
        /// Complete the request (the default).
        Fail = "Fail",
        /// Go on with the other containers.
        Ignore = "Ignore",
    }
}

crate::open_enum! {
    /// The phase of a request, or of one of its containers.
    pub enum ContainerRecreateRequestPhase {
        /// Waiting for kruise-daemon.
        Pending = "Pending",
        /// Containers are being recreated.
        Recreating = "Recreating",
        /// (Container) recreated, running and ready.
        Succeeded = "Succeeded",
        /// (Container) could not be recreated.
        Failed = "Failed",
        /// (Request) finished, successfully or not.
        Completed = "Completed",
    }
}

/// Go's zero value: the empty phase of a request kruise-daemon has not picked up yet.
impl Default for ContainerRecreateRequestPhase {
    fn default() -> Self {
        Self::Unknown(String::new())
    }
}

/// Where the recreation of one container stands.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerRecreateRequestContainerRecreateState {
    /// The container's name.
    pub name: String,
    /// `Pending`, `Recreating`, `Succeeded` or `Failed`.
    pub phase: ContainerRecreateRequestPhase,
    /// Details.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub message: String,
    /// Whether kruise-daemon has killed the container.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub is_killed: bool,
}

/// What the request's controllers observed (v1beta1: with conditions and the container snapshot).
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
    /// Observations; type `PreRecreateGrace` records when the pod was made not-ready before the recreation
    /// (v1alpha1: the annotation `crr.apps.kruise.io/unready-acquired`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conditions: Vec<Condition>,
    /// The pod's container statuses as last synced while recreating (v1alpha1: the annotation
    /// `crr.apps.kruise.io/sync-container-statuses`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub container_status_snapshot: Vec<ContainerStatusSnapshot>,
}
