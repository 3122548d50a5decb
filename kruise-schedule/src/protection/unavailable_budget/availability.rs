//! The budget's numbers: how many pods are expected, how many must stay available, and whether one pod
//! counts as available.
//!
//! * expected: `spec.protectTotalReplicas` (else the v1alpha1 annotation `pub.kruise.io/protect-total-replicas`)
//!   when set; otherwise, for a `targetRef`, the workload's replicas (read by the caller from its `scale`
//!   subresource), for a `selector`, the number of covered active pods;
//! * desired available: `expected - maxUnavailable` when `maxUnavailable` is set (it wins), else
//!   `minAvailable`; a percentage is of `expected`, rounded up (upstream
//!   `intstr.GetScaledValueFromIntOrPercent(.., true)`, [`safe_scaled`]); never below 0; neither set: 0;
//! * available: active (not `Succeeded`/`Failed`, no `deletionTimestamp`), `Ready` condition `True`, and no
//!   `unavailable-pod.kruise.io/*` label. The status then also leaves out the pods it lists as disrupted or
//!   unavailable ([`super::status`]).

use k8s_openapi::api::core::v1::Pod;
use kruise_api::keys::pub_policy::PROTECT_TOTAL_REPLICAS_ANNOTATION;
use kruise_api::policy::v1beta1::PodUnavailableBudget;

use super::{BudgetError, budget_key};
use crate::int_or_percent::{Rounding, safe_scaled};

/// `spec.protectTotalReplicas`, else the annotation when it is a 32-bit integer; values below 1 are not
/// taken (the field's minimum is 1).
#[must_use]
pub fn protect_total_replicas(budget: &PodUnavailableBudget) -> Option<i32> {
    budget
        .spec
        .protect_total_replicas
        .or_else(|| {
            budget
                .metadata
                .annotations
                .as_ref()?
                .get(PROTECT_TOTAL_REPLICAS_ANNOTATION)?
                .trim()
                .parse()
                .ok()
        })
        .filter(|total| *total >= 1)
}

/// The pods that must stay available out of `expected`.
///
/// # Errors
/// `maxUnavailable` or `minAvailable` is a string that is not an integer percentage.
pub fn desired_available(budget: &PodUnavailableBudget, expected: i32) -> Result<i32, BudgetError> {
    let scale = |field: &str, value| {
        safe_scaled(value, i64::from(expected), Rounding::Up).map_err(|source| BudgetError::Scale {
            budget: budget_key(budget),
            source: source.in_field(field),
        })
    };
    let desired = if let Some(max_unavailable) = &budget.spec.max_unavailable {
        i64::from(expected) - scale("spec.maxUnavailable", max_unavailable)?
    } else if let Some(min_available) = &budget.spec.min_available {
        scale("spec.minAvailable", min_available)?
    } else {
        0
    };
    Ok(i32::try_from(desired.max(0)).unwrap_or(i32::MAX))
}

/// Whether `pod` counts as available for a budget (before the status's own lists are considered).
#[must_use]
pub fn is_available(pod: &Pod) -> bool {
    kruise_api::pod::is_active(pod)
        && kruise_api::pod::is_ready(pod)
        && !kruise_api::pod::has_unavailable_label(pod)
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    use serde_json::json;

    use super::*;

    fn budget(max: Option<IntOrString>, min: Option<IntOrString>) -> PodUnavailableBudget {
        let mut budget = PodUnavailableBudget::default();
        budget.metadata.name = Some("pub".into());
        budget.metadata.namespace = Some("ns".into());
        budget.spec.max_unavailable = max;
        budget.spec.min_available = min;
        budget
    }

    #[test]
    fn desired_available_follows_upstream_rounding() {
        let int = IntOrString::Int;
        let pct = |text: &str| IntOrString::String(text.to_owned());
        let table = [
            (Some(int(2)), None, 10, 8),
            (Some(pct("25%")), None, 10, 7), // 2.5 up to 3 unavailable
            (Some(int(2)), Some(int(9)), 10, 8), // maxUnavailable wins
            (None, Some(int(9)), 10, 9),
            (None, Some(pct("55%")), 10, 6), // 5.5 up to 6
            (Some(int(20)), None, 10, 0),    // never below 0
            (None, None, 10, 0),
            (Some(pct("50%")), None, 0, 0),
        ];
        for (max, min, expected, desired) in table {
            assert_eq!(
                desired_available(&budget(max.clone(), min.clone()), expected).unwrap(),
                desired,
                "{max:?} {min:?} of {expected}"
            );
        }
    }

    #[test]
    fn a_bad_percentage_names_the_budget_field_and_value() {
        let bad = budget(Some(IntOrString::String("2".into())), None);
        let error = desired_available(&bad, 10).unwrap_err().to_string();
        assert!(error.contains("PodUnavailableBudget ns/pub"), "{error}");
        assert!(error.contains("spec.maxUnavailable"), "{error}");
        assert!(error.contains("\"2\""), "{error}");
    }

    #[test]
    fn protect_total_replicas_reads_the_field_then_the_annotation() {
        let mut budget = budget(None, None);
        assert_eq!(protect_total_replicas(&budget), None);
        budget.metadata.annotations =
            Some([(PROTECT_TOTAL_REPLICAS_ANNOTATION.to_owned(), "7".to_owned())].into());
        assert_eq!(protect_total_replicas(&budget), Some(7));
        budget.spec.protect_total_replicas = Some(4);
        assert_eq!(protect_total_replicas(&budget), Some(4));
        budget.spec.protect_total_replicas = None;
        budget.metadata.annotations = Some(
            [(
                PROTECT_TOTAL_REPLICAS_ANNOTATION.to_owned(),
                "zero".to_owned(),
            )]
            .into(),
        );
        assert_eq!(protect_total_replicas(&budget), None);
    }

    #[test]
    fn available_pods_are_active_ready_and_unlabelled() {
        let pod = |phase: &str, ready: &str, labels: serde_json::Value, deleting: bool| -> Pod {
            let mut metadata = json!({"name": "p", "labels": labels});
            if deleting {
                metadata["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
            }
            serde_json::from_value(json!({"metadata": metadata,
                "status": {"phase": phase, "conditions": [{"type": "Ready", "status": ready}]}}))
            .unwrap()
        };
        assert!(is_available(&pod("Running", "True", json!({}), false)));
        assert!(!is_available(&pod("Running", "False", json!({}), false)));
        assert!(!is_available(&pod("Succeeded", "True", json!({}), false)));
        assert!(!is_available(&pod("Running", "True", json!({}), true)));
        assert!(!is_available(&pod(
            "Running",
            "True",
            json!({"unavailable-pod.kruise.io/x": "1"}),
            false
        )));
    }
}
