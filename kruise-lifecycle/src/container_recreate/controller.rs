//! kruise-manager's ContainerRecreateRequest decisions (upstream `pkg/controller/containerrecreaterequest`), pure:
//! the request, its pod and the clock in, the writes of one reconcile and when to look again out. The caller does
//! the writes (kruise-manager: `kruise_manager::crr::reconciler`).
//!
//! * Completed or deleting: release the pod's not-ready key and the `crr.apps.kruise.io/unready-acquired`
//!   finalizer, drop the `active` label, delete after `ttlSecondsAfterFinished`.
//! * Pod gone, being deleted or replaced (UID) → complete "pod has gone"; no phase 1 minute after creation →
//!   complete "daemon has not responded for a long time"; past `activeDeadlineSeconds` → complete.
//! * While `Recreating`: sync `status.containerStatusSnapshot` from the pod (containers running since the
//!   request was created), and with `unreadyGracePeriodSeconds` make the pod not-ready first (finalizer,
//!   the `{ContainerRecreateRequest, <ns>/<name>}` key of `KruisePodReady`, then the `PreRecreateGrace`
//!   condition the daemon waits on); look again every 3 s.
//!
//! ```
//! use kruise_api::apps::v1beta1::ContainerRecreateRequest;
//! use kruise_lifecycle::container_recreate::controller::{Action, decide};
//!
//! let crr: ContainerRecreateRequest = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "r", "namespace": "ns", "creationTimestamp": "2024-05-01T10:00:00Z",
//!         "labels": {"crr.apps.kruise.io/pod-uid": "u-1"}},
//!     "spec": {"podName": "gone", "containers": [{"name": "app"}]},
//! })).unwrap();
//! let plan = decide(&crr, None, "2024-05-01T10:00:05Z".parse().unwrap());
//! assert_eq!(plan.actions, [Action::Complete("pod has gone".into())]);
//! ```

use std::time::Duration;

use crate::not_ready;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kruise_api::annotations::ContainerStatusSnapshot;
use kruise_api::apps::v1beta1::{ContainerRecreateRequest, ContainerRecreateRequestPhase as Phase};
use kruise_api::keys::crr as keys;

/// How long kruise-daemon may take to pick a request up.
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a request being recreated is looked at.
pub const RECREATING_RESYNC: Duration = Duration::from_secs(3);

/// One write of a reconcile, in the order given.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Remove the pod's not-ready entry of this request (when `remove_key`), then the unready-acquired
    /// finalizer.
    ReleaseNotReady {
        /// Whether the pod (present, not deleting, with the `KruisePodReady` gate) holds the entry.
        remove_key: bool,
    },
    /// Remove the `crr.apps.kruise.io/active` label.
    RemoveActiveLabel,
    /// Delete the request (its TTL after completion has passed).
    Delete,
    /// Complete the request: phase `Completed`, `completionTime` now, this message.
    Complete(String),
    /// Write `status.containerStatusSnapshot`.
    SyncSnapshot(Vec<ContainerStatusSnapshot>),
    /// Make the pod not-ready for the grace: add the finalizer and the not-ready key (when the pod has the
    /// `KruisePodReady` gate), then set the `PreRecreateGrace` condition.
    AcquireNotReady {
        /// Whether the pod has the `KruisePodReady` readiness gate.
        has_gate: bool,
        /// The condition to add to the request's status.
        condition: Condition,
    },
}

/// The writes of one reconcile and when to reconcile again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// What to write, in order (stop at the first failure and retry).
    pub actions: Vec<Action>,
    /// Reconcile again after this long (also without any event).
    pub requeue_after: Option<Duration>,
}

fn requeue(current: &mut Option<Duration>, after: Duration) {
    *current = Some(current.map_or(after, |existing| existing.min(after)));
}

fn left(since: Timestamp, budget: Duration, now: Timestamp) -> Option<Duration> {
    let deadline = since.saturating_add(budget).unwrap_or(Timestamp::MAX);
    (deadline > now).then(|| now.duration_until(deadline).unsigned_abs())
}

fn seconds(value: i64) -> Duration {
    Duration::from_secs(u64::try_from(value).unwrap_or_default())
}

