//! The `kruise` command-line tool, run as a binary: exit codes, standard input, output formats, one-line
//! errors, shell completion and the `kubectl-kruise` plugin binary.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::needless_pass_by_value
)] // test code

mod completion;
mod inplace;
mod rollout;
mod rollout_workloads;
mod run;
mod sidecar;
