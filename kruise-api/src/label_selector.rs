//! Label selectors: validation and matching with Kubernetes' rules (`metav1.LabelSelectorAsSelector`).
//!
//! A selector with neither `matchLabels` nor `matchExpressions` matches everything; callers that treat an
//! absent or empty selector specially (SidecarSet: matches nothing) check [`is_empty`] first.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

/// Why a label selector is invalid.
#[derive(Debug, thiserror::Error, PartialEq, Eq, Clone)]
#[non_exhaustive]
pub enum SelectorError {
    /// A key is not a qualified name (`[prefix/]name`).
    #[error("invalid label key {key:?}: {reason}")]
    InvalidKey {
        /// The key.
        key: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A value is not a valid label value.
    #[error("invalid label value {value:?} for key {key:?}: {reason}")]
    InvalidValue {
        /// The key.
        key: String,
        /// The value.
        value: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An expression uses an operator other than In, NotIn, Exists, DoesNotExist.
    #[error("matchExpressions key {key:?}: {operator:?} is not a valid label selector operator")]
    InvalidOperator {
        /// The key.
        key: String,
        /// The operator.
        operator: String,
    },
    /// In/NotIn without values, or Exists/DoesNotExist with values.
    #[error("matchExpressions key {key:?}: operator {operator} {reason}")]
    InvalidValues {
        /// The key.
        key: String,
        /// The operator.
        operator: String,
        /// What is wrong with the values.
        reason: &'static str,
    },
}

/// Whether the selector has no requirement at all.
#[must_use]
pub fn is_empty(selector: &LabelSelector) -> bool {
    selector
        .match_labels
        .as_ref()
        .is_none_or(BTreeMap::is_empty)
        && selector
            .match_expressions
            .as_ref()
            .is_none_or(Vec::is_empty)
}

/// Checks keys, values and operators.
///
/// # Errors
/// The first invalid key, value or operator.
pub fn validate(selector: &LabelSelector) -> Result<(), SelectorError> {
    for (key, value) in selector.match_labels.iter().flatten() {
        validate_key(key)?;
        validate_value(key, value)?;
    }
    for requirement in selector.match_expressions.iter().flatten() {
        validate_requirement(requirement)?;
    }
    Ok(())
}

/// Whether the labels satisfy the selector. An empty selector matches everything.
///
/// # Errors
/// The selector is invalid (see [`validate`]).
pub fn matches(
    selector: &LabelSelector,
    labels: &BTreeMap<String, String>,
) -> Result<bool, SelectorError> {
    validate(selector)?;
    let labels_match = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(key, value)| labels.get(key) == Some(value));
    let expressions_match = selector
        .match_expressions
        .iter()
        .flatten()
        .all(|requirement| {
            let present = labels.get(&requirement.key);
            let values = requirement.values.as_deref().unwrap_or_default();
            match requirement.operator.as_str() {
                "In" => present.is_some_and(|value| values.contains(value)),
                "NotIn" => present.is_none_or(|value| !values.contains(value)),
                "Exists" => present.is_some(),
                _ => present.is_none(),
            }
        });
    Ok(labels_match && expressions_match)
}

fn validate_requirement(requirement: &LabelSelectorRequirement) -> Result<(), SelectorError> {
    let key = &requirement.key;
    validate_key(key)?;
    let values = requirement.values.as_deref().unwrap_or_default();
    let invalid = |reason| SelectorError::InvalidValues {
        key: key.clone(),
        operator: requirement.operator.clone(),
        reason,
    };
    match requirement.operator.as_str() {
        "In" | "NotIn" if values.is_empty() => return Err(invalid("needs at least one value")),
        "Exists" | "DoesNotExist" if !values.is_empty() => return Err(invalid("takes no values")),
        "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
        other => {
            return Err(SelectorError::InvalidOperator {
                key: key.clone(),
                operator: other.to_owned(),
            });
        }
    }
    for value in values {
        validate_value(key, value)?;
    }
    Ok(())
}

/// Checks a label key: an optional DNS-subdomain prefix and `/`, then a name of at most 63 characters.
///
/// # Errors
/// What is wrong with the key.
pub fn validate_key(key: &str) -> Result<(), SelectorError> {
    let invalid = |reason| SelectorError::InvalidKey {
        key: key.to_owned(),
        reason,
    };
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Err(invalid("prefix part must not be empty"));
        }
        if prefix.len() > 253 {
            return Err(invalid("prefix part must be no more than 253 characters"));
        }
        if !prefix.split('.').all(is_dns_label) {
            return Err(invalid("prefix part must be a lowercase DNS subdomain"));
        }
    }
    if name.is_empty() {
        return Err(invalid("name part must not be empty"));
    }
    if name.len() > 63 {
        return Err(invalid("name part must be no more than 63 characters"));
    }
    if !is_label_name(name) {
        return Err(invalid(
            "name part must consist of alphanumerics, '-', '_' or '.', and start and end with an alphanumeric",
        ));
    }
    Ok(())
}

