//! The integration tests of `kruise-api`, in one test binary (one link instead of one per file). Each module
//! below was a test file of its own; `support` holds the code they share (values generated from CRD schemas,
//! the "nothing lost" comparison, the structural-schema checker). Fixtures are read from `tests/fixtures/`. Run
//! one module with a name filter, e.g. `cargo test -p kruise-api --test api conversion_roundtrip`.

mod support;

mod conversion_roundtrip;
mod crds;
mod fixtures;
mod untrusted_input;
