//! The `InPlaceUpdateReady` readiness gate and condition, and the `Ready` recomputation upstream does when it
//! sets a gate condition to `False` (through [`kruise_api::pod_condition`]).

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use k8s_openapi::jiff::Timestamp;
use kruise_api::keys::inplace::{INPLACE_UPDATE_READY, START_INPLACE_UPDATE_REASON};
use kruise_api::pod::condition;
use kruise_api::pod_condition::{condition_time, set_condition, set_ready_condition};

/// Whether the pod has the `InPlaceUpdateReady` readiness gate.
#[must_use]
pub fn has_readiness_gate(pod: &Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|spec| spec.readiness_gates.as_ref())
        .is_some_and(|gates| {
            gates
                .iter()
                .any(|gate| gate.condition_type == INPLACE_UPDATE_READY)
        })
}

/// Adds the `InPlaceUpdateReady` readiness gate unless present (upstream `InjectReadinessGate`).
pub fn inject_readiness_gate(pod: &mut Pod) {
    if has_readiness_gate(pod) {
        return;
    }
    pod.spec
        .get_or_insert_with(Default::default)
        .readiness_gates
        .get_or_insert_with(Vec::new)
        .push(k8s_openapi::api::core::v1::PodReadinessGate {
            condition_type: INPLACE_UPDATE_READY.to_owned(),
        });
}

/// `InPlaceUpdateReady=False` with reason `StartInPlaceUpdate`, as written before an in-place update.
#[must_use]
pub fn not_ready_condition(now: Timestamp) -> PodCondition {
    PodCondition {
        type_: INPLACE_UPDATE_READY.to_owned(),
        status: "False".to_owned(),
        reason: Some(START_INPLACE_UPDATE_REASON.to_owned()),
        last_transition_time: Some(condition_time(now)),
        ..PodCondition::default()
    }
}

/// `InPlaceUpdateReady=True`, as written once an in-place update completed.
#[must_use]
pub fn ready_condition(now: Timestamp) -> PodCondition {
    PodCondition {
        type_: INPLACE_UPDATE_READY.to_owned(),
        status: "True".to_owned(),
        last_transition_time: Some(condition_time(now)),
        ..PodCondition::default()
    }
}

/// Upstream's `updateCondition` on a pod in memory: nothing when the pod has the condition with the same status,
/// reason and message; else the condition is set (replacing one of the same type only if its status differs),
/// and when the new status is `False` the `Ready` condition is recomputed from the readiness gates.
pub(crate) fn update_condition(pod: &mut Pod, new: PodCondition, now: Timestamp) {
    let same = condition(pod, &new.type_).is_some_and(|old| {
        old.status == new.status
            && old.reason.as_deref().unwrap_or("") == new.reason.as_deref().unwrap_or("")
            && old.message.as_deref().unwrap_or("") == new.message.as_deref().unwrap_or("")
    });
    if same {
        return;
    }
    let set_ready = new.status == "False";
    set_condition(pod, new);
    if set_ready {
        set_ready_condition(pod, now);
    }
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
                        .map(|gate| PodReadinessGate {
                            condition_type: (*gate).into(),
                        })
                        .collect(),
                ),
                ..PodSpec::default()
            }),
            status: Some(PodStatus {
                conditions: Some(
                    conditions
                        .iter()
                        .map(|(type_, status)| PodCondition {
                            type_: (*type_).into(),
                            status: (*status).into(),
                            ..PodCondition::default()
                        })
                        .collect(),
                ),
                ..PodStatus::default()
            }),
            ..Pod::default()
        }
    }

    fn now() -> Timestamp {
        "2024-05-01T10:00:00Z".parse().unwrap()
    }

    #[test]
    fn not_ready_turns_ready_false_through_the_gate() {
        let mut ready = pod(
            &["InPlaceUpdateReady", "KruisePodReady"],
            &[
                ("Ready", "True"),
                ("ContainersReady", "True"),
                ("KruisePodReady", "True"),
            ],
        );
        update_condition(&mut ready, not_ready_condition(now()), now());
        let conditions = ready.status.unwrap().conditions.unwrap();
        let ready_condition = conditions.iter().find(|c| c.type_ == "Ready").unwrap();
        assert_eq!(ready_condition.status, "False");
        assert_eq!(
            ready_condition.reason.as_deref(),
            Some("ReadinessGatesNotReady")
        );
        assert_eq!(
            ready_condition.message.as_deref(),
            Some(
                "the status of pod readiness gate \"InPlaceUpdateReady\" is not \"True\", but False"
            )
        );
        assert_eq!(ready_condition.last_transition_time, None);
        let gate = conditions
            .iter()
            .find(|c| c.type_ == "InPlaceUpdateReady")
            .unwrap();
        assert_eq!(gate.reason.as_deref(), Some("StartInPlaceUpdate"));
    }

    #[test]
    fn ready_untouched_without_containers_ready() {
        let mut pod = pod(
            &["InPlaceUpdateReady"],
            &[("Ready", "True"), ("ContainersReady", "False")],
        );
        update_condition(&mut pod, not_ready_condition(now()), now());
        let conditions = pod.status.unwrap().conditions.unwrap();
        assert_eq!(conditions[0].status, "True");
    }

    #[test]
    fn same_status_is_not_replaced() {
        // Upstream's "existing condition status is True" case: a True condition with another reason stays.
        let mut pod = pod(&["InPlaceUpdateReady"], &[("InPlaceUpdateReady", "True")]);
        pod.status.as_mut().unwrap().conditions.as_mut().unwrap()[0].reason = Some("Other".into());
        let before = pod.clone();
        update_condition(&mut pod, ready_condition(now()), now());
        assert_eq!(pod, before);
    }

    #[test]
    fn gate_injection_is_idempotent() {
        let mut pod = Pod::default();
        inject_readiness_gate(&mut pod);
        inject_readiness_gate(&mut pod);
        assert!(has_readiness_gate(&pod));
        assert_eq!(pod.spec.unwrap().readiness_gates.unwrap().len(), 1);
    }
}
