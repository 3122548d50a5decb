//! Recomputing the pod's `Ready` condition from its readiness gates (as upstream's in-place update does after it
//! changes a readiness-gate condition).
//!
//! Kubelet sets `Ready` from `ContainersReady` and the readiness-gate conditions, but only on its next status
//! sync. A controller that flips a gate condition recomputes `Ready` in the same write so that the pod leaves
//! (or rejoins) Service endpoints at once:
//!
//! * nothing is done when the pod has no `Ready` condition yet, or `ContainersReady` is not `True` (kubelet
//!   owns those cases);
//! * otherwise `Ready` is `True` if every gate's condition exists and is `True`, else `False` with reason
//!   `ReadinessGatesNotReady` and kubelet's message;
//! * the condition is rewritten only when its status changes.
//!
//! ```
//! use k8s_openapi::api::core::v1::{Pod, PodCondition, PodReadinessGate, PodSpec, PodStatus};
//! use k8s_openapi::jiff::Timestamp;
//! use kruise_lifecycle::ready::recompute_ready;
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
use k8s_openapi::jiff::Timestamp;
use kruise_api::pod::condition;

use crate::timestamp::condition_time;

/// The pod condition type `Ready`.
pub const READY: &str = "Ready";

/// The pod condition type `ContainersReady`.
pub const CONTAINERS_READY: &str = "ContainersReady";

/// The reason of a `Ready=False` condition caused by readiness gates.
pub const READINESS_GATES_NOT_READY_REASON: &str = "ReadinessGatesNotReady";

/// The `Ready` condition `pod` should have given its readiness gates, or `None` when it keeps its current one
/// (no `Ready` condition, `ContainersReady` not `True`, or the status would not change).
///
/// `pod` must already carry the gate conditions being written. The new condition's `lastTransitionTime` is
/// `now` (whole seconds).
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
            last_transition_time: Some(condition_time(now)),
            ..Default::default()
        }
    };
    (new.status != ready.status).then_some(new)
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
            down.message.as_deref(),
            Some(
                "corresponding condition of pod readiness gate \"A\" does not exist., \
                 the status of pod readiness gate \"B\" is not \"True\", but "
            )
        );
    }

    #[test]
    fn quoting() {
        assert_eq!(go_quote("a\"b\\c\n\u{1}é"), "\"a\\\"b\\\\c\\n\\x01é\"");
    }
}
