//! The container launch priority barrier (upstream `pkg/controller/containerlaunchpriority`,
//! `findNextPriorities` and `handle`): which key kruise-manager adds next to a pod's `<pod>-barrier`
//! ConfigMap, and when the pod is done.
//!
//! Every container of an ordered pod reads `KRUISE_CONTAINER_BARRIER` from `p_<priority>` of the barrier
//! ConfigMap ([`crate::launch_priority`]), so kubelet cannot create it until that key exists. The pending
//! priorities are those of the containers with a barrier env var that are not ready yet; the highest of them is
//! released (its key added) first, and the next one only once those containers are ready (they leave the
//! pending set). The pod is complete when nothing is pending or the lowest pending priority's key exists
//! (every container could start): kruise-manager then sets
//! `apps.kruise.io/container-launch-priority-completed: "true"` and stops looking at it.
//!
//! ```
//! use std::collections::BTreeMap;
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_inplace::launch_barrier::{decide, BarrierStep};
//!
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "p"},
//!     "spec": {"containers": [
//!         {"name": "a", "env": [{"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef": {"name": "p-barrier", "key": "p_0"}}}]},
//!         {"name": "b", "env": [{"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef": {"name": "p-barrier", "key": "p_-1"}}}]},
//!     ]},
//! })).unwrap();
//! assert_eq!(decide(&pod, &BTreeMap::new()), BarrierStep { add: Some("p_0".into()), completed: false });
//! ```

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;
use kruise_api::keys::launch_priority::{BARRIER_KEY_PREFIX, LAUNCH_PRIORITY_COMPLETED_ANNOTATION};

use crate::launch_priority::barrier_priority;

/// What to do for a pod now.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BarrierStep {
    /// The key to add to the barrier ConfigMap (value `"true"`), if it is missing.
    pub add: Option<String>,
    /// Whether to mark the pod complete (after adding [`Self::add`]).
    pub completed: bool,
}

/// The barrier ConfigMap key of a priority: `p_<priority>`.
#[must_use]
pub fn key(priority: i64) -> String {
    format!("{BARRIER_KEY_PREFIX}{priority}")
}

/// Whether the pod has containers waiting on a barrier (some container has the barrier env var).
#[must_use]
pub fn has_barrier(pod: &Pod) -> bool {
    pod.spec.as_ref().is_some_and(|spec| {
        spec.containers
            .iter()
            .any(|c| barrier_priority(c).is_some())
    })
}

/// Whether the pod is already marked complete.
#[must_use]
pub fn is_marked_completed(pod: &Pod) -> bool {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(LAUNCH_PRIORITY_COMPLETED_ANNOTATION))
        .is_some_and(|value| value == "true")
}

/// Whether the pod's `ContainersReady` condition is `True`.
#[must_use]
pub fn containers_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|condition| condition.type_ == "ContainersReady" && condition.status == "True")
}

/// Whether the controller has anything to do for the pod (upstream's `shouldEnqueue` without the ConfigMap
/// read): it has barriers, is not marked complete, and its containers are not all ready.
#[must_use]
pub fn wants_attention(pod: &Pod) -> bool {
    has_barrier(pod) && !is_marked_completed(pod) && !containers_ready(pod)
}

/// The priorities of the containers with a barrier that are not ready, ascending.
#[must_use]
pub fn pending_priorities(pod: &Pod) -> Vec<i64> {
    let ready: BTreeSet<&str> = crate::pod_containers::container_statuses(pod)
        .iter()
        .filter(|status| status.ready)
        .map(|status| status.name.as_str())
        .collect();
    let mut priorities: Vec<i64> = crate::pod_containers::containers(pod)
        .iter()
        .filter(|container| !ready.contains(container.name.as_str()))
        .filter_map(barrier_priority)
        .collect();
    priorities.sort_unstable();
    priorities
}

