//! Writing pod conditions as upstream's controllers do (`SetPodCondition` and `SetPodReadyCondition` in
//! `pkg/util/pods.go`): a condition replaces one of its type only when its status changes, and a controller
//! that flips a readiness-gate condition recomputes `Ready` in the same write, so the pod leaves (or rejoins)
//! Service endpoints at once instead of on kubelet's next status sync.
//!
//! `Ready` is recomputed only when the pod has a `Ready` condition and `ContainersReady` is `True` (kubelet
//! owns the other cases): `True` (with `lastTransitionTime` now) when every gate's condition exists and is
//! `True`, else `False` with reason `ReadinessGatesNotReady` and kubelet's message, and no
//! `lastTransitionTime`, as upstream writes it.
//!
//! ```
//! use k8s_openapi::api::core::v1::{Pod, PodCondition, PodReadinessGate, PodSpec, PodStatus};
//! use k8s_openapi::jiff::Timestamp;
//! use kruise_api::pod_condition::recompute_ready;
//!
//! let condition = |type_: &str, status: &str| PodCondition {
//!     type_: type_.into(),
//!     status: status.into(),
//!     ..Default::default()
//! };
//! let pod = Pod {
//!     spec: Some(PodSpec {
//!         readiness_gates: Some(vec![PodReadinessGate { condition_type: "KruisePodReady".into() }]),
//!         ..Default::default()
//!     }),
//!     status: Some(PodStatus {
//!         conditions: Some(vec![
//!             condition("ContainersReady", "True"),
//!             condition("Ready", "True"),
//!             condition("KruisePodReady", "False"),
//!         ]),
//!         ..Default::default()
//!     }),
//!     ..Default::default()
//! };
//! let ready = recompute_ready(&pod, Timestamp::UNIX_EPOCH).unwrap();
//! assert_eq!(ready.status, "False");
//! assert_eq!(ready.reason.as_deref(), Some("ReadinessGatesNotReady"));
//! assert_eq!(
//!     ready.message.as_deref(),
//!     Some(r#"the status of pod readiness gate "KruisePodReady" is not "True", but False"#)
//! );
//! ```

use std::fmt::Write as _;

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use crate::pod::condition;

/// The pod condition type `Ready`.
pub const READY: &str = "Ready";

/// The pod condition type `ContainersReady`.
pub const CONTAINERS_READY: &str = "ContainersReady";

/// The reason of a `Ready=False` condition caused by readiness gates.
pub const READINESS_GATES_NOT_READY_REASON: &str = "ReadinessGatesNotReady";

/// A `metav1.Time` for `now`, truncated to whole seconds (the wire precision), so that a condition built in
/// memory equals the one read back from the API server.
#[must_use]
pub fn condition_time(now: Timestamp) -> Time {
    // Any timestamp's whole-second floor is itself a valid timestamp.
    let seconds = now.as_second();
    let floor = if now.subsec_nanosecond() < 0 {
        seconds.saturating_sub(1)
    } else {
        seconds
    };
    Time(Timestamp::from_second(floor).unwrap_or(now))
}

/// Sets `new` on `pod` (upstream's `SetPodCondition`): appended when the pod has no condition of its type,
/// replacing the existing one only when the status differs. Returns whether the pod changed.
pub fn set_condition(pod: &mut Pod, new: PodCondition) -> bool {
    let conditions = pod
        .status
        .get_or_insert_with(Default::default)
        .conditions
        .get_or_insert_with(Vec::new);
    match conditions.iter_mut().find(|old| old.type_ == new.type_) {
        Some(old) if old.status != new.status => *old = new,
        Some(_) => return false,
        None => conditions.push(new),
    }
    true
}

/// The `Ready` condition `pod` should have given its readiness gates, or `None` when it keeps its current one
/// (no `Ready` condition, `ContainersReady` not `True`, or the status would not change).
///
/// `pod` must already carry the gate conditions being written. A `True` condition's `lastTransitionTime` is
/// `now` (whole seconds); a `False` one has none, as upstream writes it.
#[must_use]
pub fn recompute_ready(pod: &Pod, now: Timestamp) -> Option<PodCondition> {
    let ready = condition(pod, READY)?;
    if condition(pod, CONTAINERS_READY).is_none_or(|containers| containers.status != "True") {
        return None;
    }
    let gates = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.readiness_gates.as_deref())
        .unwrap_or_default();
    let mut unready = Vec::new();
    for gate in gates {
        match condition(pod, &gate.condition_type) {
            None => unready.push(format!(
                "corresponding condition of pod readiness gate {} does not exist.",
                go_quote(&gate.condition_type)
            )),
            Some(gate_condition) if gate_condition.status != "True" => unready.push(format!(
                "the status of pod readiness gate {} is not \"True\", but {}",
                go_quote(&gate.condition_type),
                gate_condition.status
            )),
            Some(_) => {}
        }
    }
    let new = if unready.is_empty() {
        PodCondition {
            type_: READY.into(),
            status: "True".into(),
            last_transition_time: Some(condition_time(now)),
            ..Default::default()
        }
    } else {
        PodCondition {
            type_: READY.into(),
            status: "False".into(),
            reason: Some(READINESS_GATES_NOT_READY_REASON.into()),
            message: Some(unready.join(", ")),
            ..Default::default()
        }
    };
    (new.status != ready.status).then_some(new)
}

