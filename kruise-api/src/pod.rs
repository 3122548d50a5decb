//! Small facts about pods that every controller needs (upstream `pkg/util` pod helpers such as `IsPodReady`,
//! `IsPodAvailable`): active, ready, available, lifecycle-aware availability and revision matching.
//!
//! ```
//! use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
//! use k8s_openapi::jiff::Timestamp;
//! use kruise_api::pod;
//!
//! let ready_since: Timestamp = "2024-05-01T10:00:00Z".parse().unwrap();
//! let pod = Pod {
//!     status: Some(PodStatus {
//!         phase: Some("Running".into()),
//!         conditions: Some(vec![PodCondition {
//!             type_: "Ready".into(),
//!             status: "True".into(),
//!             last_transition_time: Some(Time(ready_since)),
//!             ..Default::default()
//!         }]),
//!         ..Default::default()
//!     }),
//!     ..Default::default()
//! };
//! let now: Timestamp = "2024-05-01T10:00:30Z".parse().unwrap();
//! assert!(pod::is_available(&pod, 10, now));
//! assert!(!pod::is_available(&pod, 60, now));
//! assert!(pod::revision_matches("demo-6d4f7b", "6d4f7b"));
//! ```

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::keys;
use crate::lifecycle::LifecycleStateType;

const READY: &str = "Ready";

/// The pod's phase, or `""` when unknown.
#[must_use]
pub fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|status| status.phase.as_deref())
        .unwrap_or("")
}

/// The pod's labels (empty when it has none).
#[must_use]
pub fn labels(pod: &Pod) -> &BTreeMap<String, String> {
    static EMPTY: BTreeMap<String, String> = BTreeMap::new();
    pod.metadata.labels.as_ref().unwrap_or(&EMPTY)
}

/// The value of a pod label.
#[must_use]
#[inline]
pub fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

/// The value of a pod annotation.
#[must_use]
#[inline]
pub fn annotation<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

/// The pod condition of the given type.
#[must_use]
pub fn condition<'a>(pod: &'a Pod, type_: &str) -> Option<&'a PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|condition| condition.type_ == type_)
}

/// Not finished (phase neither `Succeeded` nor `Failed`) and not being deleted (upstream `IsPodActive`).
#[must_use]
pub fn is_active(pod: &Pod) -> bool {
    !matches!(phase(pod), "Succeeded" | "Failed") && pod.metadata.deletion_timestamp.is_none()
}

/// Whether the pod is being deleted.
#[must_use]
pub fn is_terminating(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_some()
}

/// The `Ready` condition is `True`.
#[must_use]
pub fn is_ready(pod: &Pod) -> bool {
    condition(pod, READY).is_some_and(|ready| ready.status == "True")
}

/// Ready, and ready for longer than `min_ready_seconds` at `now` (strictly: transition + min < now). A
/// missing transition time counts as long ago, as Go's zero time does.
#[must_use]
pub fn is_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    let Some(ready) = condition(pod, READY).filter(|ready| ready.status == "True") else {
        return false;
    };
    if min_ready_seconds <= 0 {
        return true;
    }
    ready.last_transition_time.as_ref().is_none_or(|since| {
        since
            .0
            .checked_add(SignedDuration::from_secs(i64::from(min_ready_seconds)))
            .is_ok_and(|until| until < now)
    })
}

/// Phase `Running` and [`is_available`] (upstream `IsRunningAndAvailable`).
#[must_use]
pub fn is_running_and_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    phase(pod) == "Running" && is_available(pod, min_ready_seconds, now)
}

/// The pod's lifecycle state label, if any (an empty label counts as none).
#[must_use]
pub fn lifecycle_state(pod: &Pod) -> Option<LifecycleStateType> {
    label(pod, keys::lifecycle::STATE_LABEL)
        .filter(|state| !state.is_empty())
        .map(LifecycleStateType::from)
}

/// The `InPlaceUpdateReady` condition is absent or `True`.
#[must_use]
pub fn is_in_place_update_ready(pod: &Pod) -> bool {
    condition(pod, keys::inplace::INPLACE_UPDATE_READY)
        .is_none_or(|condition| condition.status == "True")
}

/// Lifecycle-aware availability (CloneSet's `IsPodAvailable`): the lifecycle state is absent or `Normal`,
/// the pod is running and available, and `InPlaceUpdateReady` is absent or `True`.
#[must_use]
pub fn is_lifecycle_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    matches!(
        lifecycle_state(pod),
        None | Some(LifecycleStateType::Normal)
    ) && is_running_and_available(pod, min_ready_seconds, now)
        && is_in_place_update_ready(pod)
}

/// Whether any label starts with `unavailable-pod.kruise.io/`.
#[must_use]
pub fn has_unavailable_label(pod: &Pod) -> bool {
    labels(pod)
        .keys()
        .any(|key| key.starts_with(keys::pod_readiness::UNAVAILABLE_POD_LABEL_PREFIX))
}

/// The pod's `controller-revision-hash` label, or `""`.
#[must_use]
pub fn revision(pod: &Pod) -> &str {
    label(pod, keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL).unwrap_or("")
}

/// Whether a pod revision label value denotes `revision`: equal, or equal in the last `-`-separated
/// segment (so the full name `<parent>-<hash>` and the short hash `<hash>` match each other).
#[must_use]
pub fn revision_matches(pod_revision: &str, revision: &str) -> bool {
    pod_revision == revision || short_hash(pod_revision) == short_hash(revision)
}

