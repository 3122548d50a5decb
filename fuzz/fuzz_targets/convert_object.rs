//! Fuzzes the conversion of untyped objects, what the CRD conversion webhook does with each object of a
//! ConversionReview (the stash annotation included), through the harness shared with kruise-api's
//! `untrusted_input` tests. The review envelope itself is parsed by kruise-manager, which this crate does not
//! build (see Cargo.toml).
#![no_main]

#[path = "../../kruise-api/tests/api/support/conversion_harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::run(data));
