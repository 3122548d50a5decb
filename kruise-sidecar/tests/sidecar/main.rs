//! The integration tests of `kruise-sidecar`, in one test binary (one link instead of one per file). Each
//! module below was a test file of its own; `support` holds the builders they share and the fuzz harness of
//! the annotation parsers. Fixtures are read from `tests/fixtures/`. Run one module with a name filter, e.g.
//! `cargo test -p kruise-sidecar --test sidecar annotation_corpus`.
//!
//! Proptest writes regression seeds for failures to `tests/proptest-regressions/<module>.txt` (its default
//! `SourceParallel` persistence, resolved from this `main.rs`).

mod support;

mod admission_patch_json;
mod annotation_corpus;
mod hash;
mod hot_upgrade;
mod injection;
mod matching;
mod metadata;
mod patch_from_injection;
mod patch_text;
mod properties;
mod resources_policy;
mod revisions;
mod untrusted_input;
mod upgrade;
