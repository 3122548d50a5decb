//! The `kruise` command-line tool: offline unless a subcommand says otherwise.
//!
//! Output is plain text (YAML for objects) by default and `-o json` / `-o yaml` for tools. Exit code 0 on
//! success, 2 on invalid input with a one-line message on standard error that names the problem.

pub mod app;
pub mod cloneset;
pub mod completion;
pub mod crds;
pub mod cron;
pub mod inplace;
pub mod input;
pub mod install;
pub mod live;
pub mod output;
pub mod rollout;
pub mod sidecar;

use std::io::Write;

/// Why a subcommand failed: bad input (exit code 2) or a failure while doing the work (exit code 1).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// The input (flags, files, objects) is invalid.
    #[error("{0}")]
    Invalid(String),
    /// Reading the input failed.
    #[error(transparent)]
    Input(#[from] input::InputError),
    /// Writing the output failed.
    #[error("writing output: {0}")]
    Output(#[from] std::io::Error),
    /// A subcommand that talks to a cluster failed there.
    #[error("{0}")]
    Cluster(String),
}

impl CliError {
    /// The process exit code for this error: 2 for invalid input, 1 otherwise.
    #[must_use]
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Invalid(_) | Self::Input(_) => 2,
            Self::Output(_) | Self::Cluster(_) => 1,
        }
    }
}

/// Prints an error as the one line the CLI contract promises.
pub fn report(error: &CliError, stderr: &mut impl Write) {
    let message = error.to_string().replace('\n', " ");
    // Nothing sensible is left to do when standard error itself cannot be written.
    let _ = writeln!(stderr, "error: {message}");
}
