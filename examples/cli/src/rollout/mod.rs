//! `kruise rollout plan`: what a workload controller would do next to a workload and its pods.
//!
//! With `KIND/NAME` instead of `-f`/`--pods`, the workload and what its planner reads come from the
//! cluster (`live_plan`); the plan is the same.
//!
//! The `-f` object decides the planner: an `apps.kruise.io` CloneSet, Advanced StatefulSet, Advanced DaemonSet
//! (which needs the cluster's Nodes in `--pods`) or SidecarSet, each `v1alpha1` or `v1beta1` (converted to the
//! v1beta1 hub); one module per kind. The `--pods` file holds pods as a YAML/JSON stream or a `List`, plus the
//! claims, ControllerRevisions and Nodes the planner reads, as `kubectl get pods,pvc,controllerrevisions,nodes
//! -o yaml` prints them.

mod cloneset;
mod daemonset;
mod decode;
mod live_plan;
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
use owned::{Owned, read_owned};
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
    /// A workload on the cluster instead of `-f`/`--pods`: `cloneset/NAME`, `asts/NAME` or `ads/NAME`
    /// (its pods, claims, ControllerRevisions and, for a DaemonSet, the Nodes are read from the cluster).
    #[arg(value_name = "KIND/NAME")]
    pub target: Option<crate::live::Target>,
    /// The workload: an apps.kruise.io CloneSet, StatefulSet, DaemonSet or SidecarSet (v1alpha1 or v1beta1),
    /// a YAML/JSON file, or `-` for standard input (required without KIND/NAME).
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "WORKLOAD",
        default_value = "",
        hide_default_value = true
    )]
    pub workload: String,
    /// Its pods, and the claims, ControllerRevisions and Nodes the planner reads (a DaemonSet needs every
    /// Node): a YAML/JSON stream or List, or `-` (required with `-f`).
    #[arg(
        long,
        value_name = "PODS",
        default_value = "",
        hide_default_value = true
    )]
    pub pods: String,
    /// Which cluster, with KIND/NAME (kubectl's connection flags).
    #[command(flatten)]
    pub cluster: crate::live::ClusterArgs,
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
    /// Follow a rollout on the cluster until it is complete: progress per revision, exit 0 when done, 1
    /// after `--timeout`.
    Status(crate::live::status_follow::StatusArgs),
    /// List a workload's revisions (its ControllerRevisions), or print one revision's pod template.
    History(crate::live::rollout_verbs::HistoryArgs),
    /// Restore the pod template of an earlier revision (default: the previous one).
    Undo(crate::live::rollout_verbs::UndoArgs),
    /// Replace every pod: stamps the pod template with `kubectl.kubernetes.io/restartedAt`.
    Restart(crate::live::rollout_verbs::RestartArgs),
    /// Release the next batch of a partitioned rollout: lower the partition by one batch, or to
    /// `--partition N`.
    Approve(crate::live::rollout_verbs::ApproveArgs),
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
        RolloutCommand::Status(args) => {
            let terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
            crate::live::status_follow::status(args, terminal, out)
        }
        RolloutCommand::History(args) => crate::live::rollout_verbs::history(args, out),
        RolloutCommand::Undo(args) => crate::live::rollout_verbs::undo(args, out),
        RolloutCommand::Restart(args) => crate::live::rollout_verbs::restart(args, out),
        RolloutCommand::Approve(args) => crate::live::rollout_verbs::approve(args, out),
    }
}

/// `kruise rollout plan`: reads the workload, picks its planner and prints the plan.
///
/// # Errors
/// Invalid input (exit code 2) or failing output.
pub fn plan_command(args: &PlanArgs, now: Timestamp, out: &mut impl Write) -> Result<(), CliError> {
    let now = match &args.now {
        Some(text) => text
            .parse::<Timestamp>()
            .map_err(|error| CliError::Invalid(format!("--now {text:?}: {error}")))?,
        None => now,
    };
    match (&args.target, args.workload.is_empty(), args.pods.is_empty()) {
        (Some(target), true, true) => {
            let (workload, owned) = live_plan::read_live(args, target)?;
            let mut labelled = args.clone();
            labelled.workload = target.display();
            labelled.pods = format!("the pods of {}", target.display());
            return plan_workload(&labelled, workload, &owned, now, out);
        }
        (Some(target), _, _) => {
            return Err(CliError::Invalid(format!(
                "{}: a workload on the cluster is planned without -f and --pods",
                target.display()
            )));
        }
        (None, false, false) => {}
        (None, _, _) => {
            return Err(CliError::Invalid(
                "give -f WORKLOAD and --pods PODS, or KIND/NAME for a workload on the cluster"
                    .to_owned(),
            ));
        }
    }
    if args.workload == "-" && args.pods == "-" {
        return Err(CliError::Invalid(
            "-f and --pods cannot both read standard input".to_owned(),
        ));
    }
    let workload = read_workload(&args.workload)?;
    let owned = read_owned(&args.pods)?;
    plan_workload(args, workload, &owned, now, out)
}

/// Plans `workload` over `owned` at `now` with the planner of its kind.
fn plan_workload(
    args: &PlanArgs,
    workload: Workload,
    owned: &Owned,
    now: Timestamp,
    out: &mut impl Write,
) -> Result<(), CliError> {
    if !matches!(workload, Workload::CloneSet(_)) && args.exclude_preparing_delete {
        return Err(CliError::Invalid(format!(
            "--exclude-preparing-delete: only CloneSets have it, not {}",
            workload.kind()
        )));
    }
    match workload {
        Workload::CloneSet(set) => cloneset::plan_cloneset(args, &set, owned, now, out),
        Workload::StatefulSet(set) => statefulset::plan_statefulset(args, &set, owned, now, out),
        Workload::DaemonSet(set) => daemonset::plan_daemonset(args, &set, owned, now, out),
        Workload::SidecarSet(set) => sidecarset::plan_sidecarset(args, &set, owned, now, out),
    }
}

/// Writes `value` as pretty JSON and a newline.
fn write_json(out: &mut impl Write, value: &Value) -> Result<(), CliError> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(std::io::Error::from)?;
    writeln!(out)?;
    Ok(())
}
