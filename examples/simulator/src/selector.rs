//! Label selectors written the way `kubectl -l` takes them, for failure injection flags: comma-separated
//! `key=value`, `key==value`, `key!=value`, `key` (exists) and `!key` (does not exist).
//!
//! ```
//! use std::collections::BTreeMap;
//! use kruise_simulator::selector::parse;
//!
//! let selector = parse("app=demo,!canary").unwrap();
//! let labels = BTreeMap::from([("app".to_owned(), "demo".to_owned())]);
//! assert!(kruise_api::label_selector::matches(&selector, &labels).unwrap());
//! assert!(parse("app=demo,=x").is_err());
//! ```

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use kruise_api::label_selector::{SelectorError, validate};

/// Why a selector could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseSelectorError {
    /// A term has no key.
    #[error("label selector {selector:?}: term {term:?} has no key")]
    MissingKey {
        /// The whole selector.
        selector: String,
        /// The offending term.
        term: String,
    },
    /// A key or value is not valid.
    #[error("label selector {selector:?}: {source}")]
    Invalid {
        /// The whole selector.
        selector: String,
        /// What is wrong.
        #[source]
        source: SelectorError,
    },
}

/// Parses the selector; the empty string selects everything.
///
/// # Errors
/// A term without a key, or an invalid key or value.
pub fn parse(text: &str) -> Result<LabelSelector, ParseSelectorError> {
    let mut match_labels = BTreeMap::new();
    let mut expressions = Vec::new();
    let requirement =
        |key: &str, operator: &str, values: Option<Vec<String>>| LabelSelectorRequirement {
            key: key.to_owned(),
            operator: operator.to_owned(),
            values,
        };
    for term in text
        .split(',')
        .map(str::trim)
        .filter(|term| !term.is_empty())
    {
        let (key, parsed) = if let Some((key, value)) = term.split_once("!=") {
            let key = key.trim();
            (
                key,
                Some(requirement(
                    key,
                    "NotIn",
                    Some(vec![value.trim().to_owned()]),
                )),
            )
        } else if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
            match_labels.insert(key.trim().to_owned(), value.trim().to_owned());
            (key.trim(), None)
        } else if let Some(key) = term.strip_prefix('!') {
            (
                key.trim(),
                Some(requirement(key.trim(), "DoesNotExist", None)),
            )
        } else {
            (term, Some(requirement(term, "Exists", None)))
        };
        if key.is_empty() {
            return Err(ParseSelectorError::MissingKey {
                selector: text.to_owned(),
                term: term.to_owned(),
            });
        }
        expressions.extend(parsed);
    }
    let selector = LabelSelector {
        match_labels: (!match_labels.is_empty()).then_some(match_labels),
        match_expressions: (!expressions.is_empty()).then_some(expressions),
    };
    validate(&selector).map_err(|source| ParseSelectorError::Invalid {
        selector: text.to_owned(),
        source,
    })?;
    Ok(selector)
}

#[cfg(test)]
mod tests {
    use kruise_api::label_selector::matches;

    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn every_term_kind_matches_like_kubectl() {
        let selector = parse("app==demo, tier != db, canary, !legacy").unwrap();
        assert!(matches(&selector, &labels(&[("app", "demo"), ("canary", "")])).unwrap());
        assert!(
            !matches(
                &selector,
                &labels(&[("app", "demo"), ("canary", ""), ("tier", "db")])
            )
            .unwrap()
        );
        assert!(
            !matches(
                &selector,
                &labels(&[("app", "demo"), ("canary", ""), ("legacy", "1")])
            )
            .unwrap()
        );
        assert!(!matches(&selector, &labels(&[("app", "demo")])).unwrap());
        assert!(matches(&parse("").unwrap(), &labels(&[])).unwrap());
    }

    #[test]
    fn bad_terms_are_errors() {
        assert!(matches!(
            parse("=x"),
            Err(ParseSelectorError::MissingKey { .. })
        ));
        assert!(matches!(
            parse("!"),
            Err(ParseSelectorError::MissingKey { .. })
        ));
        assert!(matches!(
            parse("bad key=x"),
            Err(ParseSelectorError::Invalid { .. })
        ));
        assert!(matches!(
            parse("k=not valid"),
            Err(ParseSelectorError::Invalid { .. })
        ));
    }
}