/// Sets `Ready` on `pod` as [`recompute_ready`] decides; returns whether it changed.
pub fn set_ready_condition(pod: &mut Pod, now: Timestamp) -> bool {
    match recompute_ready(pod, now) {
        Some(ready) => set_condition(pod, ready),
        None => false,
    }
}

/// Quotes like Go's `%q` for the strings that appear here (condition types): backslash escapes for `"`,
/// `\` and control characters; other characters as they are.
fn go_quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if u32::from(c) < 0x20 || c == '\u{7f}' => {
                // Writing into a String cannot fail.
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{PodReadinessGate, PodSpec, PodStatus};

    fn pod(gates: &[&str], conditions: &[(&str, &str)]) -> Pod {
        Pod {
            spec: Some(PodSpec {
                readiness_gates: Some(
                    gates
                        .iter()
                        .map(|g| PodReadinessGate {
                            condition_type: (*g).into(),
                        })
                        .collect(),
                ),
                ..Default::default()
            }),
            status: Some(PodStatus {
                conditions: Some(
                    conditions
                        .iter()
                        .map(|(t, s)| PodCondition {
                            type_: (*t).into(),
                            status: (*s).into(),
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
    fn rules() {
        let now = Timestamp::UNIX_EPOCH;
        // No Ready condition: kubelet has not reported yet.
        assert!(recompute_ready(&pod(&["G"], &[("ContainersReady", "True")]), now).is_none());
        // Containers not ready: kubelet's call.
        assert!(
            recompute_ready(
                &pod(&["G"], &[("Ready", "True"), ("ContainersReady", "False")]),
                now
            )
            .is_none()
        );
        // All gates true: Ready True (a change from False).
        let back = recompute_ready(
            &pod(
                &["G"],
                &[
                    ("Ready", "False"),
                    ("ContainersReady", "True"),
                    ("G", "True"),
                ],
            ),
            now,
        )
        .unwrap();
        assert_eq!(back.status, "True");
        assert_eq!(back.reason, None);
        assert!(back.last_transition_time.is_some());
        // Same status: nothing to write.
        assert!(
            recompute_ready(
                &pod(
                    &["G"],
                    &[
                        ("Ready", "True"),
                        ("ContainersReady", "True"),
                        ("G", "True")
                    ]
                ),
                now
            )
            .is_none()
        );
        // Several gates: messages in gate order, joined by ", ".
        let down = recompute_ready(
            &pod(
                &["A", "B", "C"],
                &[
                    ("Ready", "True"),
                    ("ContainersReady", "True"),
                    ("B", ""),
                    ("C", "True"),
                ],
            ),
            now,
        )
        .unwrap();
        assert_eq!(
            down.reason.as_deref(),
            Some(READINESS_GATES_NOT_READY_REASON)
        );
        assert_eq!(
            down.last_transition_time, None,
            "upstream writes Ready=False without a time"
        );
        assert_eq!(
            down.message.as_deref(),
            Some(
                "corresponding condition of pod readiness gate \"A\" does not exist., \
                 the status of pod readiness gate \"B\" is not \"True\", but "
            )
        );
    }

    #[test]
    fn set_condition_replaces_only_on_a_status_change() {
        let mut gated = pod(&["G"], &[("G", "True")]);
        let other_reason = PodCondition {
            type_: "G".into(),
            status: "True".into(),
            reason: Some("Other".into()),
            ..Default::default()
        };
        assert!(!set_condition(&mut gated, other_reason));
        let flipped = PodCondition {
            type_: "G".into(),
            status: "False".into(),
            ..Default::default()
        };
        assert!(set_condition(&mut gated, flipped.clone()));
        assert_eq!(condition(&gated, "G"), Some(&flipped));
        let added = PodCondition {
            type_: "H".into(),
            status: "True".into(),
            ..Default::default()
        };
        assert!(set_condition(&mut gated, added));
        assert_eq!(gated.status.unwrap().conditions.unwrap().len(), 2);
    }

    #[test]
    fn set_ready_condition_writes_the_recomputed_ready() {
        let mut gated = pod(
            &["G"],
            &[
                ("Ready", "True"),
                ("ContainersReady", "True"),
                ("G", "False"),
            ],
        );
        assert!(set_ready_condition(&mut gated, Timestamp::UNIX_EPOCH));
        assert_eq!(condition(&gated, READY).unwrap().status, "False");
        assert!(!set_ready_condition(&mut gated, Timestamp::UNIX_EPOCH));
    }

    #[test]
    fn condition_times_are_whole_seconds() {
        let now: Timestamp = "2024-05-01T10:00:00.9Z".parse().unwrap();
        assert_eq!(
            condition_time(now).0,
            "2024-05-01T10:00:00Z".parse().unwrap()
        );
        let before_epoch: Timestamp = "1969-12-31T23:59:59.5Z".parse().unwrap();
        assert_eq!(
            condition_time(before_epoch).0,
            "1969-12-31T23:59:59Z".parse().unwrap()
        );
    }

    #[test]
    fn quoting() {
        assert_eq!(go_quote("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\x01é\"");
    }
}
