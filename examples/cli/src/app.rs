//! The `kruise` program: its subcommands and how it runs them. The `kruise` and `kubectl-kruise` binaries
//! are both this program; run as `kubectl-kruise` (a kubectl plugin, `kubectl kruise ...`) it names itself
//! `kubectl kruise` in its help.

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::cloneset::ClonesetCommand;
use crate::completion::CompletionArgs;
use crate::crds::CrdsArgs;
use crate::cron::CronArgs;
use crate::inplace::InplaceCommand;
use crate::install::InstallArgs;
use crate::live::create_job::CreateJobArgs;
use crate::live::set_verbs::{SetEnvArgs, SetResourcesArgs};
use crate::live::verbs::{ScaledownArgs, SetImageArgs};
use crate::rollout::RolloutCommand;
use crate::sidecar::SidecarCommand;

/// The file name kubectl finds the plugin by.
pub const PLUGIN_BINARY: &str = "kubectl-kruise";

/// The offline OpenKruise tool: CRDs, cron previews, in-place update diffs, rollout plans and SidecarSet
/// injection, computed by the kruise-rs libraries without a cluster (only `cloneset watch` reads one).
#[derive(Parser)]
#[command(
    name = "kruise",
    version,
    about = "kruise: what the OpenKruise controllers and webhooks would do, computed offline by the kruise-rs \
             libraries (CRDs, cron schedules, in-place update diffs, rollout plans, SidecarSet injection)"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print every OpenKruise CustomResourceDefinition as a YAML stream (ready for `kubectl apply -f -`).
    Crds(CrdsArgs),
    /// Print the manifests that install kruise-manager and kruise-daemon (`kruise install | kubectl apply
    /// -f -`); flags mirror the Helm chart's values.
    Install(InstallArgs),
    /// Cron schedules as the AdvancedCronJob controller reads them (robfig/cron v3).
    Cron(CronArgs),
    /// In-place updates: what an update from one revision to another changes in a pod, or why it recreates.
    #[command(subcommand)]
    Inplace(InplaceCommand),
    /// Rollouts: what the CloneSet, Advanced StatefulSet, Advanced DaemonSet or SidecarSet controller would
    /// do next to the workload and its pods.
    #[command(subcommand)]
    Rollout(RolloutCommand),
    /// SidecarSets: what the pod webhook injects into a pod, and SidecarSet hashes.
    #[command(subcommand)]
    Sidecar(SidecarCommand),
    /// CloneSets on a cluster (uses KUBECONFIG): `watch` follows a rollout.
    #[command(subcommand)]
    Cloneset(ClonesetCommand),
    /// Change a workload on the cluster: `set image KIND/NAME CONTAINER=IMAGE...`.
    #[command(subcommand)]
    Set(SetCommand),
    /// Delete chosen pods of a CloneSet on the cluster and scale it down by them: `scaledown cloneset/NAME
    /// --pods a,b`.
    Scaledown(ScaledownArgs),
    /// Create an object on the cluster: `create job NAME --from=advancedcronjob/ACJ` runs an AdvancedCronJob
    /// now.
    #[command(subcommand)]
    Create(CreateCommand),
    /// Print a shell completion script: `source <(kruise completion bash)`, `kruise completion zsh >
    /// "${fpath[1]}/_kruise"`, `kruise completion fish | source`.
    Completion(CompletionArgs),
}

/// Subcommands of `kruise set`.
#[derive(Subcommand)]
enum SetCommand {
    /// New images for the pod template's containers of a CloneSet, Advanced StatefulSet or Advanced
    /// DaemonSet (`*=IMAGE` for all).
    Image(SetImageArgs),
    /// Set (`NAME=VALUE`), remove (`NAME-`) or list (`--list`) environment variables of the pod template's
    /// containers, as `kubectl set env` does.
    Env(SetEnvArgs),
    /// Set resource limits and requests of the pod template's containers, as `kubectl set resources` does.
    Resources(SetResourcesArgs),
}

/// Subcommands of `kruise create`.
#[derive(Subcommand)]
enum CreateCommand {
    /// Create the Job (or BroadcastJob, ImageListPullJob) an AdvancedCronJob's template makes, now:
    /// `create job NAME --from=advancedcronjob/ACJ`.
    Job(CreateJobArgs),
}

/// The name the program was started by: `kubectl kruise` for the plugin binary, else `kruise`.
#[must_use]
pub fn display_name(argv0: Option<&OsString>) -> &'static str {
    let started_as = argv0
        .and_then(|path| Path::new(path).file_stem())
        .and_then(|stem| stem.to_str());
    if started_as == Some(PLUGIN_BINARY) {
        "kubectl kruise"
    } else {
        "kruise"
    }
}

/// The whole command line definition, named as the program was started.
#[must_use]
pub fn command(display_name: &'static str) -> clap::Command {
    Cli::command().bin_name(display_name)
}

/// Runs the program with the process's arguments and standard streams.
#[must_use]
pub fn main() -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let name = display_name(argv.first());
    let matches = command(name).get_matches_from(&argv);
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    let (mut stdout, mut stderr) = (std::io::stdout().lock(), std::io::stderr().lock());
    let result = match &cli.command {
        Command::Crds(args) => crate::crds::run(args, &mut stdout, &mut stderr),
        Command::Install(args) => crate::install::run(args, &mut stdout, &mut stderr),
        Command::Cron(args) => crate::cron::run(
            args,
            chrono::Utc::now(),
            &mut std::io::stdin().lock(),
            &mut stdout,
            &mut stderr,
        ),
        Command::Inplace(command) => crate::inplace::run(command, &mut stdout, &mut stderr),
        Command::Rollout(command) => {
            crate::rollout::run(command, k8s_openapi::jiff::Timestamp::now(), &mut stdout)
        }
        Command::Sidecar(command) => {
            crate::sidecar::run(command, k8s_openapi::jiff::Timestamp::now(), &mut stdout)
        }
        Command::Cloneset(command) => crate::cloneset::run(command, &mut stdout),
        Command::Set(SetCommand::Image(args)) => crate::live::verbs::set_image(args, &mut stdout),
        Command::Scaledown(args) => crate::live::verbs::scaledown(args, &mut stdout),
        Command::Set(SetCommand::Env(args)) => crate::live::set_verbs::set_env(args, &mut stdout),
        Command::Set(SetCommand::Resources(args)) => {
            crate::live::set_verbs::set_resources(args, &mut stdout)
        }
        Command::Create(CreateCommand::Job(args)) => {
            crate::live::create_job::create_job(args, &mut stdout)
        }
        Command::Completion(args) => crate::completion::run(args, &mut command(name), &mut stdout),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            crate::report(&error, &mut stderr);
            ExitCode::from(error.exit_code())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::display_name;

    #[test]
    fn the_plugin_binary_names_itself_as_kubectl_does() {
        let name = |path: &str| display_name(Some(&OsString::from(path)));
        assert_eq!(name("/usr/local/bin/kubectl-kruise"), "kubectl kruise");
        assert_eq!(name("kubectl-kruise"), "kubectl kruise");
        assert_eq!(name("/usr/local/bin/kruise"), "kruise");
        assert_eq!(name("kubectl-kruise-old"), "kruise");
        assert_eq!(display_name(None), "kruise");
    }

    #[test]
    fn the_command_line_definition_is_consistent() {
        super::command("kruise").debug_assert();
    }
}
