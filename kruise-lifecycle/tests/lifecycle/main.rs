//! The integration tests of `kruise-lifecycle`, in one test binary (one link instead of one per file). Each
//! module below was a test file of its own; `support` holds the pods, hooks and clocks they share. Run one
//! module with a name filter, e.g. `cargo test -p kruise-lifecycle --test lifecycle transitions`.
//!
//! Proptest writes regression seeds for failures to `tests/proptest-regressions/<module>.txt` (its default
//! `SourceParallel` persistence, resolved from this `main.rs`).

mod support;

mod properties;
mod transitions;
mod untrusted_input;
