//! The three IntOrString scalers of upstream. They differ in which strings they accept, and the
//! call sites differ in which one they use; all three use an integer as-is and scale a percentage of `total`
//! in 64-bit floating point, rounding up or down.
//!
//! | scaler | string rule | used by |
//! |---|---|---|
//! | [`legacy_scaled`] | every `%` removed, the rest parsed as an integer, **always a percentage** (`"5"` = 5 %) | CloneSet maxSurge / maxUnavailable / scaleStrategy.maxUnavailable, ASTS maxUnavailable, SidecarSet maxUnavailable, BroadcastJob parallelism |
//! | [`safe_scaled`] | must end in `%`, the rest an integer | Advanced DaemonSet maxUnavailable / maxSurge / partition |
//! | [`kruise_scaled`] | must end in `%`, the rest a decimal number (`"0.01%"`) | partitions ([`crate::partition`]) |
//!
//! Go's `Atoi` and `ParseFloat` accept a leading sign; so do these. Deviation: a percentage that parses to a
//! non-finite number (`"inf%"`, `"NaN%"`) is an error here, where Go converts it to an unspecified integer.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// Which way a scaled percentage rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// `ceil(value × total / 100)`.
    Up,
    /// `floor(value × total / 100)`.
    Down,
}

/// Why an IntOrString could not be scaled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ScaleError {
    /// The string is not in the form this scaler accepts.
    #[error("{field}invalid value {value:?}: {reason}")]
    Invalid {
        /// The field, as `"spec.x: "`, or empty when the caller gave none.
        field: String,
        /// The string given.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl ScaleError {
    /// Names the field the value came from, e.g. `spec.updateStrategy.maxSurge`.
    #[must_use]
    pub fn in_field(self, name: &str) -> Self {
        match self {
            Self::Invalid { value, reason, .. } => Self::Invalid {
                field: format!("{name}: "),
                value,
                reason,
            },
        }
    }
}

fn invalid(value: &str, reason: &'static str) -> ScaleError {
    ScaleError::Invalid {
        field: String::new(),
        value: value.to_owned(),
        reason,
    }
}

fn scale(percent: f64, total: i64, rounding: Rounding) -> i64 {
    #[allow(clippy::cast_precision_loss)]
    let exact = percent * total as f64 / 100.0;
    let rounded = match rounding {
        Rounding::Up => exact.ceil(),
        Rounding::Down => exact.floor(),
    };
    #[allow(clippy::cast_possible_truncation)]
    let scaled = rounded as i64;
    scaled
}

/// Kubernetes' deprecated `GetValueFromIntOrPercent`: an integer as-is; for a string every `%` is removed and
/// the rest parsed as an integer, which is always taken as a percentage.
///
/// # Errors
/// The string (without `%`) is not an integer (`"12.5%"`, `"abc"`).
pub fn legacy_scaled(
    value: &IntOrString,
    total: i64,
    rounding: Rounding,
) -> Result<i64, ScaleError> {
    match value {
        IntOrString::Int(int) => Ok(i64::from(*int)),
        IntOrString::String(text) => {
            let digits = text.replace('%', "");
            let percent: i64 = digits
                .parse()
                .map_err(|_| invalid(text, "not an integer percentage"))?;
            #[allow(clippy::cast_precision_loss)]
            Ok(scale(percent as f64, total, rounding))
        }
    }
}

/// Kubernetes' `GetScaledValueFromIntOrPercent`: an integer as-is; a string must be an integer followed by
/// `%`.
///
/// # Errors
/// The string does not end in `%`, or the rest is not an integer.
pub fn safe_scaled(value: &IntOrString, total: i64, rounding: Rounding) -> Result<i64, ScaleError> {
    match value {
        IntOrString::Int(int) => Ok(i64::from(*int)),
        IntOrString::String(text) => {
            let digits = text
                .strip_suffix('%')
                .ok_or_else(|| invalid(text, "string is not a percentage"))?;
            let percent: i64 = digits
                .parse()
                .map_err(|_| invalid(text, "not an integer percentage"))?;
            #[allow(clippy::cast_precision_loss)]
            Ok(scale(percent as f64, total, rounding))
        }
    }
}

