//! Inputs for the property tests over untrusted input (`crate::untrusted_input` and the webhook modules' own
//! tests): edits of valid texts, arbitrary JSON values, and the number of cases (`KRUISE_FUZZ_CASES`).

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)] // test code

pub mod fuzz_cases;
pub mod json_values;
pub mod text_edits;
