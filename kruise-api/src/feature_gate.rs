//! Upstream's `--feature-gates` lists, read once for every crate: the entries of a list
//! ([`gate_entries`]), Go's boolean syntax ([`parse_go_bool`]), the one error type ([`FeatureGateError`])
//! and the way a set of switches takes a list ([`FeatureGateSet::apply_feature_gates`]).
//!
//! Each library keeps its own switches as a plain struct (never global state) and implements
//! [`FeatureGateSet`] for it.
//!
//! ```
//! use kruise_api::feature_gate::{FeatureGateError, FeatureGateSet};
//!
//! #[derive(Default)]
//! struct Switches {
//!     rollback: bool,
//! }
//!
//! impl FeatureGateSet for Switches {
//!     const NAMES: &'static [&'static str] = &["CloneSetPartitionRollback"];
//!
//!     fn set_known_gate(&mut self, name: &str, enabled: bool) -> bool {
//!         match name {
//!             "CloneSetPartitionRollback" => self.rollback = enabled,
//!             _ => return false,
//!         }
//!         true
//!     }
//! }
//!
//! let mut switches = Switches::default();
//! switches.apply_feature_gates("CloneSetPartitionRollback=true").unwrap();
//! assert!(switches.rollback);
//! let error = switches.apply_feature_gates("Nope=true").unwrap_err();
//! assert!(matches!(error, FeatureGateError::Unknown { .. }));
//! assert_eq!(error.to_string(), r#"unknown feature gate "Nope" (known: CloneSetPartitionRollback)"#);
//! ```

/// A `--feature-gates` entry that is not understood.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FeatureGateError {
    /// The entry is not `Name=true` or `Name=false`.
    #[error("invalid feature gate setting {entry:?}: expected Name=true or Name=false")]
    Invalid {
        /// The entry given.
        entry: String,
    },
    /// The name is not a gate that changes the decisions it was given to.
    #[error("unknown feature gate {name:?} (known: {})", known.join(", "))]
    Unknown {
        /// The name given.
        name: String,
        /// The gate names that would have been understood.
        known: &'static [&'static str],
    },
}

/// A set of switches named by upstream feature gates.
pub trait FeatureGateSet {
    /// Every gate name [`Self::set_known_gate`] understands.
    const NAMES: &'static [&'static str];

    /// Sets the gate `name`; `false` when the name is not one of [`Self::NAMES`] (nothing changed).
    fn set_known_gate(&mut self, name: &str, enabled: bool) -> bool;

    /// Sets one gate by its upstream name.
    ///
    /// # Errors
    /// [`FeatureGateError::Unknown`] for a name not in [`Self::NAMES`].
    fn set_gate(&mut self, name: &str, enabled: bool) -> Result<(), FeatureGateError> {
        if self.set_known_gate(name, enabled) {
            Ok(())
        } else {
            Err(FeatureGateError::Unknown {
                name: name.to_owned(),
                known: Self::NAMES,
            })
        }
    }

    /// Applies a `--feature-gates` list (`Name=true,Name=false,...`; see [`gate_entries`]), entry by entry.
    ///
    /// # Errors
    /// [`FeatureGateError`] naming the first entry that is malformed or unknown (the entries before it are
    /// applied).
    fn apply_feature_gates(&mut self, list: &str) -> Result<(), FeatureGateError> {
        for entry in gate_entries(list) {
            let (name, enabled) = entry.map_err(|entry| FeatureGateError::Invalid {
                entry: entry.to_owned(),
            })?;
            self.set_gate(name, enabled)?;
        }
        Ok(())
    }
}

/// Go's `strconv.ParseBool`: `1 t T true TRUE True` and `0 f F false FALSE False`, nothing else.
#[must_use]
pub fn parse_go_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// The entries of a `--feature-gates` list (`Name=true,Name=false,...`; spaces around entries, names and
/// values are ignored, empty entries skipped), each as `(name, enabled)` or, when it is not `Name=bool`, the
/// entry itself as the error.
///
/// ```
/// use kruise_api::feature_gate::gate_entries;
///
/// let entries: Vec<_> = gate_entries(" A=true, ,B=0,C").collect();
/// assert_eq!(entries, [Ok(("A", true)), Ok(("B", false)), Err("C")]);
/// ```
pub fn gate_entries(list: &str) -> impl Iterator<Item = Result<(&str, bool), &str>> {
    list.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            entry
                .split_once('=')
                .and_then(|(name, value)| Some((name.trim(), parse_go_bool(value.trim())?)))
                .ok_or(entry)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq)]
    struct Two {
        a: bool,
        b: bool,
    }

    impl FeatureGateSet for Two {
        const NAMES: &'static [&'static str] = &["A", "B"];

        fn set_known_gate(&mut self, name: &str, enabled: bool) -> bool {
            match name {
                "A" => self.a = enabled,
                "B" => self.b = enabled,
                _ => return false,
            }
            true
        }
    }

    #[test]
    fn lists_apply_in_order_and_errors_name_the_entry() {
        let mut two = Two::default();
        two.apply_feature_gates("A=true, B=T, A=0").unwrap();
        assert_eq!(two, Two { a: false, b: true });
        assert_eq!(
            Two::default().apply_feature_gates("A=yes"),
            Err(FeatureGateError::Invalid {
                entry: "A=yes".into()
            })
        );
        let unknown = Two::default().apply_feature_gates("C=true").unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "unknown feature gate \"C\" (known: A, B)"
        );
        assert!(Two::default().apply_feature_gates("").is_ok());
    }

    #[test]
    fn go_booleans() {
        for text in ["1", "t", "T", "true", "TRUE", "True"] {
            assert_eq!(parse_go_bool(text), Some(true), "{text}");
        }
        for text in ["0", "f", "F", "false", "FALSE", "False"] {
            assert_eq!(parse_go_bool(text), Some(false), "{text}");
        }
        for text in ["", "yes", "tRUE", " true", "2"] {
            assert_eq!(parse_go_bool(text), None, "{text:?}");
        }
    }
}
