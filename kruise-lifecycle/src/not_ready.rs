//! Holding a pod not-ready through the multi-writer `KruisePodReady` condition (upstream
//! `pkg/util/podreadiness`, `apis/apps/pub/pod_readiness_gate.go`).
//!
//! Pods created by Kruise workloads carry the `KruisePodReady` readiness gate. Several writers can hold such a
//! pod not-ready at the same time; each adds its own `{userAgent, key}` entry to the condition's message (a
//! JSON array sorted by user agent then key) and removes it when done:
//!
//! * the lifecycle machinery: `{Lifecycle, preDeleteHook}` in `PreparingDelete`, `{Lifecycle, preUpdateHook}`
//!   from `PreparingUpdate` until the in-place update is over;
//! * `ContainerRecreateRequest`: `{ContainerRecreateRequest, <namespace>/<name>}` during its unready grace.
//!
//! The condition is `False` while any entry is present and `True` once the list is empty, and the pod's
//! `Ready` condition is recomputed from its readiness gates in the same write ([`crate::ready`]). A pod
//! without the gate is left alone: adding and removing are then no-ops.
//!
//! [`add_not_ready_key`] and [`remove_not_ready_key`] return the [`StatusChange`] to write (empty when there
//! is nothing to do); render it with [`StatusChange::strategic_merge_patch`], which carries the pod's
//! `resourceVersion` so that two writers racing on the message cannot lose each other's entries.
//!
//! ```
//! use k8s_openapi::api::core::v1::{Pod, PodReadinessGate, PodSpec};
//! use k8s_openapi::jiff::Timestamp;
//! use kruise_lifecycle::not_ready::{self, add_not_ready_key, remove_not_ready_key};
//!
//! let mut pod = Pod {
//!     spec: Some(PodSpec {
//!         readiness_gates: Some(vec![PodReadinessGate { condition_type: "KruisePodReady".into() }]),
//!         ..Default::default()
//!     }),
//!     ..Default::default()
//! };
//! let crr = not_ready::container_recreate_request_entry("default", "restart-nginx");
//! let now = Timestamp::UNIX_EPOCH;
//!
//! add_not_ready_key(&pod, &crr, now)?.apply_to(&mut pod);
//! let condition = kruise_api::pod::condition(&pod, "KruisePodReady").unwrap();
//! assert_eq!(condition.status, "False");
//! assert_eq!(
//!     condition.message.as_deref(),
//!     Some(r#"[{"userAgent":"ContainerRecreateRequest","key":"default/restart-nginx"}]"#)
//! );
//! assert!(add_not_ready_key(&pod, &crr, now)?.is_empty(), "already held");
//!
//! remove_not_ready_key(&pod, &crr, now)?.apply_to(&mut pod);
//! let condition = kruise_api::pod::condition(&pod, "KruisePodReady").unwrap();
//! assert_eq!((condition.status.as_str(), condition.message.as_deref()), ("True", Some("[]")));
//! # Ok::<(), kruise_lifecycle::Error>(())
//! ```

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::jiff::Timestamp;
pub use kruise_api::annotations::PodNotReadyEntry;
use kruise_api::annotations::{format_pod_not_ready_message, parse_pod_not_ready_message};
use kruise_api::keys::pod_readiness::{
    CONTAINER_RECREATE_REQUEST_USER_AGENT, KRUISE_POD_READY, LIFECYCLE_USER_AGENT,
    PRE_DELETE_HOOK_KEY, PRE_UPDATE_HOOK_KEY,
};
use kruise_api::pod::condition;

use crate::change::StatusChange;
use crate::error::{Error, PodName};
use crate::ready::recompute_ready;
use crate::timestamp::condition_time;

/// The entry the lifecycle machinery holds while a pod is in `PreparingDelete`:
/// `{"userAgent":"Lifecycle","key":"preDeleteHook"}`.
#[must_use]
pub fn pre_delete_entry() -> PodNotReadyEntry {
    entry(LIFECYCLE_USER_AGENT, PRE_DELETE_HOOK_KEY)
}

/// The entry the lifecycle machinery holds from `PreparingUpdate` until the update is over:
/// `{"userAgent":"Lifecycle","key":"preUpdateHook"}`.
#[must_use]
pub fn pre_update_entry() -> PodNotReadyEntry {
    entry(LIFECYCLE_USER_AGENT, PRE_UPDATE_HOOK_KEY)
}

/// The entry a `ContainerRecreateRequest` holds during its unready grace:
/// `{"userAgent":"ContainerRecreateRequest","key":"<namespace>/<name>"}`.
#[must_use]
pub fn container_recreate_request_entry(namespace: &str, name: &str) -> PodNotReadyEntry {
    entry(
        CONTAINER_RECREATE_REQUEST_USER_AGENT,
        &format!("{namespace}/{name}"),
    )
}

/// An entry for any other writer.
#[must_use]
pub fn entry(user_agent: &str, key: &str) -> PodNotReadyEntry {
    PodNotReadyEntry {
        user_agent: user_agent.to_owned(),
        key: key.to_owned(),
    }
}

