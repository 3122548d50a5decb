//! NodePodProbe (v1alpha1 only): the probes kruise-daemon runs on one node, written by the
//! PodProbeMarker controller, and their results.

use k8s_openapi::api::core::v1::Probe;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omitempty::is_zero;

/// The custom probes of the pods on one node (named after the node), and their latest results.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "NodePodProbe",
    status = "NodePodProbeStatus",
    derive = "PartialEq",
    derive = "Default",
    doc = "NodePodProbe lists the custom probes kruise-daemon runs for the pods of one node, and their results."
)]
#[serde(rename_all = "camelCase")]
pub struct NodePodProbeSpec {
    /// The pods on the node that have custom probes.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pod_probes: Vec<PodProbe>,
}

/// The custom probes of one pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodProbe {
    /// The pod's name.
    pub name: String,
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's UID.
    pub uid: String,
    /// The pod's IP (capitalised JSON key, as upstream).
    #[serde(rename = "IP")]
    pub ip: String,
    /// The probes to run.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub probes: Vec<ContainerProbe>,
}

/// One probe of one container.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerProbe {
    /// `<PodProbeMarker name>#<probe name>`.
    pub name: String,
    /// The container the probe runs in.
    pub container_name: String,
    /// The probe (a Kubernetes `Probe`; kruise-daemon runs `exec` and `tcpSocket` handlers).
    pub probe: Probe,
}

/// The latest probe results on the node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodePodProbeStatus {
    /// One entry per probed pod.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub pod_probe_statuses: Vec<PodProbeStatus>,
}

/// The probe results of one pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodProbeStatus {
    /// The pod's name.
    pub name: String,
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's UID.
    pub uid: String,
    /// One entry per probe.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub probe_states: Vec<ContainerProbeState>,
}

/// The result of one probe.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerProbeState {
    /// `<PodProbeMarker name>#<probe name>`.
    pub name: String,
    /// The probe's result.
    pub state: ProbeState,
    /// When the probe last ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
    /// When the result last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// The probe's output when it succeeded, its error when it failed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub message: String,
}

crate::open_enum! {
    /// The result of a custom probe (also the `state` a PodProbeMarker marker policy reacts to).
    pub enum ProbeState {
        /// The probe succeeded (pod condition `True`).
        Succeeded = "Succeeded",
        /// The probe failed (pod condition `False`).
        Failed = "Failed",
        /// The result is not known (pod condition `Unknown`).
        StateUnknown = "Unknown",
    }
}

impl Default for ProbeState {
    /// Go's zero value: the empty string.
    fn default() -> Self {
        Self::Unknown(String::new())
    }
}

impl ProbeState {
    /// Whether this result matches a pod condition status (`True` ⇔ `Succeeded`, `False` ⇔ `Failed`, anything
    /// else ⇔ `Unknown`), as the PodProbeMarker controller compares them.
    #[must_use]
    pub fn matches_condition_status(&self, status: &str) -> bool {
        match status {
            "True" => *self == Self::Succeeded,
            "False" => *self == Self::Failed,
            _ => *self == Self::StateUnknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_state_wire_values() {
        assert_eq!(ProbeState::from("Unknown"), ProbeState::StateUnknown);
        assert_eq!(
            serde_json::to_string(&ProbeState::StateUnknown).unwrap(),
            "\"Unknown\""
        );
        assert!(ProbeState::Succeeded.matches_condition_status("True"));
        assert!(ProbeState::Failed.matches_condition_status("False"));
        assert!(ProbeState::StateUnknown.matches_condition_status("Unknown"));
        assert!(!ProbeState::Succeeded.matches_condition_status("False"));
    }

    #[test]
    fn ip_key_is_capitalised() {
        let probe = PodProbe {
            name: "p".into(),
            namespace: "ns".into(),
            uid: "u".into(),
            ip: "10.0.0.1".into(),
            probes: Vec::new(),
        };
        let json = serde_json::to_value(&probe).unwrap();
        assert_eq!(json["IP"], "10.0.0.1");
        assert!(json.get("ip").is_none());
    }
}
