//! Builders shared by the rollout planner tests.

// Test code: a panic is a failed test.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

pub mod planning;
pub mod sim;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodCondition, PodSpec, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{CloneSet, RollingUpdateCloneSetStrategy};

/// `"3"` is an integer, anything else (`"99%"`, or `"'50"` for the string `"50"`) a string.
pub fn ios(value: &str) -> IntOrString {
    if let Some(text) = value.strip_prefix('\'') {
        return IntOrString::String(text.to_owned());
    }
    value
        .parse::<i32>()
        .map_or_else(|_| IntOrString::String(value.to_owned()), IntOrString::Int)
}

/// upstream's `createTestCloneSet(replicas, partition, maxUnavailable, maxSurge)`.
pub fn cloneset(
    replicas: i32,
    partition: &str,
    max_unavailable: &str,
    max_surge: &str,
) -> CloneSet {
    let mut cs = CloneSet::default();
    cs.metadata.name = Some("cs".into());
    cs.metadata.namespace = Some("default".into());
    cs.spec.replicas = Some(replicas);
    cs.spec.update_strategy.rolling_update = Some(RollingUpdateCloneSetStrategy {
        partition: Some(ios(partition)),
        max_unavailable: Some(ios(max_unavailable)),
        max_surge: Some(ios(max_surge)),
        ..Default::default()
    });
    cs
}

/// A pod from a token `<rev><state><ready><deleted>`: rev `o`/`n` (old_rev/new_rev), state `N` Normal,
/// `U` Updating, `D` PreparingDelete, `P` PreparingUpdate, `-` none, ready `r`/`-`, deleted `d`/`-`.
pub fn pod(name: &str, token: &str) -> Pod {
    let chars: Vec<char> = token.chars().collect();
    let revision = if chars[0] == 'n' {
        "new_rev"
    } else {
        "old_rev"
    };
    let state = match chars[1] {
        'N' => "Normal",
        'U' => "Updating",
        'D' => "PreparingDelete",
        'P' => "PreparingUpdate",
        'Q' => "PreparingNormal",
        'T' => "Updated",
        _ => "",
    };
    let mut labels: BTreeMap<String, String> = [
        ("controller-revision-hash".to_owned(), revision.to_owned()),
        ("pod-template-hash".to_owned(), revision.to_owned()),
    ]
    .into();
    if !state.is_empty() {
        labels.insert("lifecycle.apps.kruise.io/state".into(), state.into());
    }
    if chars[3] == 'd' {
        labels.insert("apps.kruise.io/specified-delete".into(), "true".into());
    }
    let mut pod = Pod {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("default".into()),
            labels: Some(labels),
            ..Default::default()
        },
        spec: Some(PodSpec::default()),
        status: None,
    };
    if chars[2] == 'r' {
        pod.status = Some(PodStatus {
            phase: Some("Running".into()),
            conditions: Some(vec![PodCondition {
                type_: "Ready".into(),
                status: "True".into(),
                ..Default::default()
            }]),
            ..Default::default()
        });
    }
    pod
}

/// Pods from space-separated tokens, named `p0`, `p1`, …
pub fn pods(tokens: &str) -> Vec<Pod> {
    tokens
        .split_whitespace()
        .enumerate()
        .map(|(i, token)| pod(&format!("p{i}"), token))
        .collect()
}

pub fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

pub fn time(text: &str) -> Time {
    Time(at(text))
}

/// A pod built field by field for the ordering tables.
#[derive(Clone, Default)]
pub struct P {
    pub pod: Pod,
}

/// A scheduled, running, ready pod named `name` on `node-a`, created at 10:00, ready since 10:01.
pub fn p(name: &str) -> P {
    P {
        pod: Pod {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some("default".into()),
                labels: Some(BTreeMap::new()),
                creation_timestamp: Some(time("2024-05-01T10:00:00Z")),
                ..Default::default()
            },
            spec: Some(PodSpec {
                node_name: Some("node-a".into()),
                ..Default::default()
            }),
            status: Some(PodStatus {
                phase: Some("Running".into()),
                conditions: Some(vec![PodCondition {
                    type_: "Ready".into(),
                    status: "True".into(),
                    last_transition_time: Some(time("2024-05-01T10:01:00Z")),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
        },
    }
}

impl P {
    pub fn node(mut self, node: &str) -> Self {
        self.pod.spec.as_mut().unwrap().node_name = Some(node.to_owned());
        self
    }
    pub fn phase(mut self, phase: &str) -> Self {
        self.pod.status.as_mut().unwrap().phase = Some(phase.to_owned());
        self
    }
    pub fn not_ready(mut self) -> Self {
        for c in self
            .pod
            .status
            .as_mut()
            .unwrap()
            .conditions
            .as_mut()
            .unwrap()
        {
            if c.type_ == "Ready" {
                c.status = "False".into();
            }
        }
        self
    }
    /// `None` removes the transition time (Go's zero time).
    pub fn ready_at(mut self, at: Option<&str>) -> Self {
        for c in self
            .pod
            .status
            .as_mut()
            .unwrap()
            .conditions
            .as_mut()
            .unwrap()
        {
            if c.type_ == "Ready" {
                c.last_transition_time = at.map(time);
            }
        }
        self
    }
    pub fn restarts(mut self, count: i32) -> Self {
        self.pod.status.as_mut().unwrap().container_statuses =
            Some(vec![k8s_openapi::api::core::v1::ContainerStatus {
                name: "c".into(),
                restart_count: count,
                ..Default::default()
            }]);
        self
    }
    /// `None` removes the creation time (Go's zero time).
    pub fn created(mut self, at: Option<&str>) -> Self {
        self.pod.metadata.creation_timestamp = at.map(time);
        self
    }
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.pod
            .metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(key.to_owned(), value.to_owned());
        self
    }
    pub fn annotation(mut self, key: &str, value: &str) -> Self {
        self.pod
            .metadata
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(key.to_owned(), value.to_owned());
        self
    }
    pub fn build(self) -> Pod {
        self.pod
    }
}

/// The names of `pods` at `indexes`.
pub fn names(pods: &[Pod], indexes: &[usize]) -> Vec<String> {
    indexes
        .iter()
        .map(|&i| pods[i].metadata.name.clone().unwrap())
        .collect()
}