fn validate_value(key: &str, value: &str) -> Result<(), SelectorError> {
    let invalid = |reason| SelectorError::InvalidValue {
        key: key.to_owned(),
        value: value.to_owned(),
        reason,
    };
    if value.len() > 63 {
        return Err(invalid("must be no more than 63 characters"));
    }
    if !value.is_empty() && !is_label_name(value) {
        return Err(invalid(
            "must consist of alphanumerics, '-', '_' or '.', and start and end with an alphanumeric",
        ));
    }
    Ok(())
}

fn is_label_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let edge_ok = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
    edge_ok(bytes.first())
        && edge_ok(bytes.last())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn is_dns_label(label: &str) -> bool {
    let bytes = label.as_bytes();
    let edge_ok = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    label.len() <= 63
        && edge_ok(bytes.first())
        && edge_ok(bytes.last())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn expression(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
        LabelSelectorRequirement {
            key: key.into(),
            operator: operator.into(),
            values: (!values.is_empty()).then(|| values.iter().map(|v| (*v).to_owned()).collect()),
        }
    }

    #[test]
    fn empty_selector_matches_everything() {
        let selector = LabelSelector::default();
        assert!(is_empty(&selector));
        assert_eq!(matches(&selector, &labels(&[("a", "b")])), Ok(true));
        let empty_maps = LabelSelector {
            match_labels: Some(BTreeMap::new()),
            match_expressions: Some(vec![]),
        };
        assert!(is_empty(&empty_maps));
    }

    #[test]
    fn operators() {
        let pod = labels(&[("app", "nginx"), ("tier", "web")]);
        let cases = [
            (expression("app", "In", &["nginx", "redis"]), true),
            (expression("app", "In", &["redis"]), false),
            (expression("app", "NotIn", &["redis"]), true),
            (expression("missing", "NotIn", &["x"]), true),
            (expression("app", "NotIn", &["nginx"]), false),
            (expression("tier", "Exists", &[]), true),
            (expression("missing", "Exists", &[]), false),
            (expression("missing", "DoesNotExist", &[]), true),
            (expression("app", "DoesNotExist", &[]), false),
        ];
        for (requirement, expected) in cases {
            let selector = LabelSelector {
                match_expressions: Some(vec![requirement.clone()]),
                ..Default::default()
            };
            assert_eq!(matches(&selector, &pod), Ok(expected), "{requirement:?}");
        }
        let both = LabelSelector {
            match_labels: Some(labels(&[("app", "nginx")])),
            match_expressions: Some(vec![expression("tier", "In", &["db"])]),
        };
        assert_eq!(
            matches(&both, &pod),
            Ok(false),
            "all requirements must hold"
        );
    }

    #[test]
    fn invalid_selectors_are_errors() {
        let bad = [
            LabelSelector {
                match_expressions: Some(vec![expression("a", "Near", &[])]),
                ..Default::default()
            },
            LabelSelector {
                match_expressions: Some(vec![expression("a", "In", &[])]),
                ..Default::default()
            },
            LabelSelector {
                match_expressions: Some(vec![expression("a", "Exists", &["x"])]),
                ..Default::default()
            },
            LabelSelector {
                match_labels: Some(labels(&[("-bad", "x")])),
                ..Default::default()
            },
            LabelSelector {
                match_labels: Some(labels(&[("ok", "bad value")])),
                ..Default::default()
            },
            LabelSelector {
                match_labels: Some(labels(&[("Upper.Case/name", "x")])),
                ..Default::default()
            },
        ];
        for selector in bad {
            assert!(
                matches(&selector, &BTreeMap::new()).is_err(),
                "{selector:?}"
            );
        }
    }

    #[test]
    fn keys() {
        for good in ["app", "apps.kruise.io/state", "a_b.c-d", "x/y", "A9"] {
            assert_eq!(validate_key(good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "/x",
            "x/",
            "-a",
            "a-",
            &"a".repeat(64),
            "a b",
            "UPPER.io/x",
        ] {
            assert!(validate_key(bad).is_err(), "{bad}");
        }
    }
}
