//! PodProbeMarker (v1alpha1 only): custom probes for the containers of matching pods, whose results
//! become pod conditions, labels and annotations.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Probe;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ProbeState;
use crate::omitempty::is_zero;

/// Custom container probes whose results mark the pods (pod condition, labels, annotations).
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "PodProbeMarker",
    namespaced,
    status = "PodProbeMarkerStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "PodProbeMarker runs custom probes in the containers of matching pods and marks the pods with the results."
)]
#[serde(rename_all = "camelCase")]
pub struct PodProbeMarkerSpec {
    /// Which pods are probed (must not be empty; immutable).
    pub selector: LabelSelector,
    /// The probes; names are unique within a pod, even across containers.
    pub probes: Vec<PodContainerProbe>,
}

/// One custom probe and what its result does to the pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodContainerProbe {
    /// The probe's name (no `#`, not a Kubernetes or Kruise pod condition type).
    pub name: String,
    /// The container the probe runs in.
    pub container_name: String,
    /// The probe: a Kubernetes `Probe` (upstream embeds it inline in a `ContainerProbeSpec`); kruise-daemon
    /// runs `exec` and `tcpSocket` handlers.
    pub probe: Probe,
    /// Labels and annotations to patch onto the pod per result (at most one entry per state).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub marker_policy: Vec<ProbeMarkerPolicy>,
    /// The pod condition type that records the result (`True` for `Succeeded`, `False` for `Failed`). At
    /// least one of this and `markerPolicy` is set.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pod_condition_type: String,
}

/// What to patch onto a pod when a probe reaches a state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProbeMarkerPolicy {
    /// `Succeeded` or `Failed`. When the probe fails and no `Failed` policy exists, the `Succeeded` policy's
    /// labels and annotations are removed.
    pub state: ProbeState,
    /// Labels to set on the pod.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub labels: BTreeMap<String, String>,
    /// Annotations to set on the pod.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub annotations: BTreeMap<String, String>,
}

/// What the PodProbeMarker controller observed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodProbeMarkerStatus {
    /// The generation the status describes.
    #[serde(default)]
    pub observed_generation: i64,
    /// Pods the selector matches.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub matched_pods: i64,
}
