//! `kruise rollout history|undo|restart|approve KIND/NAME`: read the workload (and its ControllerRevisions),
//! decide with the pure functions ([`super::revision_history`], [`super::restart_patch`],
//! [`super::approve_patch`]) and send the write as the other live verbs do.

use std::io::Write;

use k8s_openapi::api::apps::v1::ControllerRevision;
use kube::Api;
use kube::api::ListParams;
use serde_json::Value;

use super::approve_patch::{ApproveRefusal, approve as decide_approval};
use super::connection::{ClusterArgs, Connection};
use super::restart_patch::restart as decide_restart;
use super::revision_history::{
    OwnedRevision, UndoDecision, UndoRefusal, find, history_table, owned_revisions,
    revision_template, undo as decide_undo,
};
use super::target::Target;
use super::verbs::{Workload, block_on, cluster, read, write};
use crate::CliError;

/// Arguments of `kruise rollout history`.
#[derive(Clone, Debug, clap::Args)]
pub struct HistoryArgs {
    /// The workload, `KIND/NAME`: `cloneset/web`, `asts/db`, `ads/agent`.
    pub target: Target,
    /// Print the pod template of this revision (YAML) instead of the list.
    #[arg(long, value_name = "N")]
    pub revision: Option<i64>,
    /// Which cluster (kubectl's connection flags).
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// Arguments of `kruise rollout undo`.
#[derive(Clone, Debug, clap::Args)]
pub struct UndoArgs {
    /// The workload, `KIND/NAME`.
    pub target: Target,
    /// The revision to restore; 0 (the default) is the one before the current one.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub to_revision: i64,
    /// Which cluster (kubectl's connection flags).
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// Arguments of `kruise rollout restart`.
#[derive(Clone, Debug, clap::Args)]
pub struct RestartArgs {
    /// The workload, `KIND/NAME`.
    pub target: Target,
    /// Which cluster (kubectl's connection flags).
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// Arguments of `kruise rollout approve`.
#[derive(Clone, Debug, clap::Args)]
pub struct ApproveArgs {
    /// The workload, `KIND/NAME`.
    pub target: Target,
    /// The new partition (pods kept at old revisions); default: the current one lowered by one batch
    /// (`maxUnavailable` of the pods, at least 1).
    #[arg(long, value_name = "N")]
    pub partition: Option<i64>,
    /// Which cluster (kubectl's connection flags).
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// The ControllerRevisions the workload owns, by number.
async fn revisions_of(
    connection: &Connection,
    workload: &Workload,
) -> Result<Vec<OwnedRevision>, CliError> {
    let api: Api<ControllerRevision> =
        Api::namespaced(connection.client.clone(), &connection.namespace);
    let items = api
        .list(&ListParams::default())
        .await
        .map_err(|error| cluster(format!("listing ControllerRevisions: {error}")))?
        .items
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<Vec<Value>, _>>()
        .map_err(cluster)?;
    let uid = workload
        .object
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Ok(owned_revisions(&items, uid))
}

/// `kruise rollout history`: the revisions, or one revision's pod template.
///
/// # Errors
/// The revision asked for does not exist (exit code 2), or the cluster side fails.
pub fn history(args: &HistoryArgs, out: &mut impl Write) -> Result<(), CliError> {
    let display = args.target.display();
    block_on(async {
        let connection = args.cluster.connect().await?;
        let workload = read(&connection, &args.target).await?;
        let revisions = revisions_of(&connection, &workload).await?;
        match args.revision {
            None => {
                writeln!(out, "{display}")?;
                write!(out, "{}", history_table(&revisions))?;
            }
            Some(number) => {
                let revision = find(&revisions, number).ok_or_else(|| {
                    CliError::Invalid(format!(
                        "{display}: --revision {number}: unable to find the specified revision"
                    ))
                })?;
                let template = revision_template(revision).map_err(cluster)?;
                let yaml = serde_saphyr::to_string(&template).map_err(cluster)?;
                writeln!(out, "{display} with revision #{number}")?;
                write!(out, "{yaml}")?;
            }
        }
        Ok(())
    })
}

/// `kruise rollout undo`: restores a revision's pod template.
///
/// # Errors
/// `--to-revision` names no revision (exit code 2), there is no previous revision, or the cluster side
/// fails.
pub fn undo(args: &UndoArgs, out: &mut impl Write) -> Result<(), CliError> {
    let display = args.target.display();
    if args.to_revision < 0 {
        return Err(CliError::Invalid(format!(
            "--to-revision {}: must be 0 (the previous revision) or a revision number",
            args.to_revision
        )));
    }
    block_on(async {
        let connection = args.cluster.connect().await?;
        let workload = read(&connection, &args.target).await?;
        let revisions = revisions_of(&connection, &workload).await?;
        let to = (args.to_revision != 0).then_some(args.to_revision);
        match decide_undo(&workload.object, &revisions, to) {
            Ok(UndoDecision::Restore { patch, .. }) => {
                write(&workload, &args.target, &patch).await?;
                writeln!(out, "{display} rolled back")?;
            }
            Ok(UndoDecision::AlreadyCurrent(number)) => writeln!(
                out,
                "{display} skipped rollback (current template already matches revision {number})"
            )?,
            Err(refusal @ UndoRefusal::NotFound(_)) => {
                return Err(CliError::Invalid(format!("{display}: {refusal}")));
            }
            Err(refusal) => return Err(CliError::Cluster(format!("{display}: {refusal}"))),
        }
        Ok(())
    })
}

/// `kruise rollout restart`: stamps the pod template so every pod is replaced.
///
/// # Errors
/// The rollout is paused, or the cluster side fails.
pub fn restart(args: &RestartArgs, out: &mut impl Write) -> Result<(), CliError> {
    let display = args.target.display();
    block_on(async {
        let connection = args.cluster.connect().await?;
        let workload = read(&connection, &args.target).await?;
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let patch = decide_restart(
            &workload.object,
            args.target.kind,
            &workload.resource.version,
            &now,
        )
        .map_err(|error| {
            CliError::Cluster(format!(
                "{display}: {error} (`kruise rollout resume {}/{}`)",
                args.target.kind.kind().to_ascii_lowercase(),
                args.target.name
            ))
        })?;
        write(&workload, &args.target, &patch).await?;
        writeln!(out, "{display} restarted")?;
        Ok(())
    })
}

/// `kruise rollout approve`: releases the next batch of a partitioned rollout.
///
/// # Errors
/// `--partition` does not lower the partition (exit code 2), no partition holds pods back, or the
/// cluster side fails.
pub fn approve(args: &ApproveArgs, out: &mut impl Write) -> Result<(), CliError> {
    let display = args.target.display();
    block_on(async {
        let connection = args.cluster.connect().await?;
        let workload = read(&connection, &args.target).await?;
        let approval = decide_approval(
            &workload.object,
            args.target.kind,
            &workload.resource.version,
            args.partition,
        )
        .map_err(|refusal| match refusal {
            ApproveRefusal::BadRequest(message) => {
                CliError::Invalid(format!("{display}: {message}"))
            }
            ApproveRefusal::Refused(message) => CliError::Cluster(format!("{display}: {message}")),
        })?;
        write(&workload, &args.target, &approval.patch).await?;
        writeln!(
            out,
            "{display} approved: partition {} -> {} ({} more pods may update)",
            approval.from,
            approval.to,
            approval.from - approval.to
        )?;
        Ok(())
    })
}
