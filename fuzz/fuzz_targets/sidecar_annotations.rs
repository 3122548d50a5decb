//! Fuzzes the SidecarSet annotation parsers and the entry points that read them (injection, the planner, the
//! merge patch) through the harness shared with kruise-sidecar's `annotation_corpus` test.
#![no_main]

#[path = "../../kruise-sidecar/tests/sidecar/support/annotation_harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::run(data));
