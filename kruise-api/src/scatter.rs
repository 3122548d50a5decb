//! The scatter strategy that spreads updates of pods sharing a label across batches (upstream
//! `apis/apps/v1alpha1/scatter_strategy.go`; applied by `pkg/util/updatesort/scatter_sort.go`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Label `key=value` pairs whose pods should not be updated together. SidecarSet also accepts `value: "*"`,
/// expanded to every value of the key found on the pods.
pub type UpdateScatterStrategy = Vec<UpdateScatterTerm>;

/// One label pair of an [`UpdateScatterStrategy`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct UpdateScatterTerm {
    /// Label key.
    pub key: String,
    /// Label value.
    pub value: String,
}

/// Why a scatter strategy is invalid.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum ScatterStrategyError {
    /// A term has an empty key.
    #[error("scatterStrategy[{index}].key: must not be empty")]
    EmptyKey {
        /// Index of the term.
        index: usize,
    },
    /// Two terms have the same key and value.
    #[error("scatterStrategy[{index}]: duplicated key={key} value={value}")]
    Duplicate {
        /// Index of the second occurrence.
        index: usize,
        /// The key.
        key: String,
        /// The value.
        value: String,
    },
}

/// Checks the rules upstream's webhooks enforce: keys are non-empty and no `key:value` repeats.
///
/// # Errors
/// The first term that breaks a rule.
pub fn validate(strategy: &[UpdateScatterTerm]) -> Result<(), ScatterStrategyError> {
    let mut seen = std::collections::HashSet::with_capacity(strategy.len());
    for (index, term) in strategy.iter().enumerate() {
        if term.key.is_empty() {
            return Err(ScatterStrategyError::EmptyKey { index });
        }
        if !seen.insert((term.key.as_str(), term.value.as_str())) {
            return Err(ScatterStrategyError::Duplicate {
                index,
                key: term.key.clone(),
                value: term.value.clone(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(key: &str, value: &str) -> UpdateScatterTerm {
        UpdateScatterTerm {
            key: key.into(),
            value: value.into(),
        }
    }

    #[test]
    fn validation() {
        assert_eq!(validate(&[]), Ok(()));
        assert_eq!(
            validate(&[term("zone", "a"), term("zone", "b"), term("rack", "a")]),
            Ok(())
        );
        assert_eq!(
            validate(&[term("zone", "a"), term("", "b")]),
            Err(ScatterStrategyError::EmptyKey { index: 1 })
        );
        assert_eq!(
            validate(&[term("zone", "a"), term("rack", "a"), term("zone", "a")]),
            Err(ScatterStrategyError::Duplicate {
                index: 2,
                key: "zone".into(),
                value: "a".into()
            })
        );
        assert_eq!(
            validate(&[term("zone", "")]),
            Ok(()),
            "an empty value is allowed"
        );
    }
}
