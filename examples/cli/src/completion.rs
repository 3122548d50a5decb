//! `kruise completion bash|zsh|fish`: the shell completion script of the whole command line, generated
//! from its definition (so it never lags behind a new subcommand or flag).

use std::io::Write;

use clap::{Args, ValueEnum};
use clap_complete::Shell;

use crate::CliError;

/// The shells a completion script can be printed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    /// Bash (`source <(kruise completion bash)`).
    Bash,
    /// Zsh (a `_kruise` file on `$fpath`).
    Zsh,
    /// Fish (`kruise completion fish | source`).
    Fish,
}

impl From<CompletionShell> for Shell {
    fn from(shell: CompletionShell) -> Self {
        match shell {
            CompletionShell::Bash => Shell::Bash,
            CompletionShell::Zsh => Shell::Zsh,
            CompletionShell::Fish => Shell::Fish,
        }
    }
}

/// `kruise completion` arguments.
#[derive(Args, Debug)]
pub struct CompletionArgs {
    /// The shell to print the script for.
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

/// Writes the completion script of `command` for the chosen shell to `out`. The script completes the
/// program by the name the user types: `kruise`, or `kubectl-kruise` for the plugin binary (kubectl's own
/// completion does not reach into plugins).
///
/// # Errors
/// Writing to `out` failed.
pub fn run(
    args: &CompletionArgs,
    command: &mut clap::Command,
    out: &mut impl Write,
) -> Result<(), CliError> {
    let typed = command
        .get_bin_name()
        .map(|name| name.replace("kubectl ", "kubectl-"))
        .unwrap_or_else(|| command.get_name().to_owned());
    let mut script = Vec::new();
    clap_complete::generate(Shell::from(args.shell), command, typed, &mut script);
    out.write_all(&script)?;
    Ok(())
}
