//! The fuzz harness of the `resourcesPolicy` expression language, shared by
//! `fuzz/fuzz_targets/resource_expression.rs` and the property and corpus tests
//! (`tests/sidecar/untrusted_input.rs`).
//!
//! Input: the expression text (invalid UTF-8 is replaced). It is parsed for both resources; parsing answers
//! (never panics, never overflows the stack), an error renders, and a parsed expression evaluates to a
//! non-negative value or an error for any value of its variable.

use kruise_sidecar::resource_expression::Expression;

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for variable in ["cpu", "memory"] {
        match Expression::parse(&text, variable) {
            Ok(expression) => {
                for value in [0, 1, 1_000_000_000, i128::from(i64::MAX), i128::MAX, -1] {
                    if let Ok(result) = expression.evaluate(value) {
                        assert!(result >= 0, "{text:?} at {value}: {result}");
                    }
                }
            }
            Err(error) => assert!(!error.to_string().is_empty()),
        }
    }
}
