//! When a terminating pod on a simulated node is finally removed.
//!
//! The API server only marks a bound pod for deletion (`deletionTimestamp`); the kubelet stops its
//! containers and then deletes it with a zero grace period. The simulator does the same after its
//! termination delay, capped by the pod's own grace period.
//!
//! ```
//! use std::time::Duration;
//! use k8s_openapi::api::core::v1::Pod;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
//! use kruise_simulator::termination::{Termination, decide};
//!
//! let mut pod = Pod::default();
//! let now = "2024-05-01T10:00:00Z".parse().unwrap();
//! assert_eq!(decide(&pod, Duration::from_secs(5), now), Termination::NotTerminating);
//! pod.metadata.deletion_timestamp = Some(Time("2024-05-01T10:00:30Z".parse().unwrap()));
//! pod.metadata.deletion_grace_period_seconds = Some(30);
//! assert_eq!(decide(&pod, Duration::from_secs(5), now), Termination::Wait(Duration::from_secs(5)));
//! ```

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;

/// What to do with a pod that may be terminating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Termination {
    /// No deletion was requested.
    NotTerminating,
    /// Delete it now with a zero grace period.
    DeleteNow,
    /// Look again after this long.
    Wait(Duration),
}

/// Decides from `deletionTimestamp` and `deletionGracePeriodSeconds`: the deletion was requested at
/// `deletionTimestamp - grace`, and the containers take `min(delay, grace)` to stop.
#[must_use]
pub fn decide(pod: &Pod, delay: Duration, now: Timestamp) -> Termination {
    let Some(deleted_at) = pod.metadata.deletion_timestamp.as_ref() else {
        return Termination::NotTerminating;
    };
    let grace = Duration::from_secs(
        pod.metadata
            .deletion_grace_period_seconds
            .and_then(|seconds| u64::try_from(seconds).ok())
            .unwrap_or_default(),
    );
    let requested = deleted_at.0.saturating_sub(grace).unwrap_or(deleted_at.0);
    let due = requested
        .saturating_add(delay.min(grace))
        .unwrap_or(Timestamp::MAX);
    if now >= due {
        Termination::DeleteNow
    } else {
        Termination::Wait(now.duration_until(due).unsigned_abs())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;

    fn terminating(deletion: &str, grace: i64) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.deletion_timestamp = Some(Time(deletion.parse().unwrap()));
        pod.metadata.deletion_grace_period_seconds = Some(grace);
        pod
    }

    #[test]
    fn delay_is_capped_by_the_grace_period() {
        let now: Timestamp = "2024-05-01T10:00:00Z".parse().unwrap();
        let pod = terminating("2024-05-01T10:00:02Z", 2);
        assert_eq!(
            decide(&pod, Duration::from_secs(60), now),
            Termination::Wait(Duration::from_secs(2))
        );
        let later: Timestamp = "2024-05-01T10:00:02Z".parse().unwrap();
        assert_eq!(
            decide(&pod, Duration::from_secs(60), later),
            Termination::DeleteNow
        );
    }

    #[test]
    fn zero_delay_or_zero_grace_deletes_at_once() {
        let now: Timestamp = "2024-05-01T10:00:00Z".parse().unwrap();
        assert_eq!(
            decide(
                &terminating("2024-05-01T10:00:30Z", 30),
                Duration::ZERO,
                now
            ),
            Termination::DeleteNow
        );
        assert_eq!(
            decide(
                &terminating("2024-05-01T10:00:00Z", 0),
                Duration::from_secs(9),
                now
            ),
            Termination::DeleteNow
        );
        // A negative grace period (never written by the API server) counts as zero: due at deletionTimestamp.
        assert_eq!(
            decide(
                &terminating("2024-05-01T10:00:30Z", -5),
                Duration::from_secs(9),
                now
            ),
            Termination::Wait(Duration::from_secs(30))
        );
    }
}
