//! The inputs of kruise-rs's property tests over untrusted input, shared by every crate's `untrusted_input`
//! tests: edits of valid texts ([`text_edits`]), arbitrary JSON values and replacements in valid objects
//! ([`json_values`]), and the number of cases each property runs ([`fuzz_cases`], `KRUISE_FUZZ_CASES`).
//! A dev-dependency only; not published.

pub mod fuzz_cases;
pub mod json_values;
pub mod text_edits;