/// The reconcile of upstream's `ContainerRecreateRequest` controller.
#[must_use]
pub fn decide(crr: &ContainerRecreateRequest, pod: Option<&Pod>, now: Timestamp) -> Plan {
    let mut plan = Plan::default();
    let status = crr.status.clone().unwrap_or_default();
    let deleting = crr.metadata.deletion_timestamp.is_some();
    if deleting || status.completion_time.is_some() {
        if has_finalizer(crr) {
            let remove_key = pod.is_some_and(|pod| {
                pod.metadata.deletion_timestamp.is_none() && not_ready::has_gate(pod)
            });
            plan.actions.push(Action::ReleaseNotReady { remove_key });
        }
        if deleting {
            return plan;
        }
        if crr
            .metadata
            .labels
            .as_ref()
            .is_some_and(|labels| labels.contains_key(keys::ACTIVE_LABEL))
        {
            plan.actions.push(Action::RemoveActiveLabel);
            return plan;
        }
        if let (Some(ttl), Some(completed)) =
            (crr.spec.ttl_seconds_after_finished, &status.completion_time)
        {
            match left(completed.0, seconds(i64::from(ttl)), now) {
                None => plan.actions.push(Action::Delete),
                Some(wait) => plan.requeue_after = Some(wait),
            }
        }
        return plan;
    }

    let pod_uid = crr
        .metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get(keys::POD_UID_LABEL))
        .cloned()
        .unwrap_or_default();
    let Some(pod) = pod.filter(|pod| {
        pod.metadata.deletion_timestamp.is_none()
            && pod.metadata.uid.as_deref() == Some(pod_uid.as_str())
    }) else {
        plan.actions.push(Action::Complete("pod has gone".into()));
        return plan;
    };

    let created = crr
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or(now, |time| time.0);
    if status.phase.as_str().is_empty() {
        match left(created, RESPONSE_TIMEOUT, now) {
            None => {
                plan.actions.push(Action::Complete(
                    "daemon has not responded for a long time".into(),
                ));
                return plan;
            }
            Some(wait) => requeue(&mut plan.requeue_after, wait),
        }
    }
    if let Some(deadline) = crr.spec.active_deadline_seconds {
        match left(created, seconds(deadline), now) {
            None => {
                plan.actions.push(Action::Complete(
                    "recreating has exceeded the activeDeadlineSeconds".into(),
                ));
                return plan;
            }
            Some(wait) => requeue(&mut plan.requeue_after, wait),
        }
    }
    if status.phase != Phase::Recreating {
        return plan;
    }
    requeue(&mut plan.requeue_after, RECREATING_RESYNC);

    let snapshot = snapshot(crr, pod, created);
    let current = &status.container_status_snapshot;
    // The last snapshot is kept while none of the containers runs (they are being recreated).
    if snapshot != *current && !snapshot.is_empty() {
        plan.actions.push(Action::SyncSnapshot(snapshot));
    }

    let wants_grace = crr
        .spec
        .strategy
        .as_ref()
        .is_some_and(|strategy| strategy.unready_grace_period_seconds.is_some());
    let acquired = status
        .conditions
        .iter()
        .any(|condition| condition.type_ == keys::PRE_RECREATE_GRACE_CONDITION);
    if wants_grace && !acquired {
        plan.actions.push(Action::AcquireNotReady {
            has_gate: not_ready::has_gate(pod),
            condition: Condition {
                type_: keys::PRE_RECREATE_GRACE_CONDITION.to_owned(),
                status: "True".to_owned(),
                reason: keys::PRE_RECREATE_GRACE_CONDITION.to_owned(),
                message: "the pod is not ready before its containers are recreated".to_owned(),
                last_transition_time: Time(Timestamp::from_second(now.as_second()).unwrap_or(now)),
                observed_generation: crr.metadata.generation,
            },
        });
    }
    plan
}

fn has_finalizer(crr: &ContainerRecreateRequest) -> bool {
    crr.metadata
        .finalizers
        .iter()
        .flatten()
        .any(|finalizer| finalizer == keys::UNREADY_ACQUIRED_KEY)
}

/// The snapshot of the request's containers in the pod status: those running since the request was created
/// (second precision, as both times are stored).
#[must_use]
pub fn snapshot(
    crr: &ContainerRecreateRequest,
    pod: &Pod,
    created: Timestamp,
) -> Vec<ContainerStatusSnapshot> {
    let statuses = pod
        .status
        .as_ref()
        .and_then(|status| status.container_statuses.as_deref())
        .unwrap_or_default();
    crr.spec
        .containers
        .iter()
        .filter_map(|container| statuses.iter().find(|status| status.name == container.name))
        .filter(|status| {
            status
                .state
                .as_ref()
                .and_then(|state| state.running.as_ref())
                .and_then(|running| running.started_at.as_ref())
                .is_some_and(|started| started.0.as_second() >= created.as_second())
        })
        .map(|status| ContainerStatusSnapshot {
            name: status.name.clone(),
            ready: status.ready,
            restart_count: status.restart_count,
            container_id: status.container_id.clone().unwrap_or_default(),
        })
        .collect()
}

/// The not-ready entry this request holds on its pod.
#[must_use]
pub fn not_ready_entry(crr: &ContainerRecreateRequest) -> not_ready::PodNotReadyEntry {
    not_ready::container_recreate_request_entry(
        crr.metadata.namespace.as_deref().unwrap_or_default(),
        crr.metadata.name.as_deref().unwrap_or_default(),
    )
}

#[cfg(test)]
#[path = "controller_tests.rs"]
mod tests;
