//! The queue depth of a kube-runtime controller, tracked from outside: kube-runtime does not expose its
//! scheduler, so the controller reports what it can see. An object counts from the moment a trigger for
//! it arrives (a watch event of the object or of an object it owns) until the reconcile that follows
//! has finished, and while that reconcile runs; its depth is the number of such objects
//! (`kruise_manager_queue_depth{controller=...}`).
//!
//! Approximation, by construction: a timed requeue (`Action::requeue`) counts only once its reconcile
//! starts, not while it waits for its time (controller-runtime's work queue does not count those as
//! depth either); a trigger for an object that is gone counts until kube-runtime reports it as not found.
//!
//! The bookkeeping mirrors kube-runtime's scheduler: triggers for the same object merge; a trigger that
//! arrives while the object's reconcile runs is held and runs after it, so the object stays counted.
//!
//! ```
//! use kruise_runtime::metrics::Metrics;
//! use kruise_runtime::queue_depth::QueueDepth;
//!
//! let metrics = Metrics::new();
//! let queue = QueueDepth::new(metrics.controller("cloneset"));
//! queue.triggered("ns/web");
//! queue.triggered("ns/web"); // merged
//! queue.triggered("ns/api");
//! assert_eq!(queue.depth(), 2);
//! queue.started("ns/web");
//! queue.finished("ns/web");
//! assert_eq!(queue.depth(), 1);
//! assert!(metrics.encode().contains("kruise_manager_queue_depth{controller=\"cloneset\"} 1"));
//! ```

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use crate::metrics::ControllerMetrics;

/// Where one object stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// Triggered, its reconcile has not started.
    Waiting,
    /// Its reconcile runs.
    Running,
    /// Its reconcile runs and another trigger arrived meanwhile (it runs again afterwards).
    RunningAndWaiting,
}

/// The objects of one controller that wait for or are in a reconcile, reported as its queue depth.
#[derive(Debug)]
pub struct QueueDepth {
    metrics: ControllerMetrics,
    objects: Mutex<HashMap<String, Stage>>,
}

impl QueueDepth {
    /// An empty queue reporting to `metrics` (the gauge is set to 0).
    #[must_use]
    pub fn new(metrics: ControllerMetrics) -> Self {
        metrics.set_queue_depth(0);
        Self {
            metrics,
            objects: Mutex::new(HashMap::new()),
        }
    }

    fn update(&self, change: impl FnOnce(&mut HashMap<String, Stage>)) {
        let mut objects = self.objects.lock().unwrap_or_else(PoisonError::into_inner);
        change(&mut objects);
        self.metrics.set_queue_depth(objects.len());
    }

    /// A trigger for the object `key` arrived.
    pub fn triggered(&self, key: &str) {
        self.update(|objects| match objects.get_mut(key) {
            None => {
                objects.insert(key.to_owned(), Stage::Waiting);
            }
            Some(stage @ Stage::Running) => *stage = Stage::RunningAndWaiting,
            Some(Stage::Waiting | Stage::RunningAndWaiting) => {}
        });
    }

    /// A reconcile of `key` started (every trigger so far is served by it).
    pub fn started(&self, key: &str) {
        self.update(|objects| {
            objects.insert(key.to_owned(), Stage::Running);
        });
    }

    /// The reconcile of `key` finished, or kube-runtime dropped its request (the object is gone).
    pub fn finished(&self, key: &str) {
        self.update(|objects| match objects.get(key) {
            Some(Stage::RunningAndWaiting) => {
                objects.insert(key.to_owned(), Stage::Waiting);
            }
            Some(Stage::Running | Stage::Waiting) => {
                objects.remove(key);
            }
            None => {}
        });
    }

    /// Forgets everything (the controller stopped); the gauge goes to 0.
    pub fn clear(&self) {
        self.update(HashMap::clear);
    }

    /// How many objects wait for or are in a reconcile.
    #[must_use]
    pub fn depth(&self) -> usize {
        self.objects
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Metrics;

    fn gauge(metrics: &Metrics) -> String {
        metrics
            .encode()
            .lines()
            .find(|line| line.starts_with("kruise_manager_queue_depth{controller=\"demo\"}"))
            .unwrap_or_default()
            .to_owned()
    }

    #[test]
    fn triggers_merge_and_completions_drain() {
        let metrics = Metrics::new();
        let queue = QueueDepth::new(metrics.controller("demo"));
        assert_eq!(
            gauge(&metrics),
            "kruise_manager_queue_depth{controller=\"demo\"} 0"
        );
        for key in ["ns/a", "ns/b", "ns/a", "ns/c"] {
            queue.triggered(key);
        }
        assert_eq!(queue.depth(), 3);
        assert_eq!(
            gauge(&metrics),
            "kruise_manager_queue_depth{controller=\"demo\"} 3"
        );
        queue.started("ns/a");
        assert_eq!(queue.depth(), 3, "a running reconcile still counts");
        queue.finished("ns/a");
        queue.finished("ns/b"); // not found: dropped by kube-runtime
        assert_eq!(queue.depth(), 1);
        assert_eq!(
            gauge(&metrics),
            "kruise_manager_queue_depth{controller=\"demo\"} 1"
        );
        queue.finished("ns/unknown");
        assert_eq!(queue.depth(), 1);
        queue.clear();
        assert_eq!(
            gauge(&metrics),
            "kruise_manager_queue_depth{controller=\"demo\"} 0"
        );
    }

    #[test]
    fn a_trigger_during_a_reconcile_keeps_the_object_queued() {
        let metrics = Metrics::new();
        let queue = QueueDepth::new(metrics.controller("demo"));
        queue.triggered("ns/a");
        queue.started("ns/a");
        queue.triggered("ns/a");
        queue.triggered("ns/a");
        queue.finished("ns/a");
        assert_eq!(queue.depth(), 1, "the held trigger runs next");
        queue.started("ns/a");
        queue.finished("ns/a");
        assert_eq!(queue.depth(), 0);
        // A timed requeue is only seen when it starts.
        queue.started("ns/a");
        assert_eq!(queue.depth(), 1);
        queue.finished("ns/a");
        assert_eq!(
            gauge(&metrics),
            "kruise_manager_queue_depth{controller=\"demo\"} 0"
        );
    }
}
