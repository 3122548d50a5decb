//! `kruise create job NAME --from=advancedcronjob/ACJ`: runs an AdvancedCronJob now, by creating the object
//! its template makes ([`super::job_from_cron`]): a batch/v1 Job, a BroadcastJob or an ImageListPullJob.
//! `--dry-run=client` prints it instead; `-o yaml|json` prints the object (as created, or as it would be).

use std::io::Write;

use kube::api::{DynamicObject, PostParams};
use kube::core::ApiResource;
use kube::{Api, Client};
use serde_json::Value;

use super::connection::ClusterArgs;
use super::job_from_cron::{ChildKind, child_from_cron_job};
use super::target::GROUP;
use crate::CliError;
use crate::output::Format;

/// The AdvancedCronJob `--from` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CronJobSource {
    /// Its name.
    pub name: String,
}

impl std::str::FromStr for CronJobSource {
    type Err = String;

    /// Parses `advancedcronjob/NAME` (also `acj/NAME`, `advancedcronjobs/NAME`,
    /// `advancedcronjob.apps.kruise.io/NAME`).
    fn from_str(text: &str) -> Result<Self, String> {
        let expected = || format!("{text:?}: expected advancedcronjob/NAME (or acj/NAME)");
        let (kind, name) = text.split_once('/').ok_or_else(expected)?;
        let known = matches!(
            kind.to_ascii_lowercase().as_str(),
            "advancedcronjob"
                | "advancedcronjobs"
                | "acj"
                | "advancedcronjob.apps.kruise.io"
                | "advancedcronjobs.apps.kruise.io"
        );
        if !known || name.is_empty() || name.contains('/') {
            return Err(expected());
        }
        Ok(Self {
            name: name.to_owned(),
        })
    }
}

/// kubectl's `--dry-run`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum DryRun {
    /// Create the object.
    #[default]
    None,
    /// Only print the object; nothing is sent.
    Client,
    /// Send it with `dryRun=All`: the API server checks it and stores nothing.
    Server,
}

/// Arguments of `kruise create job`.
#[derive(Clone, Debug, clap::Args)]
pub struct CreateJobArgs {
    /// The name of the object to create.
    pub name: String,
    /// The AdvancedCronJob whose template to run: `advancedcronjob/NAME` or `acj/NAME`.
    #[arg(long, required = true, value_name = "advancedcronjob/NAME")]
    pub from: CronJobSource,
    /// `client`: print the object without sending it; `server`: have the API server check it without
    /// storing it (`--dry-run` alone is `client`).
    #[arg(long, value_enum, default_value = "none", num_args = 0..=1, require_equals = true,
          default_missing_value = "client")]
    pub dry_run: DryRun,
    /// Print the object in this format instead of a one-line summary.
    #[arg(short, long, value_enum)]
    pub output: Option<Format>,
    /// Which cluster (kubectl's connection flags).
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

fn cluster(error: impl std::fmt::Display) -> CliError {
    CliError::Cluster(error.to_string())
}

/// The resource of a Kruise kind in the first of `versions` the cluster serves it in.
async fn served(
    client: &Client,
    kind: &str,
    plural: &str,
    versions: &[&str],
) -> Result<ApiResource, CliError> {
    for version in versions {
        let api_version = format!("{GROUP}/{version}");
        let Ok(resources) = client.list_api_group_resources(&api_version).await else {
            continue;
        };
        if resources.resources.iter().any(|r| r.name == plural) {
            return Ok(ApiResource {
                group: GROUP.to_owned(),
                version: (*version).to_owned(),
                api_version,
                kind: kind.to_owned(),
                plural: plural.to_owned(),
            });
        }
    }
    Err(CliError::Cluster(format!(
        "the cluster serves no {plural}.{GROUP} (are the OpenKruise CRDs installed? `kruise crds | kubectl apply -f -`)"
    )))
}

fn print(object: &Value, format: Format, out: &mut impl Write) -> Result<(), CliError> {
    match format {
        Format::Yaml => crate::output::write_objects(std::slice::from_ref(object), format, out)?,
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, object).map_err(std::io::Error::other)?;
            writeln!(out)?;
        }
    }
    Ok(())
}

