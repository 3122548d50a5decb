use std::sync::Mutex;

use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_api::apps::v1beta1::DaemonSet;
use kube::ResourceExt;
use serde_json::json;

use super::*;
use crate::daemonset::watch::OWNER;
use crate::metrics::Metrics;

/// A controller's state that records the owners it was told to forget.
#[derive(Default)]
struct Recording {
    forgotten: Mutex<Vec<String>>,
}

impl WorkloadState for Recording {
    type Owner = DaemonSet;

    fn forget_deleted(&self, owner: &DaemonSet) {
        self.forgotten.lock().unwrap().push(owner.name_any());
    }
}

fn daemonset(name: &str) -> DaemonSet {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "ns", "uid": format!("{name}-uid")},
        "spec": {"selector": {"matchLabels": {"app": name}}, "template": {}},
    }))
    .unwrap()
}

fn pod(name: &str, owner_api: &str) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": "ns",
        "ownerReferences": [{"apiVersion": owner_api, "kind": "DaemonSet",
            "name": "agent", "uid": "agent-uid", "controller": true}]}}))
    .unwrap()
}

fn queue(metrics: &Metrics) -> Arc<QueueDepth> {
    Arc::new(QueueDepth::new(metrics.controller("daemonset")))
}

#[test]
fn owned_object_events_count_their_owner_as_queued() {
    let metrics = Metrics::new();
    let queue = queue(&metrics);
    let map = queued_owner::<DaemonSet, Pod>(OWNER, &queue);
    let owner = map(&pod("agent-a", "apps.kruise.io/v1alpha1")).unwrap();
    assert_eq!(reference_key(&owner), "ns/agent");
    assert_eq!(
        object_key(&daemonset("agent")),
        reference_key(&owner),
        "the owner watch and the reconciles count the same key"
    );
    assert!(map(&pod("agent-b", "apps.kruise.io/v1beta1")).is_some());
    assert!(
        map(&pod("other", "apps/v1")).is_none(),
        "an apps/v1 DaemonSet's pod"
    );
    assert_eq!(queue.depth(), 1, "two events for one owner");
    assert!(
        metrics
            .encode()
            .contains("kruise_manager_queue_depth{controller=\"daemonset\"} 1")
    );
    queue.started("ns/agent");
    queue.finished("ns/agent");
    assert!(
        metrics
            .encode()
            .contains("kruise_manager_queue_depth{controller=\"daemonset\"} 0")
    );
}

#[tokio::test]
async fn a_trigger_during_a_reconcile_keeps_the_owner_queued_after_it() {
    let metrics = Metrics::new();
    let queue = queue(&metrics);
    let mut reconcile = counting_starts(&queue, |owner: Arc<DaemonSet>, _state: Arc<()>| {
        std::future::ready(owner.name_any())
    });
    queue.triggered("ns/agent");
    let reconciled = reconcile(Arc::new(daemonset("agent")), Arc::new(()));
    queue.triggered("ns/agent");
    assert_eq!(reconciled.await, "agent");
    queue.finished("ns/agent");
    assert_eq!(
        queue.depth(),
        1,
        "the trigger that came during it runs next"
    );
    queue.started("ns/agent");
    queue.finished("ns/agent");
    assert_eq!(queue.depth(), 0);
}

#[test]
fn a_change_that_concerns_every_owner_triggers_each_once() {
    let metrics = Metrics::new();
    let queue = queue(&metrics);
    let (reader, mut writer) = reflector::store::<DaemonSet>();
    for name in ["agent", "logs"] {
        writer.apply_watcher_event(&watcher::Event::Apply(daemonset(name)));
    }
    let every = every_owner(&queue, reader);
    let mut triggered: Vec<String> = every(Arc::new(Node::default()))
        .iter()
        .map(reference_key)
        .collect();
    triggered.sort();
    assert_eq!(triggered, ["ns/agent", "ns/logs"]);
    every(Arc::new(Node::default()));
    assert_eq!(queue.depth(), 2, "agent once, logs once");
    assert!(
        metrics
            .encode()
            .contains("kruise_manager_queue_depth{controller=\"daemonset\"} 2")
    );
}

#[test]
fn a_change_that_names_owners_triggers_only_the_known_ones() {
    let metrics = Metrics::new();
    let queue = queue(&metrics);
    let (reader, mut writer) = reflector::store::<DaemonSet>();
    writer.apply_watcher_event(&watcher::Event::Apply(daemonset("agent")));
    let named = named_owners(&queue, reader, |_: &Node| {
        ["agent", "gone"]
            .into_iter()
            .map(|name| ObjectRef::<DaemonSet>::new(name).within("ns"))
            .collect()
    });
    let triggered: Vec<String> = named(Arc::new(Node::default()))
        .iter()
        .map(reference_key)
        .collect();
    assert_eq!(
        triggered,
        ["ns/agent"],
        "a name that is no owner is dropped"
    );
    assert_eq!(queue.depth(), 1);
}

#[test]
fn only_a_delete_makes_the_state_forget_the_owner() {
    let state = Recording::default();
    forget_deleted(&state, &watcher::Event::Apply(daemonset("agent")));
    forget_deleted(&state, &watcher::Event::InitApply(daemonset("logs")));
    assert!(
        state.forgotten.lock().unwrap().is_empty(),
        "updates keep it"
    );
    forget_deleted(&state, &watcher::Event::Delete(daemonset("agent")));
    assert_eq!(*state.forgotten.lock().unwrap(), ["agent"]);
}