/// Whether the pod carries `revision` (see [`revision_matches`]).
#[must_use]
pub fn is_at_revision(pod: &Pod, revision: &str) -> bool {
    revision_matches(self::revision(pod), revision)
}

/// The last `-`-separated segment of a revision name (the whole string when it has no `-`).
#[must_use]
pub fn short_hash(revision: &str) -> &str {
    revision.rsplit('-').next().unwrap_or(revision)
}

/// The largest restart count over the pod's container statuses (0 when none).
#[must_use]
pub fn max_restart_count(pod: &Pod) -> i32 {
    pod.status
        .as_ref()
        .and_then(|status| status.container_statuses.as_ref())
        .and_then(|statuses| statuses.iter().map(|status| status.restart_count).max())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::PodStatus;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

    fn at(time: &str) -> Timestamp {
        time.parse().unwrap()
    }

    fn pod(phase: &str, conditions: &[(&str, &str, Option<&str>)], labels: &[(&str, &str)]) -> Pod {
        Pod {
            metadata: ObjectMeta {
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect(),
                ),
                ..Default::default()
            },
            status: Some(PodStatus {
                phase: Some(phase.into()),
                conditions: Some(
                    conditions
                        .iter()
                        .map(|(type_, status, since)| PodCondition {
                            type_: (*type_).into(),
                            status: (*status).into(),
                            last_transition_time: since.map(|since| Time(at(since))),
                            ..Default::default()
                        })
                        .collect(),
                ),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn activity() {
        assert!(is_active(&pod("Running", &[], &[])));
        assert!(is_active(&pod("Pending", &[], &[])));
        assert!(!is_active(&pod("Succeeded", &[], &[])));
        assert!(!is_active(&pod("Failed", &[], &[])));
        let mut deleting = pod("Running", &[], &[]);
        deleting.metadata.deletion_timestamp = Some(Time(at("2024-01-01T00:00:00Z")));
        assert!(!is_active(&deleting));
        assert!(is_terminating(&deleting));
    }

    #[test]
    fn availability_is_strictly_after_min_ready_seconds() {
        let ready = pod(
            "Running",
            &[("Ready", "True", Some("2024-01-01T00:00:00Z"))],
            &[],
        );
        assert!(is_available(&ready, 0, at("2024-01-01T00:00:00Z")));
        assert!(
            !is_available(&ready, 10, at("2024-01-01T00:00:10Z")),
            "exactly min seconds is not yet available"
        );
        assert!(is_available(&ready, 10, at("2024-01-01T00:00:11Z")));
        let no_time = pod("Running", &[("Ready", "True", None)], &[]);
        assert!(
            is_available(&no_time, 10, at("2024-01-01T00:00:00Z")),
            "zero time counts as long ago"
        );
        let not_ready = pod("Running", &[("Ready", "False", None)], &[]);
        assert!(!is_available(&not_ready, 0, at("2024-01-01T00:00:00Z")));
        let pending = pod("Pending", &[("Ready", "True", None)], &[]);
        assert!(!is_running_and_available(
            &pending,
            0,
            at("2024-01-01T00:00:00Z")
        ));
    }

    #[test]
    fn lifecycle_aware_availability() {
        let now = at("2024-01-01T00:00:00Z");
        let ready = [("Ready", "True", None)];
        assert!(is_lifecycle_available(&pod("Running", &ready, &[]), 0, now));
        assert!(is_lifecycle_available(
            &pod(
                "Running",
                &ready,
                &[(keys::lifecycle::STATE_LABEL, "Normal")]
            ),
            0,
            now
        ));
        assert!(is_lifecycle_available(
            &pod("Running", &ready, &[(keys::lifecycle::STATE_LABEL, "")]),
            0,
            now
        ));
        for state in [
            "PreparingNormal",
            "PreparingUpdate",
            "Updating",
            "Updated",
            "PreparingDelete",
        ] {
            let held = pod("Running", &ready, &[(keys::lifecycle::STATE_LABEL, state)]);
            assert!(!is_lifecycle_available(&held, 0, now), "{state}");
        }
        let updating = pod(
            "Running",
            &[
                ("Ready", "True", None),
                ("InPlaceUpdateReady", "False", None),
            ],
            &[],
        );
        assert!(!is_lifecycle_available(&updating, 0, now));
        let updated = pod(
            "Running",
            &[
                ("Ready", "True", None),
                ("InPlaceUpdateReady", "True", None),
            ],
            &[],
        );
        assert!(is_lifecycle_available(&updated, 0, now));
    }

    #[test]
    fn revisions() {
        assert!(revision_matches("cs-abc", "cs-abc"));
        assert!(revision_matches("abc", "cs-abc"));
        assert!(revision_matches("cs-abc", "abc"));
        assert!(
            revision_matches("other-abc", "cs-abc"),
            "only the last segment is compared"
        );
        assert!(!revision_matches("cs-abc", "cs-abd"));
        assert!(!revision_matches("", "cs-abc"));
        assert_eq!(short_hash("a-b-c"), "c");
        assert_eq!(short_hash("abc"), "abc");
        let labelled = pod("Running", &[], &[("controller-revision-hash", "demo-5f8c")]);
        assert!(is_at_revision(&labelled, "5f8c"));
    }

    #[test]
    fn unavailable_label_prefix() {
        assert!(has_unavailable_label(&pod(
            "Running",
            &[],
            &[("unavailable-pod.kruise.io/x", "1")]
        )));
        assert!(!has_unavailable_label(&pod(
            "Running",
            &[],
            &[("unavailable-pod.kruise.ioo", "1")]
        )));
    }
}
