//! Go `encoding/json` `omitempty` for serde.
//!
//! Upstream types use non-pointer fields with `omitempty` (`paused bool`, `minReadySeconds int32`,
//! `podsToDelete []string`, ...). Go cannot tell "absent" from "zero" for those, so neither do we: such fields
//! are plain Rust values with `#[serde(default, skip_serializing_if = "crate::omitempty::is_zero")]`, which
//! reads an absent field as zero and leaves a zero value out, exactly like Go.

/// Whether a value is its type's zero value (Go's `omitempty` test): `false`, `0`, `""`, an empty list or map.
#[must_use]
pub fn is_zero<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

#[cfg(test)]
mod tests {
    use super::is_zero;
    use std::collections::BTreeMap;

    #[test]
    fn zero_values() {
        assert!(is_zero(&false));
        assert!(is_zero(&0_i32));
        assert!(is_zero(&String::new()));
        assert!(is_zero(&Vec::<String>::new()));
        assert!(is_zero(&BTreeMap::<String, String>::new()));
        assert!(!is_zero(&true));
        assert!(!is_zero(&-1_i64));
        assert!(!is_zero(&vec![String::new()]));
    }
}
