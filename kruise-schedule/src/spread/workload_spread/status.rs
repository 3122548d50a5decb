//! The controller's view of one subset (upstream `calculateWorkloadSpreadSubsetStatus`): its active pods
//! (carrying the annotation for it), and what is still in flight:
//!
//! * a `creatingPods` entry stays while its pod is not seen (no pod of that key) and younger than
//!   [`super::CREATING_POD_TIMEOUT`]; it still takes a place;
//! * a `deletingPods` entry stays while its pod is still active in the subset and younger than
//!   [`super::DELETING_POD_TIMEOUT`]; it frees its place already;
//! * `replicas` counts the active pods; `missingReplicas` is `max(limit - (active + creating - deleting),
//!   0)`, or -1 without a limit.
//!
//! The earliest expiry of a kept entry is when to look again.
//!
//! ```
//! use std::time::Duration;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
//! use kruise_api::apps::v1beta1::WorkloadSpreadSubsetStatus;
//! use kruise_schedule::spread::workload_spread::status::{SubsetPods, subset_status};
//!
//! let now: k8s_openapi::jiff::Timestamp = "2024-05-01T10:00:00Z".parse().unwrap();
//! let old = WorkloadSpreadSubsetStatus {
//!     name: "a".into(),
//!     creating_pods: [("web-3".to_owned(), Time(now))].into(),
//!     ..Default::default()
//! };
//! let pods = SubsetPods { active: vec!["web-1", "web-2"], seen: vec!["web-1", "web-2"] };
//! let (status, again) = subset_status(&old, &pods, Some(4), now);
//! assert_eq!((status.replicas, status.missing_replicas), (2, 1), "web-3 is on its way");
//! assert_eq!(again, Some(Duration::from_secs(30)));
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::WorkloadSpreadSubsetStatus;

use super::{CREATING_POD_TIMEOUT, DELETING_POD_TIMEOUT};

/// The pods of one subset, by key ([`super::matched::pod_key`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubsetPods<'a> {
    /// Active pods (not finished, not being deleted) carrying the annotation for the subset.
    pub active: Vec<&'a str>,
    /// Every pod carrying the annotation for the WorkloadSpread (any subset, any state): a `creatingPods`
    /// entry among them has been seen.
    pub seen: Vec<&'a str>,
}

/// The subset's new status from its old one (conditions kept) and its pods, and when an in-flight entry
/// expires.
#[must_use]
pub fn subset_status(
    old: &WorkloadSpreadSubsetStatus,
    pods: &SubsetPods<'_>,
    limit: Option<i32>,
    now: Timestamp,
) -> (WorkloadSpreadSubsetStatus, Option<Duration>) {
    let mut again: Option<Duration> = None;
    let mut keep =
        |entries: &BTreeMap<String, Time>, timeout: Duration, wanted: &dyn Fn(&str) -> bool| {
            entries
                .iter()
                .filter(|(key, _)| wanted(key))
                .filter_map(|(key, since)| {
                    let left = remaining(since, timeout, now)?;
                    again = Some(again.map_or(left, |again| again.min(left)));
                    Some((key.clone(), since.clone()))
                })
                .collect::<BTreeMap<_, _>>()
        };
    let creating = keep(&old.creating_pods, CREATING_POD_TIMEOUT, &|key| {
        !pods.seen.contains(&key)
    });
    let deleting = keep(&old.deleting_pods, DELETING_POD_TIMEOUT, &|key| {
        pods.active.contains(&key)
    });
    let active = count(pods.active.len());
    let occupied = active
        .saturating_add(count(creating.len()))
        .saturating_sub(count(deleting.len()));
    let missing_replicas = limit.map_or(-1, |limit| limit.saturating_sub(occupied).max(0));
    let status = WorkloadSpreadSubsetStatus {
        name: old.name.clone(),
        replicas: active,
        conditions: old.conditions.clone(),
        missing_replicas,
        creating_pods: creating,
        deleting_pods: deleting,
    };
    (status, again)
}

fn count(len: usize) -> i32 {
    i32::try_from(len).unwrap_or(i32::MAX)
}

/// How long until `since + timeout`; `None` once it has passed.
fn remaining(since: &Time, timeout: Duration, now: Timestamp) -> Option<Duration> {
    let elapsed = now.duration_since(since.0);
    let timeout = k8s_openapi::jiff::SignedDuration::try_from(timeout).ok()?;
    let left = timeout.checked_sub(elapsed)?;
    (left > k8s_openapi::jiff::SignedDuration::ZERO)
        .then(|| Duration::try_from(left).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    fn old(creating: &[(&str, i64)], deleting: &[(&str, i64)]) -> WorkloadSpreadSubsetStatus {
        let map = |entries: &[(&str, i64)]| {
            entries
                .iter()
                .map(|(key, second)| ((*key).to_owned(), Time(at(*second))))
                .collect()
        };
        WorkloadSpreadSubsetStatus {
            name: "a".into(),
            creating_pods: map(creating),
            deleting_pods: map(deleting),
            ..WorkloadSpreadSubsetStatus::default()
        }
    }

    #[test]
    fn in_flight_entries_are_kept_until_seen_or_expired() {
        let old = old(
            &[("new-1", 0), ("new-2", -40), ("seen", 0)],
            &[("old-1", -10), ("old-2", -50), ("gone", 0)],
        );
        let pods = SubsetPods {
            active: vec!["seen", "old-1", "old-2", "x"],
            seen: vec!["seen", "old-1", "old-2", "x"],
        };
        let (status, again) = subset_status(&old, &pods, Some(6), at(0));
        assert_eq!(
            status.creating_pods.keys().collect::<Vec<_>>(),
            ["new-1"],
            "new-2 expired, seen is seen"
        );
        assert_eq!(
            status.deleting_pods.keys().collect::<Vec<_>>(),
            ["old-1"],
            "old-2 expired, gone is gone"
        );
        assert_eq!(status.replicas, 4);
        assert_eq!(status.missing_replicas, 6 - (4 + 1 - 1));
        assert_eq!(again, Some(Duration::from_secs(20)), "old-1 expires first");
    }

    #[test]
    fn missing_replicas() {
        // (limit, active, creating) -> missing
        let table: &[(Option<i32>, usize, usize, i32)] = &[
            (None, 3, 1, -1),
            (Some(4), 3, 0, 1),
            (Some(4), 3, 1, 0),
            (Some(2), 3, 1, 0),
            (Some(0), 0, 0, 0),
        ];
        let names = ["p0", "p1", "p2", "p3"];
        for &(limit, active, creating, missing) in table {
            let creating: Vec<(&str, i64)> = ["c0", "c1"]
                .iter()
                .take(creating)
                .map(|key| (*key, 0))
                .collect();
            let pods = SubsetPods {
                active: names[..active].to_vec(),
                seen: names[..active].to_vec(),
            };
            let (status, _) = subset_status(&old(&creating, &[]), &pods, limit, at(1));
            assert_eq!(
                status.missing_replicas, missing,
                "{limit:?} {active} {creating:?}"
            );
        }
    }
}
