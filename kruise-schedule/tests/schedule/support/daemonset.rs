//! Builders and accessors shared by the Advanced DaemonSet tests.

// Test code: each test file uses some of these; a panic is a failed test.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::{Timestamp, Zoned, tz::TimeZone};
use kruise_api::apps::v1beta1::DaemonSet;
use kruise_schedule::daemonset::{
    ActionKind, KnownRevision, Options, Plan, PlanInput, Revisions, plan,
};
use kruise_schedule::planning::PlanRule;
use serde_json::{Value, json};

pub const NEW: &str = "new-hash";
pub const OLD: &str = "old-hash";
pub const NOW: &str = "2024-05-01T10:00:00Z";

/// A DaemonSet `ds` in `ns` (generation 3, image `img:2`) with `rollingUpdate` merged from `rolling`.
pub fn ds(rolling: Value) -> DaemonSet {
    ds_with(rolling, |_| {})
}

pub fn ds_with(rolling: Value, edit: impl FnOnce(&mut Value)) -> DaemonSet {
    let mut value = json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "DaemonSet",
        "metadata": {"name": "ds", "namespace": "ns", "uid": "ds-uid", "generation": 3},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "c", "image": "img:2"}]},
            },
            "updateStrategy": {"type": "RollingUpdate"},
        },
        "status": {"desiredNumberScheduled": 0, "currentNumberScheduled": 0, "numberMisscheduled": 0,
                   "numberReady": 0, "updatedNumberScheduled": 0, "observedGeneration": 2, "updateRevision": NEW},
    });
    value["spec"]["updateStrategy"]["rollingUpdate"] = rolling;
    edit(&mut value);
    serde_json::from_value(value).unwrap()
}

/// Sets `status.desiredNumberScheduled` (what partition and burstReplicas percentages scale over).
pub fn with_status_desired(mut ds: DaemonSet, desired: i32) -> DaemonSet {
    ds.status.as_mut().unwrap().desired_number_scheduled = desired;
    ds
}

pub fn node(name: &str) -> Node {
    node_json(name, json!({}), json!({}))
}

pub fn node_json(name: &str, labels: Value, spec: Value) -> Node {
    let mut value = json!({"metadata": {"name": name}});
    value["metadata"]["labels"] = labels;
    value["spec"] = spec;
    serde_json::from_value(value).unwrap()
}

pub fn nodes(names: &[&str]) -> Vec<Node> {
    names.iter().map(|n| node(n)).collect()
}

/// How a test pod looks.
#[derive(Clone, Copy, Debug)]
pub enum Health {
    /// Running and ready for a long time.
    Available,
    /// Running, ready since `NOW` (not yet available with minReadySeconds).
    JustReady,
    /// Running, not ready.
    NotReady,
    /// Phase Failed.
    Failed,
}

/// A pod `name` on `node` at `hash`, created at minute `minute` of 2024-05-01T09.
pub fn pod(name: &str, node: &str, hash: &str, health: Health, minute: u32) -> Pod {
    let (phase, ready, since) = match health {
        Health::Available => ("Running", "True", "2024-05-01T08:00:00Z"),
        Health::JustReady => ("Running", "True", NOW),
        Health::NotReady => ("Running", "False", "2024-05-01T08:00:00Z"),
        Health::Failed => ("Failed", "False", "2024-05-01T08:00:00Z"),
    };
    serde_json::from_value(json!({
        "metadata": {
            "name": name, "namespace": "ns",
            "creationTimestamp": format!("2024-05-01T09:{minute:02}:00Z"),
            "labels": {"app": "d", "controller-revision-hash": hash},
        },
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": if hash == NEW { "img:2" } else { "img:1" }}]},
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": since}]},
    }))
    .unwrap()
}

pub fn edit_pod(mut pod: Pod, edit: impl FnOnce(&mut Value)) -> Pod {
    let mut value = serde_json::to_value(&pod).unwrap();
    edit(&mut value);
    pod = serde_json::from_value(value).unwrap();
    pod
}

pub fn now() -> Zoned {
    NOW.parse::<Timestamp>().unwrap().to_zoned(TimeZone::UTC)
}

pub fn run(ds: &DaemonSet, pods: &[Pod], nodes: &[Node]) -> Plan {
    run_with(ds, pods, nodes, &[])
}

pub fn run_with(ds: &DaemonSet, pods: &[Pod], nodes: &[Node], known: &[KnownRevision<'_>]) -> Plan {
    let now = now();
    let options = Options::default();
    let revisions = Revisions {
        update_hash: NEW,
        known,
    };
    let pods: Vec<&Pod> = pods.iter().collect();
    let nodes: Vec<&Node> = nodes.iter().collect();
    plan(&PlanInput::new(
        ds, &pods, &nodes, revisions, &now, &options,
    ))
}

/// Nodes that get a new pod, in action order.
pub fn created(plan: &Plan) -> Vec<String> {
    plan.actions
        .iter()
        .filter_map(|a| match &a.kind {
            ActionKind::CreatePod { node, .. } => node.clone(),
            _ => None,
        })
        .collect()
}

fn names_of(plan: &Plan, pods: &[Pod], pick: impl Fn(&ActionKind) -> Option<usize>) -> Vec<String> {
    plan.actions
        .iter()
        .filter_map(|a| pick(&a.kind))
        .map(|i| pods[i].metadata.name.clone().unwrap())
        .collect()
}

/// Names of pods deleted, in action order.
pub fn deleted(plan: &Plan, pods: &[Pod]) -> Vec<String> {
    names_of(plan, pods, |k| match k {
        ActionKind::DeletePod { pod } => Some(*pod),
        _ => None,
    })
}

/// Names of pods updated in place, in action order.
pub fn in_place(plan: &Plan, pods: &[Pod]) -> Vec<String> {
    names_of(plan, pods, |k| match k {
        ActionKind::UpdateInPlace { pod, .. } => Some(*pod),
        _ => None,
    })
}

/// Names of pods moved to a lifecycle state.
pub fn held(plan: &Plan, pods: &[Pod]) -> Vec<String> {
    names_of(plan, pods, |k| match k {
        ActionKind::Lifecycle { pod, .. } => Some(*pod),
        _ => None,
    })
}

/// One old available pod per node, named `p-<node>`, created in node order.
pub fn old_pods(nodes: &[&str]) -> Vec<Pod> {
    nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            pod(
                &format!("p-{n}"),
                n,
                OLD,
                Health::Available,
                u32::try_from(i).unwrap(),
            )
        })
        .collect()
}

/// The rule ids of the actions.
pub fn rules(plan: &Plan) -> Vec<&'static str> {
    plan.actions.iter().map(|a| a.rule.id()).collect()
}
