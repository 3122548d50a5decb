//! Fuzzes the `resourcesPolicy` expression language of SidecarSets through the harness shared with
//! kruise-sidecar's `untrusted_input` tests.
#![no_main]

#[path = "../../kruise-sidecar/tests/sidecar/support/expression_harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::run(data));