/// `kruise create job NAME --from=advancedcronjob/ACJ`.
///
/// # Errors
/// A bad name or an AdvancedCronJob without a template (exit code 2); the AdvancedCronJob is not there, the
/// object exists already or the create is refused (exit code 1).
pub fn create_job(args: &CreateJobArgs, out: &mut impl Write) -> Result<(), CliError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(cluster)?
        .block_on(async {
            let connection = args.cluster.connect().await?;
            let client = &connection.client;
            let namespace = &connection.namespace;
            let acj_resource = served(
                client,
                "AdvancedCronJob",
                "advancedcronjobs",
                &["v1beta1", "v1alpha1"],
            )
            .await?;
            let acjs: Api<DynamicObject> =
                Api::namespaced_with(client.clone(), namespace, &acj_resource);
            let acj = acjs
                .get_opt(&args.from.name)
                .await
                .map_err(cluster)?
                .ok_or_else(|| {
                    CliError::Cluster(format!(
                        "advancedcronjob.{GROUP}/{} not found in namespace {namespace}",
                        args.from.name
                    ))
                })?;
            let acj = serde_json::to_value(&acj).map_err(cluster)?;
            let (kind, mut object) =
                child_from_cron_job(&args.name, &acj).map_err(CliError::Invalid)?;
            let resource = match kind {
                ChildKind::Job => ApiResource {
                    group: "batch".to_owned(),
                    version: "v1".to_owned(),
                    api_version: "batch/v1".to_owned(),
                    kind: kind.kind().to_owned(),
                    plural: kind.plural().to_owned(),
                },
                // The AdvancedCronJob's own version first: its template is written in that version's shape.
                ChildKind::BroadcastJob | ChildKind::ImageListPullJob => {
                    let versions = [acj_resource.version.as_str(), "v1beta1", "v1alpha1"];
                    served(client, kind.kind(), kind.plural(), &versions).await?
                }
            };
            if let Some(fields) = object.as_object_mut() {
                fields.insert(
                    "apiVersion".to_owned(),
                    Value::String(resource.api_version.clone()),
                );
            }
            let display = format!("{}/{}", kind.resource_name(), args.name);
            if args.dry_run == DryRun::Client {
                return match args.output {
                    Some(format) => print(&object, format, out),
                    None => Ok(writeln!(out, "{display} created (dry run)")?),
                };
            }
            let api: Api<DynamicObject> =
                Api::namespaced_with(client.clone(), namespace, &resource);
            let params = PostParams {
                dry_run: args.dry_run == DryRun::Server,
                ..PostParams::default()
            };
            let request: DynamicObject = serde_json::from_value(object).map_err(cluster)?;
            let created = match api.create(&params, &request).await {
                Ok(created) => created,
                Err(kube::Error::Api(status)) if status.code == 409 => {
                    return Err(CliError::Cluster(format!(
                        "{display} already exists in namespace {namespace}"
                    )));
                }
                Err(error) => return Err(cluster(format!("{display}: {error}"))),
            };
            match args.output {
                Some(format) => print(
                    &serde_json::to_value(&created).map_err(cluster)?,
                    format,
                    out,
                ),
                None if args.dry_run == DryRun::Server => {
                    Ok(writeln!(out, "{display} created (server dry run)")?)
                }
                None => Ok(writeln!(out, "{display} created")?),
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_names_an_advanced_cron_job() {
        let source = |text: &str| text.parse::<CronJobSource>();
        assert_eq!(
            source("advancedcronjob/nightly"),
            Ok(CronJobSource {
                name: "nightly".into()
            })
        );
        assert_eq!(source("acj/n").unwrap().name, "n");
        assert_eq!(source("AdvancedCronJobs/n").unwrap().name, "n");
        assert_eq!(
            source("advancedcronjob.apps.kruise.io/n").unwrap().name,
            "n"
        );
        for bad in ["nightly", "cronjob/nightly", "acj/", "acj/a/b"] {
            let error = source(bad).unwrap_err();
            assert!(
                error.contains(bad) && error.contains("advancedcronjob/NAME"),
                "{bad}: {error}"
            );
        }
    }
}