/// Kruise's `GetScaledValueFromIntOrPercent`: an integer as-is; a string must be a decimal number followed by
/// `%` (`"0.01%"` is valid).
///
/// # Errors
/// The string does not end in `%`, or the rest is not a finite decimal number.
pub fn kruise_scaled(
    value: &IntOrString,
    total: i64,
    rounding: Rounding,
) -> Result<i64, ScaleError> {
    match value {
        IntOrString::Int(int) => Ok(i64::from(*int)),
        IntOrString::String(text) => {
            let number = text
                .strip_suffix('%')
                .ok_or_else(|| invalid(text, "string is not a percentage"))?;
            let percent: f64 = number
                .parse()
                .map_err(|_| invalid(text, "not a decimal percentage"))?;
            if !percent.is_finite() {
                return Err(invalid(text, "not a finite percentage"));
            }
            Ok(scale(percent, total, rounding))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> IntOrString {
        IntOrString::String(text.into())
    }

    #[test]
    fn integers_are_used_as_is() {
        for scaler in [legacy_scaled, safe_scaled, kruise_scaled] {
            assert_eq!(scaler(&IntOrString::Int(3), 10, Rounding::Up), Ok(3));
            assert_eq!(
                scaler(&IntOrString::Int(30), 10, Rounding::Down),
                Ok(30),
                "no clamping"
            );
        }
    }

    #[test]
    fn legacy_rules() {
        assert_eq!(legacy_scaled(&s("20%"), 7, Rounding::Up), Ok(2));
        assert_eq!(legacy_scaled(&s("20%"), 7, Rounding::Down), Ok(1));
        assert_eq!(
            legacy_scaled(&s("5"), 100, Rounding::Up),
            Ok(5),
            "a bare number is a percentage"
        );
        assert_eq!(legacy_scaled(&s("5"), 10, Rounding::Up), Ok(1));
        assert_eq!(
            legacy_scaled(&s("%5%"), 100, Rounding::Up),
            Ok(5),
            "every % is removed"
        );
        assert_eq!(legacy_scaled(&s("+50%"), 4, Rounding::Up), Ok(2));
        assert!(legacy_scaled(&s("12.5%"), 8, Rounding::Up).is_err());
        assert!(legacy_scaled(&s("abc"), 8, Rounding::Up).is_err());
        assert!(legacy_scaled(&s(""), 8, Rounding::Up).is_err());
        assert_eq!(legacy_scaled(&s("100%"), 0, Rounding::Up), Ok(0));
    }

    #[test]
    fn safe_rules() {
        assert_eq!(safe_scaled(&s("50%"), 5, Rounding::Up), Ok(3));
        assert_eq!(safe_scaled(&s("50%"), 5, Rounding::Down), Ok(2));
        assert!(
            safe_scaled(&s("5"), 10, Rounding::Up).is_err(),
            "must end in %"
        );
        assert!(
            safe_scaled(&s("5%%"), 10, Rounding::Up).is_err(),
            "only one % is removed"
        );
        assert!(safe_scaled(&s("0.5%"), 10, Rounding::Up).is_err());
    }

    #[test]
    fn kruise_rules() {
        assert_eq!(kruise_scaled(&s("0.01%"), 100, Rounding::Up), Ok(1));
        assert_eq!(kruise_scaled(&s("0.01%"), 100, Rounding::Down), Ok(0));
        assert_eq!(kruise_scaled(&s("33.3%"), 10, Rounding::Up), Ok(4));
        assert!(kruise_scaled(&s("5"), 10, Rounding::Up).is_err());
        assert!(kruise_scaled(&s("inf%"), 10, Rounding::Up).is_err());
        assert!(kruise_scaled(&s("x%"), 10, Rounding::Up).is_err());
    }

    #[test]
    fn errors_name_field_and_value() {
        let error = legacy_scaled(&s("12.5%"), 8, Rounding::Up)
            .unwrap_err()
            .in_field("spec.updateStrategy.maxSurge");
        assert_eq!(
            error.to_string(),
            "spec.updateStrategy.maxSurge: invalid value \"12.5%\": not an integer percentage"
        );
    }
}
