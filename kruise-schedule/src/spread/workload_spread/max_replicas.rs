//! A subset's `maxReplicas`: an integer, or a percentage of the workload's replicas rounded up (Kubernetes'
//! `GetScaledValueFromIntOrPercent`, as upstream); unset means no limit.
//!
//! ```
//! use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
//! use kruise_api::apps::v1beta1::WorkloadSpreadSubset;
//! use kruise_schedule::spread::workload_spread::max_replicas::subset_limit;
//!
//! let subset = WorkloadSpreadSubset {
//!     name: "a".into(),
//!     max_replicas: Some(IntOrString::String("50%".into())),
//!     ..WorkloadSpreadSubset::default()
//! };
//! assert_eq!(subset_limit("default/ws", &subset, Some(5)).unwrap(), Some(3));
//! assert!(subset_limit("default/ws", &subset, None).is_err(), "a share of unknown replicas");
//! ```

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1beta1::WorkloadSpreadSubset;

use super::WorkloadSpreadError;
use crate::int_or_percent::{Rounding, safe_scaled};

/// The most pods `subset` may hold (`None`: no limit), given the workload's replicas (needed only for a
/// percentage). `spread` (`namespace/name`) names the WorkloadSpread in errors.
///
/// # Errors
/// `maxReplicas` does not parse, is negative, or is a percentage while `workload_replicas` is `None`.
pub fn subset_limit(
    spread: &str,
    subset: &WorkloadSpreadSubset,
    workload_replicas: Option<i32>,
) -> Result<Option<i32>, WorkloadSpreadError> {
    let Some(value) = &subset.max_replicas else {
        return Ok(None);
    };
    let written = match value {
        IntOrString::Int(int) => int.to_string(),
        IntOrString::String(text) => text.clone(),
    };
    let invalid = |reason: String| WorkloadSpreadError::InvalidMaxReplicas {
        spread: spread.to_owned(),
        subset: subset.name.clone(),
        value: written.clone(),
        reason,
    };
    let total = match (value, workload_replicas) {
        (IntOrString::Int(_), _) => 0,
        (IntOrString::String(_), Some(replicas)) => i64::from(replicas.max(0)),
        (IntOrString::String(_), None) => {
            // A malformed string is reported as such, even without replicas.
            safe_scaled(value, 0, Rounding::Up).map_err(|error| invalid(error.to_string()))?;
            return Err(WorkloadSpreadError::UnknownReplicas {
                spread: spread.to_owned(),
                subset: subset.name.clone(),
                value: written.clone(),
            });
        }
    };
    let scaled =
        safe_scaled(value, total, Rounding::Up).map_err(|error| invalid(error.to_string()))?;
    if scaled < 0 {
        return Err(invalid("must not be negative".to_owned()));
    }
    Ok(Some(i32::try_from(scaled).unwrap_or(i32::MAX)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subset(max: Option<IntOrString>) -> WorkloadSpreadSubset {
        WorkloadSpreadSubset {
            name: "a".into(),
            max_replicas: max,
            ..WorkloadSpreadSubset::default()
        }
    }

    #[test]
    fn limits() {
        let table: &[(Option<IntOrString>, Option<i32>, Option<i32>)] = &[
            (None, None, None),
            (Some(IntOrString::Int(4)), None, Some(4)),
            (Some(IntOrString::Int(0)), Some(10), Some(0)),
            (Some(IntOrString::String("50%".into())), Some(5), Some(3)),
            (Some(IntOrString::String("30%".into())), Some(10), Some(3)),
            (Some(IntOrString::String("1%".into())), Some(1), Some(1)),
            (Some(IntOrString::String("100%".into())), Some(0), Some(0)),
        ];
        for (max, replicas, expected) in table {
            assert_eq!(
                subset_limit("ns/ws", &subset(max.clone()), *replicas).unwrap(),
                *expected,
                "{max:?} of {replicas:?}"
            );
        }
    }

    #[test]
    fn bad_values_name_the_field() {
        let error = subset_limit(
            "ns/ws",
            &subset(Some(IntOrString::String("half".into()))),
            Some(4),
        )
        .unwrap_err();
        assert!(
            error.to_string().starts_with(
                "WorkloadSpread ns/ws: spec.subsets[a].maxReplicas: invalid value \"half\""
            ),
            "{error}"
        );
        let error = subset_limit("ns/ws", &subset(Some(IntOrString::Int(-1))), None).unwrap_err();
        assert!(
            error.to_string().contains("must not be negative"),
            "{error}"
        );
        let error = subset_limit(
            "ns/ws",
            &subset(Some(IntOrString::String("10%".into()))),
            None,
        )
        .unwrap_err();
        assert!(
            matches!(error, WorkloadSpreadError::UnknownReplicas { .. }),
            "{error}"
        );
    }
}
