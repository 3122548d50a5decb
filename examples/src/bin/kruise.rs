//! `kruise`: the offline OpenKruise tool of kruise-rs. See `kruise --help`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use kruise_cli::sidecar::SidecarCommand;
use kruise_cli::{
    cloneset::ClonesetCommand, crds::CrdsArgs, cron::CronArgs, inplace::InplaceCommand,
    rollout::RolloutCommand,
};

/// The offline OpenKruise tool: CRDs, cron previews, in-place update diffs, rollout plans and SidecarSet
/// injection, computed by the kruise-rs libraries without a cluster (only `cloneset watch` reads one).
#[derive(Parser)]
#[command(
    name = "kruise",
    version,
    about = "kruise: what the OpenKruise controllers and webhooks would do, computed offline by the kruise-rs \
             libraries (CRDs, cron schedules, in-place update diffs, rollout plans, SidecarSet injection)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print every OpenKruise CustomResourceDefinition as a YAML stream (ready for `kubectl apply -f -`).
    Crds(CrdsArgs),
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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let (mut stdout, mut stderr) = (std::io::stdout().lock(), std::io::stderr().lock());
    let result = match &cli.command {
        Command::Crds(args) => kruise_cli::crds::run(args, &mut stdout, &mut stderr),
        Command::Cron(args) => kruise_cli::cron::run(
            args,
            chrono::Utc::now(),
            &mut std::io::stdin().lock(),
            &mut stdout,
            &mut stderr,
        ),
        Command::Inplace(command) => kruise_cli::inplace::run(command, &mut stdout, &mut stderr),
        Command::Rollout(command) => {
            kruise_cli::rollout::run(command, k8s_openapi::jiff::Timestamp::now(), &mut stdout)
        }
        Command::Sidecar(command) => {
            kruise_cli::sidecar::run(command, k8s_openapi::jiff::Timestamp::now(), &mut stdout)
        }
        Command::Cloneset(command) => kruise_cli::cloneset::run(command, &mut stdout),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            kruise_cli::report(&error, &mut stderr);
            ExitCode::from(error.exit_code())
        }
    }
}
