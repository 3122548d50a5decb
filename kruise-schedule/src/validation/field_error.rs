//! One broken rule, in the form of Kubernetes' `field.Error` (`k8s.io/apimachinery/pkg/util/validation/field`):
//! the field path, what kind of problem, the value where it helps, and a detail.
//!
//! ```
//! use kruise_schedule::validation::FieldError;
//!
//! let error = FieldError::invalid("spec.updateStrategy.maxUnavailable", "150%", "must not be greater than 100%");
//! assert_eq!(
//!     error.to_string(),
//!     "spec.updateStrategy.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%"
//! );
//! ```

use std::fmt;

use serde_json::Value;

/// What kind of problem a [`FieldError`] reports (Kubernetes' `field.ErrorType`).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// The value is not acceptable (`Invalid value: <value>`).
    Invalid(Value),
    /// A required value is missing (`Required value`).
    Required,
    /// The field may not be set or changed (`Forbidden`).
    Forbidden,
    /// The value is not one of a fixed set (`Unsupported value: <value>`; the detail lists the set).
    NotSupported(Value),
    /// The value appears twice in a list (`Duplicate value: <value>`).
    Duplicate(Value),
}

/// One broken rule; displayed as Kubernetes prints field errors (values as compact JSON, so strings are
/// quoted), e.g.
/// `spec.selector: Invalid value: {"matchLabels":{"app":"b"}}: field is immutable`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub struct FieldError {
    /// The field path (`spec.updateStrategy.partition`, `spec.template.spec.containers[0].name`).
    pub field: String,
    /// What kind of problem, with the value.
    pub problem: Problem,
    /// What is wrong, in words (may be empty).
    pub detail: String,
}

impl FieldError {
    /// `field: Invalid value: <value>: detail`.
    pub fn invalid(
        field: impl Into<String>,
        value: impl Into<Value>,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(field, Problem::Invalid(value.into()), detail)
    }

    /// `field: Required value: detail`.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(field, Problem::Required, detail)
    }

    /// `field: Forbidden: detail`.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(field, Problem::Forbidden, detail)
    }

    /// `field: Unsupported value: <value>: supported values: "a", "b"`.
    pub fn not_supported(
        field: impl Into<String>,
        value: impl Into<Value>,
        supported: &[&str],
    ) -> Self {
        let listed: Vec<String> = supported.iter().map(|value| format!("{value:?}")).collect();
        Self::new(
            field,
            Problem::NotSupported(value.into()),
            format!("supported values: {}", listed.join(", ")),
        )
    }

    /// `field: Duplicate value: <value>`.
    pub fn duplicate(field: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::new(field, Problem::Duplicate(value.into()), "")
    }

    /// `field: Invalid value: <value>: field is immutable` (Kubernetes' `ValidateImmutableField`).
    pub fn immutable(field: impl Into<String>, value: impl Into<Value>) -> Self {
        Self::invalid(field, value, "field is immutable")
    }

    fn new(field: impl Into<String>, problem: Problem, detail: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            problem,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}: ", self.field)?;
        match &self.problem {
            Problem::Invalid(value) => write!(formatter, "Invalid value: {value}")?,
            Problem::Required => formatter.write_str("Required value")?,
            Problem::Forbidden => formatter.write_str("Forbidden")?,
            Problem::NotSupported(value) => {
                write!(formatter, "Unsupported value: {value}")?;
            }
            Problem::Duplicate(value) => write!(formatter, "Duplicate value: {value}")?,
        }
        if !self.detail.is_empty() {
            write!(formatter, ": {}", self.detail)?;
        }
        Ok(())
    }
}
