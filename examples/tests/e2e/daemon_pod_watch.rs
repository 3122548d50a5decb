//! A pod watch that judges every event of a DaemonSet rollout per node: the most pods one node ran at once,
//! the most surge pods (pods beyond one per node) at once, the most nodes without a Ready pod at once
//! (counting only nodes that had a Ready pod before), and every revision each node ever ran (read when the
//! watch stops).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use tokio::task::JoinHandle;

use crate::daemonset_env::{node_of, revision};

/// What a [`DaemonPodWatch`] saw, over every event.
#[derive(Debug, Default)]
pub struct SeenPerNode {
    /// The most live pods one node had at once.
    pub max_pods_on_a_node: usize,
    /// The most pods beyond one per node at once (surge pods).
    pub max_surge: usize,
    /// The most nodes without a Ready live pod at once, among nodes that had one before.
    pub max_unavailable_nodes: usize,
    /// Every revision each node ran a pod of.
    pub revisions: BTreeMap<String, BTreeSet<String>>,
    /// Events seen.
    pub events: usize,
}

#[derive(Default)]
struct State {
    pods: BTreeMap<String, Pod>,
    had_ready: BTreeSet<String>,
}

/// Watches the pods matching a label selector until stopped.
pub struct DaemonPodWatch {
    seen: Arc<Mutex<SeenPerNode>>,
    task: JoinHandle<()>,
}

impl DaemonPodWatch {
    /// Starts watching the pods matching `selector`.
    pub fn start(api: Api<Pod>, selector: &str) -> Self {
        let seen = Arc::new(Mutex::new(SeenPerNode::default()));
        let record = Arc::clone(&seen);
        let config = watcher::Config::default().labels(selector);
        let task = tokio::spawn(async move {
            let mut state = State::default();
            let mut events = watcher(api, config).default_backoff().boxed();
            while let Some(item) = events.next().await {
                let Ok(event) = item else { continue };
                match event {
                    watcher::Event::Apply(pod) | watcher::Event::InitApply(pod) => {
                        state.pods.insert(pod.name_any(), pod);
                    }
                    watcher::Event::Delete(pod) => {
                        state.pods.remove(&pod.name_any());
                    }
                    // A relist replaces what the watch knew; the pods listed come as InitApply.
                    watcher::Event::Init => state.pods.clear(),
                    watcher::Event::InitDone => {}
                }
                let mut seen = record.lock().unwrap_or_else(PoisonError::into_inner);
                judge(&mut state, &mut seen);
            }
        });
        Self { seen, task }
    }

    /// Stops watching; what it saw.
    pub fn stop(self) -> SeenPerNode {
        self.task.abort();
        std::mem::take(&mut *self.seen.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

fn judge(state: &mut State, seen: &mut SeenPerNode) {
    seen.events += 1;
    let mut live: BTreeMap<String, Vec<&Pod>> = BTreeMap::new();
    for pod in state
        .pods
        .values()
        .filter(|pod| pod.metadata.deletion_timestamp.is_none())
    {
        let node = node_of(pod);
        seen.revisions
            .entry(node.clone())
            .or_default()
            .insert(revision(pod));
        live.entry(node).or_default().push(pod);
    }
    let ready_nodes: BTreeSet<String> = live
        .iter()
        .filter(|(_, pods)| pods.iter().any(|pod| kruise_api::pod::is_ready(pod)))
        .map(|(node, _)| node.clone())
        .collect();
    let unavailable = state
        .had_ready
        .iter()
        .filter(|node| !ready_nodes.contains(*node))
        .count();
    state.had_ready.extend(ready_nodes);
    seen.max_unavailable_nodes = seen.max_unavailable_nodes.max(unavailable);
    seen.max_pods_on_a_node = seen
        .max_pods_on_a_node
        .max(live.values().map(Vec::len).max().unwrap_or(0));
    let surge = live
        .values()
        .map(|pods| pods.len().saturating_sub(1))
        .sum::<usize>();
    seen.max_surge = seen.max_surge.max(surge);
}
