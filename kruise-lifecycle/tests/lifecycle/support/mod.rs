//! Pods, hooks and clocks for the integration tests.

// Test code: each test module uses some of these; a panic is a failed test.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodCondition, PodReadinessGate, PodSpec, PodStatus};
use k8s_openapi::jiff::tz::{Offset, TimeZone};
use k8s_openapi::jiff::{Timestamp, Zoned};
use kruise_api::annotations::{PodNotReadyEntry, format_pod_not_ready_message};
use kruise_api::lifecycle::LifecycleHook;

pub const STATE: &str = "lifecycle.apps.kruise.io/state";
pub const TIMESTAMP: &str = "lifecycle.apps.kruise.io/timestamp";
pub const KRUISE_POD_READY: &str = "KruisePodReady";

/// 2024-05-01T10:00:00+08:00 (02:00:00.5 UTC), the controller's local zone being UTC+8.
pub fn now() -> Zoned {
    let instant: Timestamp = "2024-05-01T02:00:00.5Z".parse().unwrap();
    instant.to_zoned(TimeZone::fixed(Offset::constant(8)))
}

/// What `now()` renders as in the lifecycle timestamp annotation.
pub const NOW_ANNOTATION: &str = "2024-05-01T10:00:00+08:00";

pub fn hook(labels: &[(&str, &str)], finalizers: &[&str], mark: bool) -> LifecycleHook {
    LifecycleHook {
        labels_handler: labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        finalizers_handler: finalizers.iter().map(|f| (*f).to_owned()).collect(),
        mark_pod_not_ready: mark,
    }
}

/// A pod under construction.
#[derive(Clone, Debug, Default)]
pub struct PodBuilder {
    pub state: Option<&'static str>,
    pub labels: Vec<(&'static str, &'static str)>,
    pub finalizers: Vec<&'static str>,
    pub gate: bool,
    /// Lifecycle not-ready keys listed in a `KruisePodReady=False` condition.
    pub entries: Vec<&'static str>,
    pub ready: bool,
    pub node: bool,
}

pub fn pod() -> PodBuilder {
    PodBuilder::default()
}

impl PodBuilder {
    pub fn state(mut self, state: &'static str) -> Self {
        self.state = Some(state);
        self
    }
    pub fn label(mut self, key: &'static str, value: &'static str) -> Self {
        self.labels.push((key, value));
        self
    }
    pub fn finalizer(mut self, finalizer: &'static str) -> Self {
        self.finalizers.push(finalizer);
        self
    }
    /// With the `KruisePodReady` gate and a serving pod's conditions.
    pub fn gated(mut self) -> Self {
        self.gate = true;
        self.ready = true;
        self
    }
    pub fn entry(mut self, key: &'static str) -> Self {
        self.entries.push(key);
        self
    }
    pub fn scheduled(mut self) -> Self {
        self.node = true;
        self
    }

    pub fn build(&self) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.namespace = Some("demo".into());
        pod.metadata.name = Some("web-x7k2p".into());
        pod.metadata.resource_version = Some("1000".into());
        let mut labels: BTreeMap<String, String> = self
            .labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        if let Some(state) = self.state {
            labels.insert(STATE.into(), state.into());
        }
        pod.metadata.labels = Some(labels);
        pod.metadata.finalizers = Some(self.finalizers.iter().map(|f| (*f).to_owned()).collect());
        let mut spec = PodSpec::default();
        if self.gate {
            spec.readiness_gates = Some(vec![PodReadinessGate {
                condition_type: KRUISE_POD_READY.into(),
            }]);
        }
        if self.node {
            spec.node_name = Some("node-1".into());
        }
        pod.spec = Some(spec);
        let mut conditions = Vec::new();
        if self.ready {
            conditions.push(condition("ContainersReady", "True", None));
            conditions.push(condition(
                "Ready",
                if self.entries.is_empty() {
                    "True"
                } else {
                    "False"
                },
                None,
            ));
        }
        if self.gate {
            let entries: Vec<PodNotReadyEntry> = self
                .entries
                .iter()
                .map(|key| PodNotReadyEntry {
                    user_agent: "Lifecycle".into(),
                    key: (*key).into(),
                })
                .collect();
            conditions.push(condition(
                KRUISE_POD_READY,
                if entries.is_empty() { "True" } else { "False" },
                Some(format_pod_not_ready_message(&entries)),
            ));
        }
        pod.status = Some(PodStatus {
            conditions: Some(conditions),
            ..Default::default()
        });
        pod
    }
}

pub fn condition(type_: &str, status: &str, message: Option<String>) -> PodCondition {
    PodCondition {
        type_: type_.into(),
        status: status.into(),
        message,
        ..Default::default()
    }
}

/// The lifecycle keys listed in the pod's `KruisePodReady` message.
pub fn lifecycle_keys(pod: &Pod) -> Vec<String> {
    kruise_lifecycle::not_ready::entries(pod)
        .unwrap()
        .into_iter()
        .filter(|entry| entry.user_agent == "Lifecycle")
        .map(|entry| entry.key)
        .collect()
}

pub fn finalizers(pod: &Pod) -> Vec<String> {
    pod.metadata.finalizers.clone().unwrap_or_default()
}