/// The next step for `pod` given the barrier ConfigMap's current `data`.
#[must_use]
pub fn decide(pod: &Pod, barrier: &BTreeMap<String, String>) -> BarrierStep {
    let pending = pending_priorities(pod);
    let (Some(lowest), Some(highest)) = (pending.first(), pending.last()) else {
        return BarrierStep {
            add: None,
            completed: true,
        };
    };
    if barrier.contains_key(&key(*lowest)) {
        return BarrierStep {
            add: None,
            completed: true,
        };
    }
    let next = key(*highest);
    BarrierStep {
        add: (!barrier.contains_key(&next)).then_some(next),
        completed: lowest == highest,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn barrier(priority: i64) -> serde_json::Value {
        json!([{"name": "KRUISE_CONTAINER_BARRIER",
            "valueFrom": {"configMapKeyRef": {"name": "p-barrier", "key": format!("p_{priority}")}}}])
    }

    /// Containers `a`, `b`, `c` with priorities 0, -1, -2 and a plain container `d`; `ready` names the ready
    /// ones.
    fn pod(ready: &[&str]) -> Pod {
        let statuses: Vec<_> = ["a", "b", "c", "d"]
            .iter()
            .map(|name| {
                json!({"name": name, "ready": ready.contains(name), "restartCount": 0,
                "image": "x", "imageID": ""})
            })
            .collect();
        serde_json::from_value(json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [
                {"name": "a", "env": barrier(0)},
                {"name": "b", "env": barrier(-1)},
                {"name": "c", "env": barrier(-2)},
                {"name": "d"},
            ]},
            "status": {"containerStatuses": statuses},
        }))
        .unwrap()
    }

    fn data(keys: &[&str]) -> BTreeMap<String, String> {
        keys.iter()
            .map(|key| ((*key).to_owned(), "true".to_owned()))
            .collect()
    }

    fn step(add: Option<&str>, completed: bool) -> BarrierStep {
        BarrierStep {
            add: add.map(str::to_owned),
            completed,
        }
    }

    #[test]
    fn priorities_are_released_one_at_a_time_as_containers_get_ready() {
        assert_eq!(decide(&pod(&[]), &data(&[])), step(Some("p_0"), false));
        // p_0 released but `a` is not ready yet: nothing more.
        assert_eq!(decide(&pod(&[]), &data(&["p_0"])), step(None, false));
        assert_eq!(
            decide(&pod(&["a", "d"]), &data(&["p_0"])),
            step(Some("p_-1"), false)
        );
        // The last priority: released and complete in the same step.
        assert_eq!(
            decide(&pod(&["a", "b"]), &data(&["p_0", "p_-1"])),
            step(Some("p_-2"), true)
        );
        assert_eq!(
            decide(&pod(&["a", "b"]), &data(&["p_0", "p_-1", "p_-2"])),
            step(None, true)
        );
        assert_eq!(decide(&pod(&["a", "b", "c"]), &data(&[])), step(None, true));
    }

    #[test]
    fn pending_priorities_skip_ready_and_plain_containers() {
        assert_eq!(pending_priorities(&pod(&[])), [-2, -1, 0]);
        assert_eq!(pending_priorities(&pod(&["b", "d"])), [-2, 0]);
    }

    #[test]
    fn attention_filter() {
        let mut waiting = pod(&[]);
        assert!(wants_attention(&waiting));
        waiting.metadata.annotations = Some(BTreeMap::from([(
            LAUNCH_PRIORITY_COMPLETED_ANNOTATION.to_owned(),
            "true".to_owned(),
        )]));
        assert!(!wants_attention(&waiting));
        let mut ready = pod(&[]);
        ready.status.as_mut().unwrap().conditions = Some(vec![
            serde_json::from_value(json!({"type": "ContainersReady", "status": "True"})).unwrap(),
        ]);
        assert!(!wants_attention(&ready));
        let plain: Pod =
            serde_json::from_value(json!({"spec": {"containers": [{"name": "x"}]}})).unwrap();
        assert!(!wants_attention(&plain));
    }
}
