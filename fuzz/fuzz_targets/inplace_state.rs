//! Fuzzes the in-place annotation parsers and the entry points that read them (`refresh`, the completion
//! check) through the harness shared with kruise-inplace's `annotation_corpus` test.
#![no_main]

#[path = "../../kruise-inplace/tests/inplace/support/annotation_harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::run(data));
