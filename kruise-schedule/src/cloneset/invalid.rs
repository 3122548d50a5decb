//! Spec values the planner cannot use as written, and how it reads them instead.
//!
//! The validating webhook (upstream's, and kruise-manager's over [`crate::validation::cloneset`]) refuses
//! most of these before the controller sees them; CloneSets stored without it (while it was away, or with
//! kruise-manager's `--no-webhook`) can still hold them, so the planner finds them, reads each in a safe way and reports it (a controller shows
//! them as a Warning Event and the `InvalidSpec` condition):
//!
//! | value | reading |
//! |---|---|
//! | `replicas` < 0 | [`Reading::Hold`]: upstream's arithmetic would delete every pod |
//! | `partition` that does not parse, or negative | [`Reading::Hold`]: upstream reads it as 0 and would update every pod |
//! | `maxUnavailable`, `maxSurge`, `scaleStrategy.maxUnavailable` that do not parse | [`Reading::Zero`], as upstream: no disruption, no surge, no creation |
//! | those budgets negative | [`Reading::AsWritten`]: a negative budget allows less than 0 does |
//! | `minReadySeconds` < 0 | [`Reading::Zero`] (a ready pod is available at once), as upstream |

use std::fmt;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::int_or_percent::{Rounding, ScaleError, kruise_scaled, legacy_scaled};

/// What the planner does with an invalid value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reading {
    /// It is read as 0, as upstream's controller reads a value it cannot parse.
    Zero,
    /// It is used as written (a negative budget, which allows nothing).
    AsWritten,
    /// The plan holds: it neither scales nor updates the CloneSet until the value is fixed (the status is
    /// still written).
    Hold,
}

impl Reading {
    /// What the reading means for the CloneSet, as a phrase.
    #[must_use]
    pub fn effect(self) -> &'static str {
        match self {
            Self::Zero => "read as 0, as upstream does",
            Self::AsWritten => "used as written, which allows nothing",
            Self::Hold => "the CloneSet is neither scaled nor updated until it is fixed",
        }
    }
}

/// A spec value upstream's validation would refuse or its controller cannot parse, with how the plan read
/// it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidValue {
    /// The field, e.g. `spec.updateStrategy.rollingUpdate.maxUnavailable`.
    pub field: &'static str,
    /// The value as written.
    pub value: String,
    /// What is wrong with it.
    pub reason: String,
    /// How the plan read it.
    pub reading: Reading,
}

impl fmt::Display for InvalidValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: invalid value {:?}: {}; {}",
            self.field,
            self.value,
            self.reason,
            self.reading.effect()
        )
    }
}

impl InvalidValue {
    fn negative(field: &'static str, value: String, reading: Reading) -> Self {
        Self {
            field,
            value,
            reason: "must not be negative".to_owned(),
            reading,
        }
    }

    /// The value that `error` was raised for, read as `reading`.
    pub(crate) fn unparsable(field: &'static str, error: &ScaleError, reading: Reading) -> Self {
        let ScaleError::Invalid { value, reason, .. } = error;
        Self {
            field,
            value: value.clone(),
            reason: (*reason).to_owned(),
            reading,
        }
    }
}

fn written(value: &IntOrString) -> String {
    match value {
        IntOrString::Int(int) => int.to_string(),
        IntOrString::String(text) => text.clone(),
    }
}

/// `spec.replicas` when it is negative.
pub(crate) fn replicas(field: &'static str, replicas: Option<i32>) -> Option<InvalidValue> {
    replicas
        .filter(|replicas| *replicas < 0)
        .map(|replicas| InvalidValue::negative(field, replicas.to_string(), Reading::Hold))
}

/// A partition that does not parse, or that scales to a negative number of pods over `replicas` (upstream's
/// webhook: `GetScaledValueFromIntOrPercent` rounding up, then non-negative).
pub(crate) fn partition(
    field: &'static str,
    partition: &IntOrString,
    replicas: i64,
) -> Option<InvalidValue> {
    match kruise_scaled(partition, replicas, Rounding::Up) {
        Err(error) => Some(InvalidValue::unparsable(field, &error, Reading::Hold)),
        Ok(scaled) if scaled < 0 => Some(InvalidValue::negative(
            field,
            written(partition),
            Reading::Hold,
        )),
        Ok(_) => None,
    }
}

/// A budget written as a negative number or percentage (whatever `replicas` is). Values that do not parse
/// are reported where they are read.
pub(crate) fn negative_budget(field: &'static str, budget: &IntOrString) -> Option<InvalidValue> {
    // Over 100 the scaled value carries the written sign (an integer is used as is).
    let negative = legacy_scaled(budget, 100, Rounding::Down).is_ok_and(|scaled| scaled < 0);
    negative.then(|| InvalidValue::negative(field, written(budget), Reading::AsWritten))
}

/// `spec.minReadySeconds` when it is negative.
pub(crate) fn min_ready_seconds(field: &'static str, seconds: i32) -> Option<InvalidValue> {
    (seconds < 0).then(|| InvalidValue::negative(field, seconds.to_string(), Reading::Zero))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> IntOrString {
        IntOrString::String(text.into())
    }

    #[test]
    fn negative_replicas_hold() {
        assert_eq!(replicas("spec.replicas", Some(3)), None);
        assert_eq!(replicas("spec.replicas", None), None);
        let invalid = replicas("spec.replicas", Some(-1)).unwrap();
        assert_eq!(invalid.reading, Reading::Hold);
        assert_eq!(
            invalid.to_string(),
            "spec.replicas: invalid value \"-1\": must not be negative; \
             the CloneSet is neither scaled nor updated until it is fixed"
        );
    }

    #[test]
    fn partitions_upstream_refuses_hold() {
        let field = "spec.updateStrategy.rollingUpdate.partition";
        assert_eq!(partition(field, &IntOrString::Int(2), 5), None);
        assert_eq!(partition(field, &s("150%"), 5), None, "upstream admits it");
        for value in [IntOrString::Int(-1), s("-20%"), s("abc%"), s("3")] {
            let invalid = partition(field, &value, 5).unwrap();
            assert_eq!(invalid.reading, Reading::Hold, "{value:?}");
            assert_eq!(invalid.value, written(&value));
        }
    }

    #[test]
    fn negative_budgets_are_used_as_written() {
        let field = "spec.updateStrategy.rollingUpdate.maxUnavailable";
        for value in [IntOrString::Int(-5), s("-5"), s("-5%")] {
            let invalid = negative_budget(field, &value).unwrap();
            assert_eq!(invalid.reading, Reading::AsWritten);
            assert!(invalid.to_string().contains("must not be negative"));
        }
        for value in [IntOrString::Int(0), s("150%"), s("abc%")] {
            assert_eq!(negative_budget(field, &value), None, "{value:?}");
        }
    }

    #[test]
    fn unparsable_values_name_field_value_and_reading() {
        let error = legacy_scaled(&s("abc%"), 10, Rounding::Up).unwrap_err();
        let invalid = InvalidValue::unparsable("spec.x", &error, Reading::Zero);
        assert_eq!(
            invalid.to_string(),
            "spec.x: invalid value \"abc%\": not an integer percentage; read as 0, as upstream does"
        );
    }
}