/// Whether the pod has the `KruisePodReady` readiness gate (without it, not-ready entries are not written).
#[must_use]
pub fn has_gate(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|spec| spec.readiness_gates.as_ref())
        .is_some_and(|gates| {
            gates
                .iter()
                .any(|gate| gate.condition_type == KRUISE_POD_READY)
        })
}

/// The entries currently listed in the pod's `KruisePodReady` condition (none without the condition).
///
/// # Errors
/// [`Error::NotReadyMessage`] when the message is neither empty nor a JSON list of entries.
pub fn entries(pod: &Pod) -> Result<Vec<PodNotReadyEntry>, Error> {
    condition(pod, KRUISE_POD_READY).map_or_else(|| Ok(Vec::new()), |c| parse(pod, c))
}

fn parse(pod: &Pod, condition: &PodCondition) -> Result<Vec<PodNotReadyEntry>, Error> {
    parse_pod_not_ready_message(condition.message.as_deref().unwrap_or("")).map_err(|source| {
        Error::NotReadyMessage {
            pod: PodName::of(pod),
            source,
        }
    })
}

/// Holds `pod` not-ready for `entry`: adds the entry to the `KruisePodReady` message, sets the condition
/// `False` (creating it, with status `False`, if the pod has none yet) with `lastTransitionTime` = `now`,
/// and recomputes `Ready`.
///
/// Nothing to write (an empty change) when the pod lacks the `KruisePodReady` gate, or already lists the
/// entry with status `False`.
///
/// # Errors
/// [`Error::NotReadyMessage`] when the existing message does not parse (rewriting it could drop another
/// writer's entry).
pub fn add_not_ready_key(
    pod: &Pod,
    entry: &PodNotReadyEntry,
    now: Timestamp,
) -> Result<StatusChange, Error> {
    if !has_gate(pod) {
        return Ok(StatusChange::default());
    }
    let new = match condition(pod, KRUISE_POD_READY) {
        None => PodCondition {
            type_: KRUISE_POD_READY.into(),
            status: "False".into(),
            message: Some(format_pod_not_ready_message(std::slice::from_ref(entry))),
            last_transition_time: Some(condition_time(now)),
            ..Default::default()
        },
        Some(existing) => {
            let mut entries = parse(pod, existing)?;
            let listed = entries.contains(entry);
            if listed && existing.status == "False" {
                return Ok(StatusChange::default());
            }
            if !listed {
                entries.push(entry.clone());
            }
            PodCondition {
                status: "False".into(),
                message: Some(format_pod_not_ready_message(&entries)),
                last_transition_time: Some(condition_time(now)),
                ..existing.clone()
            }
        }
    };
    Ok(with_ready(pod, new, now))
}

/// Releases `entry`'s hold on `pod`: removes the entry from the `KruisePodReady` message (every copy of it),
/// sets the condition `True` once the list is empty, moves `lastTransitionTime` to `now`, and recomputes
/// `Ready`.
///
/// Nothing to write when the pod lacks the gate or the condition, or the entry is not listed.
///
/// # Errors
/// [`Error::NotReadyMessage`] when the existing message does not parse.
pub fn remove_not_ready_key(
    pod: &Pod,
    entry: &PodNotReadyEntry,
    now: Timestamp,
) -> Result<StatusChange, Error> {
    if !has_gate(pod) {
        return Ok(StatusChange::default());
    }
    let Some(existing) = condition(pod, KRUISE_POD_READY) else {
        return Ok(StatusChange::default());
    };
    let mut entries = parse(pod, existing)?;
    let before = entries.len();
    entries.retain(|listed| listed != entry);
    if entries.len() == before {
        return Ok(StatusChange::default());
    }
    let new = PodCondition {
        status: if entries.is_empty() {
            "True".into()
        } else {
            existing.status.clone()
        },
        message: Some(format_pod_not_ready_message(&entries)),
        last_transition_time: Some(condition_time(now)),
        ..existing.clone()
    };
    Ok(with_ready(pod, new, now))
}

