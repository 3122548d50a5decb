//! A pod watch that judges every event of a rollout: the most pods unavailable at once, the most pods at
//! once, and any instance id carried by two live pods at once (read when the watch stops).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::{Result, ensure};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, ResourceExt};
use tokio::task::JoinHandle;

use crate::cloneset_env::is_ready;

/// The label CloneSet pods carry their instance id in.
const INSTANCE_ID: &str = "apps.kruise.io/cloneset-instance-id";

/// What a [`PodWatch`] saw, over every event.
#[derive(Debug, Default)]
pub struct Seen {
    /// The most pods not Ready at once.
    pub max_unavailable: usize,
    /// The most live pods at once.
    pub max_pods: usize,
    /// Instance ids two live pods carried at once.
    pub duplicate_ids: Vec<String>,
}

impl Seen {
    /// Fails when more than `max_unavailable` pods were unavailable or more than `max_pods` pods lived at
    /// once, or an instance id was carried twice.
    pub fn check(&self, max_unavailable: usize, max_pods: usize) -> Result<()> {
        ensure!(
            self.max_unavailable <= max_unavailable,
            "{} pods were unavailable at once (at most {max_unavailable})",
            self.max_unavailable
        );
        ensure!(
            self.max_pods <= max_pods,
            "{} pods at once (at most {max_pods})",
            self.max_pods
        );
        ensure!(
            self.duplicate_ids.is_empty(),
            "instance ids on two live pods at once: {:?}",
            self.duplicate_ids
        );
        Ok(())
    }
}

/// Watches the pods `app=<name>` of a namespace until stopped.
pub struct PodWatch {
    seen: Arc<Mutex<Seen>>,
    task: JoinHandle<()>,
}

impl PodWatch {
    /// Starts watching the pods labelled `app=<name>`.
    pub fn start(api: Api<Pod>, name: &str) -> Self {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let record = Arc::clone(&seen);
        let config = watcher::Config::default().labels(&format!("app={name}"));
        let task = tokio::spawn(async move {
            let mut pods: BTreeMap<String, Pod> = BTreeMap::new();
            let mut events = watcher(api, config).default_backoff().boxed();
            while let Some(item) = events.next().await {
                let Ok(event) = item else { continue };
                match event {
                    watcher::Event::Apply(pod) | watcher::Event::InitApply(pod) => {
                        pods.insert(pod.name_any(), pod);
                    }
                    watcher::Event::Delete(pod) => {
                        pods.remove(&pod.name_any());
                    }
                    // A relist replaces what the watch knew; the pods listed come as InitApply.
                    watcher::Event::Init => pods.clear(),
                    watcher::Event::InitDone => {}
                }
                let live: Vec<&Pod> = pods
                    .values()
                    .filter(|p| p.metadata.deletion_timestamp.is_none())
                    .collect();
                let mut ids: BTreeMap<&str, usize> = BTreeMap::new();
                for pod in &live {
                    if let Some(id) = pod.labels().get(INSTANCE_ID) {
                        *ids.entry(id.as_str()).or_default() += 1;
                    }
                }
                let mut seen = record.lock().unwrap_or_else(PoisonError::into_inner);
                seen.max_unavailable = seen
                    .max_unavailable
                    .max(live.iter().filter(|p| !is_ready(p)).count());
                seen.max_pods = seen.max_pods.max(live.len());
                for (id, count) in ids {
                    if count > 1 && !seen.duplicate_ids.iter().any(|seen| seen == id) {
                        seen.duplicate_ids.push(id.to_owned());
                    }
                }
            }
        });
        Self { seen, task }
    }

    /// Stops watching; what it saw.
    pub fn stop(self) -> Seen {
        self.task.abort();
        std::mem::take(&mut *self.seen.lock().unwrap_or_else(PoisonError::into_inner))
    }
}
