//! The live verbs: read the workload, decide the write ([`super::patches`]), send it.

use std::io::Write;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{DynamicObject, Patch, PatchParams};
use kube::core::ApiResource;
use kube::{Api, ResourceExt};
use serde_json::Value;

use super::connection::{ClusterArgs, Connection};
use super::patches::{self, ImageAssignment};
use super::target::{Target, WorkloadKind, served};
use crate::CliError;

/// Arguments of `kruise rollout pause|resume`.
#[derive(Clone, Debug, clap::Args)]
pub struct PauseArgs {
    /// The workload, `KIND/NAME`: `cloneset/web`, `asts/db`, `ads/agent`.
    pub target: Target,
    /// Which cluster (kubectl's connection flags).
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// Arguments of `kruise set image`.
#[derive(Clone, Debug, clap::Args)]
pub struct SetImageArgs {
    /// The workload, `KIND/NAME`.
    pub target: Target,
    /// `CONTAINER=IMAGE` (`*=IMAGE` for every container), one or more.
    #[arg(required = true, value_name = "CONTAINER=IMAGE")]
    pub images: Vec<ImageAssignment>,
    /// Which cluster (kubectl's connection flags).
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// Arguments of `kruise scaledown`.
#[derive(Clone, Debug, clap::Args)]
pub struct ScaledownArgs {
    /// The CloneSet, `cloneset/NAME`.
    pub target: Target,
    /// The pods to delete, comma-separated: the CloneSet deletes them and does not replace them.
    #[arg(long, value_delimiter = ',', required = true, value_name = "POD,...")]
    pub pods: Vec<String>,
    /// Which cluster (kubectl's connection flags).
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

pub(crate) fn cluster(error: impl std::fmt::Display) -> CliError {
    CliError::Cluster(error.to_string())
}

pub(crate) fn block_on<T>(work: impl Future<Output = Result<T, CliError>>) -> Result<T, CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(cluster)?
        .block_on(work)
}

/// The workload as read, and how to write to it.
pub(crate) struct Workload {
    pub(crate) api: Api<DynamicObject>,
    pub(crate) resource: ApiResource,
    pub(crate) object: Value,
}

pub(crate) async fn read(connection: &Connection, target: &Target) -> Result<Workload, CliError> {
    let resource = served(&connection.client, target.kind).await?;
    let api: Api<DynamicObject> =
        Api::namespaced_with(connection.client.clone(), &connection.namespace, &resource);
    let Some(object) = api.get_opt(&target.name).await.map_err(cluster)? else {
        return Err(CliError::Cluster(format!(
            "{} not found in namespace {}",
            target.display(),
            connection.namespace
        )));
    };
    let object = serde_json::to_value(&object).map_err(cluster)?;
    Ok(Workload {
        api,
        resource,
        object,
    })
}

pub(crate) async fn write(
    workload: &Workload,
    target: &Target,
    patch: &Value,
) -> Result<(), CliError> {
    match workload
        .api
        .patch(&target.name, &PatchParams::default(), &Patch::Merge(patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 409 => Err(CliError::Cluster(format!(
            "{} changed while this command ran; run it again",
            target.display()
        ))),
        Err(error) => Err(cluster(format!("{}: {error}", target.display()))),
    }
}

/// `kruise rollout pause|resume`: sets the workload's `paused`.
///
/// # Errors
/// The cluster cannot be reached, the workload is not there, or the write is refused.
pub fn pause(args: &PauseArgs, paused: bool, out: &mut impl Write) -> Result<(), CliError> {
    block_on(async {
        let connection = args.cluster.connect().await?;
        let workload = read(&connection, &args.target).await?;
        let verb = if paused { "paused" } else { "resumed" };
        match patches::pause(
            &workload.object,
            args.target.kind,
            &workload.resource.version,
            paused,
        ) {
            Some(patch) => {
                write(&workload, &args.target, &patch).await?;
                writeln!(out, "{} {verb}", args.target.display())?;
            }
            None => writeln!(out, "{} already {verb}", args.target.display())?,
        }
        Ok(())
    })
}

/// `kruise set image`: new images for the pod template's containers.
///
/// # Errors
/// A container is not in the template (exit code 2), or the cluster side fails.
pub fn set_image(args: &SetImageArgs, out: &mut impl Write) -> Result<(), CliError> {
    block_on(async {
        let connection = args.cluster.connect().await?;
        let workload = read(&connection, &args.target).await?;
        let decided = patches::set_image(&workload.object, &args.images)
            .map_err(|error| CliError::Invalid(format!("{}: {error}", args.target.display())))?;
        match decided {
            Some(patch) => {
                write(&workload, &args.target, &patch).await?;
                writeln!(out, "{} image updated", args.target.display())?;
            }
            None => writeln!(out, "{} images unchanged", args.target.display())?,
        }
        Ok(())
    })
}

/// `kruise scaledown cloneset/NAME --pods a,b`: the CloneSet deletes those pods and scales down by them.
///
/// # Errors
/// Not a CloneSet, a pod that is not the CloneSet's (exit code 2), or the cluster side fails.
pub fn scaledown(args: &ScaledownArgs, out: &mut impl Write) -> Result<(), CliError> {
    if args.target.kind != WorkloadKind::CloneSet {
        return Err(CliError::Invalid(format!(
            "{}: scaledown works on CloneSets only",
            args.target.display()
        )));
    }
    block_on(async {
        let connection = args.cluster.connect().await?;
        let workload = read(&connection, &args.target).await?;
        let uid = workload
            .object
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let pods: Api<Pod> = Api::namespaced(connection.client.clone(), &connection.namespace);
        for name in &args.pods {
            let pod = pods.get_opt(name).await.map_err(cluster)?.ok_or_else(|| {
                CliError::Invalid(format!(
                    "pod {name} not found in namespace {}",
                    connection.namespace
                ))
            })?;
            let owned = pod
                .owner_references()
                .iter()
                .any(|owner| owner.controller == Some(true) && owner.uid == uid);
            if !owned {
                return Err(CliError::Invalid(format!(
                    "pod {name} does not belong to {}",
                    args.target.display()
                )));
            }
        }
        let patch = patches::scale_down(&workload.object, &args.pods)
            .map_err(|error| CliError::Invalid(format!("{}: {error}", args.target.display())))?;
        write(&workload, &args.target, &patch).await?;
        writeln!(
            out,
            "{} scaled down to {} (deleting {})",
            args.target.display(),
            patch.pointer("/spec/replicas").unwrap_or(&Value::Null),
            args.pods.join(", ")
        )?;
        Ok(())
    })
}
