//! `kruise rollout plan`: what a workload controller would do next to a workload and its pods.
//!
//! The `-f` object decides the planner: an `apps.kruise.io` CloneSet, Advanced StatefulSet, Advanced DaemonSet
//! (which needs the cluster's Nodes in `--pods`) or SidecarSet, each `v1alpha1` or `v1beta1` (converted to the
//! v1beta1 hub); one module per kind. The `--pods` file holds pods as a YAML/JSON stream or a `List`, plus the
//! claims, ControllerRevisions and Nodes the planner reads, as `kubectl get pods,pvc,controllerrevisions,nodes
//! -o yaml` prints them.

mod cloneset;
mod daemonset;
mod decode;
mod owned;
mod planned_action;
mod sidecarset;
mod statefulset;
mod template_revision;
mod workload;

use std::io::Write;

use k8s_openapi::jiff::Timestamp;
use serde_json::Value;

use super::CliError;
use owned::read_owned;
use workload::{Workload, read_workload};

/// Output format of `kruise rollout plan`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum PlanFormat {
    /// One line per action with the rule that chose it, then the counts and the status.
    #[default]
    Text,
    /// One JSON object: the workload (`cloneset`, `statefulset`, `daemonset` or `sidecarset`: its key), the
    /// actions (`kind`, `pod`, `rule`, `reason`, …), the counts, `status` and `error`; see docs/cli.md.
    Json,
}

/// Arguments of `kruise rollout plan`.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct PlanArgs {
    /// The workload: an apps.kruise.io CloneSet, StatefulSet, DaemonSet or SidecarSet (v1alpha1 or v1beta1),
    /// a YAML/JSON file, or `-` for standard input.
    #[arg(short = 'f', long = "filename", value_name = "WORKLOAD")]
    pub workload: String,
    /// Its pods, and the claims, ControllerRevisions and Nodes the planner reads (a DaemonSet needs every
    /// Node): a YAML/JSON stream or List, or `-`.
    #[arg(long, value_name = "PODS")]
    pub pods: String,
    /// The current revision (CloneSet, StatefulSet; default: `status.currentRevision`).
    #[arg(long, value_name = "R")]
    pub current_revision: Option<String>,
    /// The update revision (CloneSet, StatefulSet: default `status.updateRevision`, else computed from the
    /// template; DaemonSet: the update hash, default `status.updateRevision` / v1alpha1 `daemonSetHash`).
    #[arg(long, value_name = "R")]
    pub update_revision: Option<String>,
    /// The time of the decision, RFC 3339 (default: now).
    #[arg(long, value_name = "RFC3339")]
    pub now: Option<String>,
    /// CloneSet: leave `PreparingDelete` pods out when counting pods for scaling (the controller flag
    /// `--cloneset-scaling-exclude-preparing-delete`).
    #[arg(long)]
    pub exclude_preparing_delete: bool,
    /// Upstream feature gates, `Name=true|false,...`, as the workload's planner knows them (CloneSet:
    /// CloneSetPartitionRollback, PreparingUpdateAsUpdate, CloneSetShortHash; StatefulSet:
    /// StatefulSetStartOrdinal, PodIndexLabel, StatefulSetAutoDeletePVC, PreparingUpdateAsUpdate,
    /// StatefulSetAutoResizePVCGate; CloneSet, StatefulSet and
    /// DaemonSet: InPlaceUpdateEnvFromMetadata, InPlaceWorkloadVerticalScaling,
    /// RecreatePodWhenChangeVCTInCloneSetGate; SidecarSet: none); upstream's defaults otherwise.
    #[arg(long, value_name = "GATES", default_value = "")]
    pub feature_gates: String,
    /// CloneSet: seed of the instance-id generator for new pods (upstream draws them at random).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// SidecarSet: the namespace of its ControllerRevisions (where kruise-manager runs).
    #[arg(long, value_name = "NS", default_value = "kruise-system")]
    pub revision_namespace: String,
    /// Output format.
    #[arg(short, long, value_enum, default_value_t)]
    pub output: PlanFormat,
}

/// Subcommands of `kruise rollout`.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum RolloutCommand {
    /// Print what the workload's controller would do next (CloneSet, Advanced StatefulSet, Advanced
    /// DaemonSet, SidecarSet): each action with its rule, the counts, the status.
    Plan(PlanArgs),
    /// Pause a workload's rollout on the cluster (`KIND/NAME`: cloneset, asts, ads): its controller stops
    /// updating pods.
    Pause(crate::live::verbs::PauseArgs),
    /// Resume a paused rollout on the cluster.
    Resume(crate::live::verbs::PauseArgs),
}

/// Runs a `kruise rollout` subcommand at `now` (used when `--now` is not given).
///
/// # Errors
/// Invalid input (exit code 2) or failing output.
pub fn run(command: &RolloutCommand, now: Timestamp, out: &mut impl Write) -> Result<(), CliError> {
    match command {
        RolloutCommand::Plan(args) => plan_command(args, now, out),
        RolloutCommand::Pause(args) => crate::live::verbs::pause(args, true, out),
        RolloutCommand::Resume(args) => crate::live::verbs::pause(args, false, out),
    }
}

/// `kruise rollout plan`: reads the workload, picks its planner and prints the plan.
///
/// # Errors
/// Invalid input (exit code 2) or failing output.
pub fn plan_command(args: &PlanArgs, now: Timestamp, out: &mut impl Write) -> Result<(), CliError> {
    if args.workload == "-" && args.pods == "-" {
        return Err(CliError::Invalid(
            "-f and --pods cannot both read standard input".to_owned(),
        ));
    }
    let now = match &args.now {
        Some(text) => text
            .parse::<Timestamp>()
            .map_err(|error| CliError::Invalid(format!("--now {text:?}: {error}")))?,
        None => now,
    };
    let workload = read_workload(&args.workload)?;
    if !matches!(workload, Workload::CloneSet(_)) && args.exclude_preparing_delete {
        return Err(CliError::Invalid(format!(
            "--exclude-preparing-delete: only CloneSets have it, not {}",
            workload.kind()
        )));
    }
    match workload {
        Workload::CloneSet(set) => cloneset::plan_cloneset(args, &set, now, out),
        Workload::StatefulSet(set) => {
            let owned = read_owned(&args.pods)?;
            statefulset::plan_statefulset(args, &set, &owned, now, out)
        }
        Workload::DaemonSet(set) => {
            let owned = read_owned(&args.pods)?;
            daemonset::plan_daemonset(args, &set, &owned, now, out)
        }
        Workload::SidecarSet(set) => {
            let owned = read_owned(&args.pods)?;
            sidecarset::plan_sidecarset(args, &set, &owned, now, out)
        }
    }
}

/// Writes `value` as pretty JSON and a newline.
fn write_json(out: &mut impl Write, value: &Value) -> Result<(), CliError> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}
