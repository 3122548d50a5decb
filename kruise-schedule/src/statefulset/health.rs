//! How the Advanced StatefulSet controller reads a pod's health (upstream `isRunningAndReady`, `isHealthy`,
//! `isRunningAndAvailable`): unlike CloneSet, `InPlaceUpdateReady` plays no part, and with
//! `minReadySeconds` a `Ready` condition without a transition time is **not** available.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::pod_view::{self, Conditions, State};

/// The health facts of one existing pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Health {
    /// `status.phase` is set (upstream `isCreated`).
    pub(crate) created: bool,
    /// Being deleted.
    pub(crate) terminating: bool,
    /// `Failed` or `Succeeded`.
    pub(crate) finished: bool,
    /// `Pending`.
    pub(crate) pending: bool,
    /// `Running` and `Ready` (lifecycle ignored).
    pub(crate) running_ready: bool,
    /// Lifecycle state absent or `Normal`.
    pub(crate) normal: bool,
    /// Running, ready and available for `minReadySeconds`, lifecycle absent or `Normal`.
    pub(crate) available: bool,
    /// When not yet available only because of `minReadySeconds`: how long until it is.
    pub(crate) wait: Option<Duration>,
}

impl Health {
    /// Upstream `isHealthy`: lifecycle absent or `Normal`, running and ready, not terminating.
    pub(crate) fn healthy(&self) -> bool {
        self.normal && self.running_ready && !self.terminating
    }

    /// A pod about to be created.
    pub(crate) fn new_pod() -> Self {
        Self {
            created: false,
            terminating: false,
            finished: false,
            pending: false,
            running_ready: false,
            normal: true,
            available: false,
            wait: None,
        }
    }

    /// Reads `pod` at `now`.
    pub(crate) fn of(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> Self {
        let phase = pod_view::phase(pod);
        let conditions = Conditions::of(pod);
        let running_ready = phase == "Running" && conditions.ready;
        let normal = State::of(pod).is_normal();
        let (available, wait) = if !normal || !running_ready {
            (false, None)
        } else if min_ready_seconds <= 0 {
            (true, None)
        } else {
            let min = SignedDuration::from_secs(i64::from(min_ready_seconds));
            match conditions.ready_since {
                None => (
                    false,
                    Some(Duration::from_secs(min_ready_seconds.unsigned_abs().into())),
                ),
                Some(since) => {
                    let remaining = since
                        .checked_add(min)
                        .map_or(SignedDuration::ZERO, |until| until.duration_since(now));
                    match Duration::try_from(remaining) {
                        Ok(wait) if !wait.is_zero() => (false, Some(wait)),
                        _ => (true, None),
                    }
                }
            }
        };
        Self {
            created: !phase.is_empty(),
            terminating: pod.metadata.deletion_timestamp.is_some(),
            finished: matches!(phase, "Failed" | "Succeeded"),
            pending: phase == "Pending",
            running_ready,
            normal,
            available,
            wait,
        }
    }
}