/// The change writing `kruise_pod_ready`, plus `Ready` when its recomputed status differs.
fn with_ready(pod: &Pod, kruise_pod_ready: PodCondition, now: Timestamp) -> StatusChange {
    let mut change = StatusChange::default();
    change.set(kruise_pod_ready);
    let after = change.apply(pod);
    if let Some(ready) = recompute_ready(&after, now) {
        change.set(ready);
    }
    change
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{PodReadinessGate, PodSpec, PodStatus};

    fn gated(conditions: Vec<PodCondition>) -> Pod {
        Pod {
            spec: Some(PodSpec {
                readiness_gates: Some(vec![PodReadinessGate {
                    condition_type: KRUISE_POD_READY.into(),
                }]),
                ..Default::default()
            }),
            status: Some(PodStatus {
                conditions: Some(conditions),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn cond(type_: &str, status: &str, message: Option<&str>) -> PodCondition {
        PodCondition {
            type_: type_.into(),
            status: status.into(),
            message: message.map(Into::into),
            ..Default::default()
        }
    }

    fn now() -> Timestamp {
        "2024-05-01T10:00:00.5Z".parse().unwrap()
    }

    #[test]
    fn no_gate_no_write() {
        let pod = Pod::default();
        assert!(
            add_not_ready_key(&pod, &pre_delete_entry(), now())
                .unwrap()
                .is_empty()
        );
        assert!(
            remove_not_ready_key(&pod, &pre_delete_entry(), now())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn first_write_creates_a_false_condition_and_flips_ready() {
        let pod = gated(vec![
            cond("ContainersReady", "True", None),
            cond("Ready", "True", None),
        ]);
        let change = add_not_ready_key(&pod, &pre_update_entry(), now()).unwrap();
        let kpr = change.condition(KRUISE_POD_READY).unwrap();
        assert_eq!(kpr.status, "False", "never an empty status");
        assert_eq!(
            kpr.message.as_deref(),
            Some(r#"[{"userAgent":"Lifecycle","key":"preUpdateHook"}]"#)
        );
        assert_eq!(
            kpr.last_transition_time.as_ref().unwrap().0,
            "2024-05-01T10:00:00Z".parse::<Timestamp>().unwrap()
        );
        let ready = change.condition("Ready").unwrap();
        assert_eq!(ready.status, "False");
        assert_eq!(ready.reason.as_deref(), Some("ReadinessGatesNotReady"));
    }

    #[test]
    fn entries_are_kept_sorted_and_other_writers_survive() {
        let pod = gated(vec![cond(
            KRUISE_POD_READY,
            "False",
            Some(r#"[{"userAgent":"Lifecycle","key":"preUpdateHook"}]"#),
        )]);
        let crr = container_recreate_request_entry("ns", "crr");
        let change = add_not_ready_key(&pod, &crr, now()).unwrap();
        assert_eq!(
            change
                .condition(KRUISE_POD_READY)
                .unwrap()
                .message
                .as_deref(),
            Some(
                r#"[{"userAgent":"ContainerRecreateRequest","key":"ns/crr"},{"userAgent":"Lifecycle","key":"preUpdateHook"}]"#
            )
        );
        let pod = change.apply(&pod);
        let change = remove_not_ready_key(&pod, &pre_update_entry(), now()).unwrap();
        let kpr = change.condition(KRUISE_POD_READY).unwrap();
        assert_eq!(kpr.status, "False", "the CRR still holds the pod");
        assert_eq!(
            kpr.message.as_deref(),
            Some(r#"[{"userAgent":"ContainerRecreateRequest","key":"ns/crr"}]"#)
        );
    }

    #[test]
    fn a_listed_entry_with_a_wrong_status_is_repaired() {
        // Upstream's first write leaves an empty status; a True status with a listed entry is inconsistent too.
        for status in ["", "True", "Unknown"] {
            let pod = gated(vec![cond(
                KRUISE_POD_READY,
                status,
                Some(r#"[{"userAgent":"Lifecycle","key":"preDeleteHook"}]"#),
            )]);
            let change = add_not_ready_key(&pod, &pre_delete_entry(), now()).unwrap();
            let kpr = change.condition(KRUISE_POD_READY).unwrap();
            assert_eq!(kpr.status, "False", "{status:?}");
            assert_eq!(
                kpr.message.as_deref(),
                Some(r#"[{"userAgent":"Lifecycle","key":"preDeleteHook"}]"#)
            );
        }
    }

    #[test]
    fn removing_the_last_entry_sets_true_and_recomputes_ready() {
        let pod = gated(vec![
            cond("ContainersReady", "True", None),
            cond("Ready", "False", None),
            cond(
                KRUISE_POD_READY,
                "False",
                Some(r#"[{"userAgent":"Lifecycle","key":"preUpdateHook"}]"#),
            ),
        ]);
        let change = remove_not_ready_key(&pod, &pre_update_entry(), now()).unwrap();
        assert_eq!(change.condition(KRUISE_POD_READY).unwrap().status, "True");
        assert_eq!(
            change
                .condition(KRUISE_POD_READY)
                .unwrap()
                .message
                .as_deref(),
            Some("[]")
        );
        assert_eq!(change.condition("Ready").unwrap().status, "True");
        assert!(
            remove_not_ready_key(&change.apply(&pod), &pre_update_entry(), now())
                .unwrap()
                .is_empty(),
            "idempotent"
        );
    }

    #[test]
    fn garbage_messages_are_errors_naming_the_pod() {
        let mut pod = gated(vec![cond(KRUISE_POD_READY, "False", Some("{oops"))]);
        pod.metadata.namespace = Some("ns".into());
        pod.metadata.name = Some("web-0".into());
        let error = add_not_ready_key(&pod, &pre_delete_entry(), now()).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("pod ns/web-0: status.conditions[type=KruisePodReady]"),
            "{error}"
        );
        assert!(remove_not_ready_key(&pod, &pre_delete_entry(), now()).is_err());
        // An empty message is an empty list, not an error.
        let empty = gated(vec![cond(KRUISE_POD_READY, "True", Some(""))]);
        assert_eq!(entries(&empty).unwrap(), vec![]);
    }
}
