//! The `kruise` binary as the scenarios of its cluster verbs run it: with the suite's kubeconfig (and never
//! `KUBECONFIG`), optionally `-n NAMESPACE`, bounded in time, and judged by its exit code and output.

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use anyhow::{Context as _, Result, ensure};

/// How long one run may take.
const RUN_TIMEOUT: Duration = Duration::from_secs(90);

/// What one run ended with.
pub struct Run {
    /// The exit code (-1 when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// The `kruise` command with `args`, `--kubeconfig=kubeconfig` and, when given, `-n namespace`.
pub fn command(
    kubeconfig: &Path,
    namespace: Option<&str>,
    args: &[&str],
) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_kruise"));
    command.args(args);
    if let Some(namespace) = namespace {
        command.args(["-n", namespace]);
    }
    command
        .arg(format!("--kubeconfig={}", kubeconfig.display()))
        .env_remove("KUBECONFIG")
        .kill_on_drop(true);
    command
}

/// Runs [`command`] to its end.
pub async fn run(kubeconfig: &Path, namespace: Option<&str>, args: &[&str]) -> Result<Run> {
    let output: Output =
        tokio::time::timeout(RUN_TIMEOUT, command(kubeconfig, namespace, args).output())
            .await
            .with_context(|| format!("kruise {args:?} did not finish"))??;
    Ok(Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}

impl Run {
    /// The output of a run that exited 0.
    pub fn succeeded(self, args: &[&str]) -> Result<String> {
        ensure!(
            self.code == 0,
            "kruise {args:?}: exit {}, stdout {:?}, stderr {:?}",
            self.code,
            self.stdout,
            self.stderr
        );
        Ok(self.stdout)
    }

    /// Checks that the run exited `code` with one `error: ...` line containing every one of `words`.
    pub fn refused(&self, args: &[&str], code: i32, words: &[&str]) -> Result<()> {
        ensure!(
            self.code == code
                && self.stderr.starts_with("error: ")
                && words.iter().all(|word| self.stderr.contains(word)),
            "kruise {args:?}: exit {} (expected {code}), stderr {:?} (expected {words:?}), stdout {:?}",
            self.code,
            self.stderr,
            self.stdout
        );
        Ok(())
    }
}
