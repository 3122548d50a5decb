//! Number rules: non-negative integers, and IntOrString values that are a non-negative integer or a
//! percentage (Kubernetes' `ValidateNonnegativeField`, `ValidatePositiveIntOrPercent`,
//! `IsNotMoreThan100Percent`).

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::FieldError;

/// Kubernetes' message for negative values.
const NEGATIVE: &str = "must be greater than or equal to 0";

/// `value` at `path` must not be negative.
pub(crate) fn nonnegative_error(value: i64, path: &str) -> Option<FieldError> {
    (value < 0).then(|| FieldError::invalid(path, value, NEGATIVE))
}

/// An IntOrString as a message shows it.
pub(crate) fn int_or_string_value(value: &IntOrString) -> serde_json::Value {
    match value {
        IntOrString::Int(number) => (*number).into(),
        IntOrString::String(text) => text.as_str().into(),
    }
}

/// The percentage of a string such as `"25%"` (digits followed by `%`, Kubernetes' `IsValidPercent`).
pub(crate) fn percent_of(text: &str) -> Option<i64> {
    let digits = text.strip_suffix('%')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `value` at `path` must be a non-negative integer or a percentage such as `"20%"`.
pub(crate) fn int_or_percent_errors(value: &IntOrString, path: &str) -> Vec<FieldError> {
    match value {
        IntOrString::Int(number) => nonnegative_error(i64::from(*number), path)
            .into_iter()
            .collect(),
        IntOrString::String(text) if percent_of(text).is_some() => Vec::new(),
        IntOrString::String(text) => vec![FieldError::invalid(
            path,
            text.as_str(),
            "must be a non-negative integer or a percentage such as \"20%\" (digits followed by '%')",
        )],
    }
}

/// A percentage at `path` must not be greater than 100%.
pub(crate) fn at_most_100_percent_error(value: &IntOrString, path: &str) -> Option<FieldError> {
    let IntOrString::String(text) = value else {
        return None;
    };
    (percent_of(text)? > 100)
        .then(|| FieldError::invalid(path, text.as_str(), "must not be greater than 100%"))
}
