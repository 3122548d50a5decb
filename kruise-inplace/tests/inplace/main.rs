//! The integration tests of `kruise-inplace`, in one test binary (one link instead of one per file). Each
//! module below was a test file of its own; `support` holds the helpers they share and the fuzz harness of the
//! annotation parsers. Fixtures are read from `tests/fixtures/`. Run one module with a name filter, e.g.
//! `cargo test -p kruise-inplace --test inplace annotation_corpus`.
//!
//! Proptest writes regression seeds for failures to `tests/proptest-regressions/<module>.txt` (its default
//! `SourceParallel` persistence, resolved from this `main.rs`).

mod support;

mod annotation_corpus;
mod apply;
mod calculate;
mod completion;
mod properties;
mod refresh;
mod revision;
mod scenarios;
mod untrusted_input;
