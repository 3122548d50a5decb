//! `kruise set env` and `kruise set resources`: read the workload, decide the write
//! ([`super::env_patch`], [`super::resources_patch`]), send it as a merge patch conditional on the
//! `resourceVersion` read.

use std::io::Write;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{Api, Client};

use super::connection::ClusterArgs;
use super::container_selector::EVERY_CONTAINER;
use super::env_changes::{EnvArgument, EnvChanges, EnvSource, entries_from};
use super::env_patch::{list_env, set_env as decide_env};
use super::resources_patch::{
    ResourceChanges, ResourceQuantity, set_resources as decide_resources,
};
use super::target::Target;
use super::verbs::{block_on, cluster, read, write};
use crate::CliError;

/// Arguments of `kruise set env`.
#[derive(Clone, Debug, clap::Args)]
pub struct SetEnvArgs {
    /// The workload, `KIND/NAME`: `cloneset/web`, `asts/db`, `ads/agent`.
    pub target: Target,
    /// `NAME=VALUE` sets a variable (adds it, or replaces it where it is), `NAME-` removes one.
    #[arg(value_name = "NAME=VALUE|NAME-")]
    pub changes: Vec<EnvArgument>,
    /// The containers to change, by name or wildcard pattern (`*` any characters, `?` one); init containers
    /// included.
    #[arg(short = 'c', long = "containers", value_name = "NAME", default_value = EVERY_CONTAINER)]
    pub containers: String,
    /// Add a variable for every key of a ConfigMap or Secret (`configmap/NAME`, `secret/NAME`), referring to
    /// the key.
    #[arg(long, value_name = "configmap/NAME|secret/NAME")]
    pub from: Option<EnvSource>,
    /// With `--from`: only these keys (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "KEY,...")]
    pub keys: Vec<String>,
    /// Put this in front of the name of every variable set (as kubectl does).
    #[arg(long, value_name = "PREFIX")]
    pub prefix: Option<String>,
    /// Print the environment of the selected containers (with the changes given, if any) instead of
    /// writing: `NAME=VALUE` lines, `valueFrom` variables as `# NAME from ...` comments.
    #[arg(long)]
    pub list: bool,
    /// Which cluster (kubectl's connection flags).
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// Arguments of `kruise set resources`.
#[derive(Clone, Debug, clap::Args)]
pub struct SetResourcesArgs {
    /// The workload, `KIND/NAME`.
    pub target: Target,
    /// The containers to change, by name or wildcard pattern; init containers included.
    #[arg(short = 'c', long = "containers", value_name = "NAME", default_value = EVERY_CONTAINER)]
    pub containers: String,
    /// Limits, e.g. `cpu=200m,memory=512Mi`.
    #[arg(long, value_delimiter = ',', value_name = "RESOURCE=QUANTITY,...")]
    pub limits: Vec<ResourceQuantity>,
    /// Requests, e.g. `cpu=100m,memory=256Mi`.
    #[arg(long, value_delimiter = ',', value_name = "RESOURCE=QUANTITY,...")]
    pub requests: Vec<ResourceQuantity>,
    /// Which cluster (kubectl's connection flags).
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// The keys of the ConfigMap or Secret `--from` names.
async fn source_keys(
    client: &Client,
    namespace: &str,
    source: &EnvSource,
) -> Result<Vec<String>, CliError> {
    let missing = |what: &str| {
        CliError::Cluster(format!(
            "--from: {what} {} not found in namespace {namespace}",
            source.name()
        ))
    };
    match source {
        EnvSource::ConfigMap(name) => {
            let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
            let map = api
                .get_opt(name)
                .await
                .map_err(cluster)?
                .ok_or_else(|| missing("configmap"))?;
            Ok(map.data.unwrap_or_default().into_keys().collect())
        }
        EnvSource::Secret(name) => {
            let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
            let secret = api
                .get_opt(name)
                .await
                .map_err(cluster)?
                .ok_or_else(|| missing("secret"))?;
            Ok(secret.data.unwrap_or_default().into_keys().collect())
        }
    }
}

/// `kruise set env`: sets and removes environment variables of the pod template's containers, or lists
/// them (`--list`).
///
/// # Errors
/// Bad input (no change asked, `--keys` without `--from`, a name both set and removed, an unknown container:
/// exit code 2), or the cluster side fails.
pub fn set_env(args: &SetEnvArgs, out: &mut impl Write) -> Result<(), CliError> {
    let invalid = |error: String| CliError::Invalid(format!("{}: {error}", args.target.display()));
    if !args.keys.is_empty() && args.from.is_none() {
        return Err(invalid(
            "--keys needs --from=configmap/NAME or secret/NAME".to_owned(),
        ));
    }
    if args.changes.is_empty() && args.from.is_none() && !args.list {
        return Err(invalid(
            "nothing to do: give NAME=VALUE, NAME-, --from or --list".to_owned(),
        ));
    }
    let prefix = args.prefix.as_deref().unwrap_or_default();
    // Refuse what is wrong with the arguments alone before reaching for the cluster.
    EnvChanges::new(&args.changes, vec![], prefix).map_err(invalid)?;
    block_on(async {
        let connection = args.cluster.connect().await?;
        let from = match &args.from {
            Some(source) => {
                let keys = source_keys(&connection.client, &connection.namespace, source).await?;
                entries_from(source, &keys, &args.keys).map_err(invalid)?
            }
            None => vec![],
        };
        let changes = EnvChanges::new(&args.changes, from, prefix).map_err(invalid)?;
        let workload = read(&connection, &args.target).await?;
        if args.list {
            let text = list_env(&workload.object, &args.containers, &changes).map_err(invalid)?;
            out.write_all(text.as_bytes())?;
            return Ok(());
        }
        match decide_env(&workload.object, &args.containers, &changes).map_err(invalid)? {
            Some(patch) => {
                write(&workload, &args.target, &patch).await?;
                writeln!(out, "{} env updated", args.target.display())?;
            }
            None => writeln!(out, "{} env unchanged", args.target.display())?,
        }
        Ok(())
    })
}

/// `kruise set resources`: sets limits and requests of the pod template's containers.
///
/// # Errors
/// Bad input (neither `--limits` nor `--requests`, an unknown container, a request above its limit: exit
/// code 2), or the cluster side fails.
pub fn set_resources(args: &SetResourcesArgs, out: &mut impl Write) -> Result<(), CliError> {
    let invalid = |error: String| CliError::Invalid(format!("{}: {error}", args.target.display()));
    let changes = ResourceChanges {
        limits: args.limits.clone(),
        requests: args.requests.clone(),
    };
    if changes.limits.is_empty() && changes.requests.is_empty() {
        return Err(invalid(
            "give --limits or --requests (or both), e.g. --limits cpu=200m,memory=512Mi".to_owned(),
        ));
    }
    block_on(async {
        let connection = args.cluster.connect().await?;
        let workload = read(&connection, &args.target).await?;
        match decide_resources(&workload.object, &args.containers, &changes).map_err(invalid)? {
            Some(patch) => {
                write(&workload, &args.target, &patch).await?;
                writeln!(
                    out,
                    "{} resource requirements updated",
                    args.target.display()
                )?;
            }
            None => writeln!(
                out,
                "{} resource requirements unchanged",
                args.target.display()
            )?,
        }
        Ok(())
    })
}
