//! Upstream's `CalculatePartitionReplicas` (`pkg/util/tools.go`): how many pods a partition keeps at old revisions.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::int_or_percent::{Rounding, ScaleError, kruise_scaled};

/// The number of pods the partition keeps old, out of `replicas` (an absent `replicas` counts as 1).
///
/// No partition keeps none. A percentage rounds **up**, so any non-zero percentage keeps at least one pod; but
/// when that would keep every pod of a set with more than one replica, a string partition other than exactly
/// `"100%"` keeps one fewer, so that at least one pod updates. The result is clamped to `0..=replicas`.
///
/// # Errors
/// A string partition that is not a percentage (callers upstream then keep the partition at 0).
pub fn partition_replicas(
    partition: Option<&IntOrString>,
    replicas: Option<i32>,
) -> Result<i64, ScaleError> {
    let Some(partition) = partition else {
        return Ok(0);
    };
    let replicas = i64::from(replicas.unwrap_or(1));
    let mut kept = kruise_scaled(partition, replicas, Rounding::Up)?;
    if replicas > 1
        && kept == replicas
        && matches!(partition, IntOrString::String(text) if text != "100%")
    {
        kept = replicas - 1;
    }
    Ok(kept.clamp(0, replicas.max(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Option<IntOrString> {
        Some(IntOrString::String(text.into()))
    }

    #[test]
    fn table() {
        let cases: &[(Option<IntOrString>, Option<i32>, i64)] = &[
            (None, Some(5), 0),
            (Some(IntOrString::Int(2)), Some(5), 2),
            (Some(IntOrString::Int(9)), Some(5), 5),
            (Some(IntOrString::Int(5)), Some(5), 5),
            (Some(IntOrString::Int(-1)), Some(5), 0),
            (s("40%"), Some(5), 2),
            (s("41%"), Some(5), 3),
            (s("1%"), Some(5), 1),
            (s("0%"), Some(5), 0),
            (s("99%"), Some(5), 4),
            (s("99.99%"), Some(100), 99),
            (s("100%"), Some(5), 5),
            (s("100.0%"), Some(5), 4),
            // Upstream quirk: the "one fewer" rule only applies when the scaled value equals replicas exactly;
            // 150% of 5 is 8, which is then clamped to 5 and keeps every pod old.
            (s("150%"), Some(5), 5),
            (s("99%"), Some(1), 1),
            (s("50%"), None, 1),
            (s("50%"), Some(0), 0),
        ];
        for (partition, replicas, expected) in cases {
            assert_eq!(
                partition_replicas(partition.as_ref(), *replicas),
                Ok(*expected),
                "{partition:?} of {replicas:?}"
            );
        }
    }

    #[test]
    fn non_percent_strings_are_errors() {
        assert!(partition_replicas(s("3").as_ref(), Some(5)).is_err());
    }
}
