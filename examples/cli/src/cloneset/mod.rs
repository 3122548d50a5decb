//! `kruise cloneset watch NAME`: follows a CloneSet's rollout on a cluster (the only `kruise` subcommand
//! that talks to one; it uses `KUBECONFIG` like kubectl). Every `--interval` it reads the CloneSet and its
//! pods and, when anything changed, prints a table: the counts, the pods of each revision by lifecycle
//! state, one line per pod. With `--until` it exits 0 once the condition holds, or 1 after `--timeout`.

pub mod table;

use std::io::Write;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::CloneSet;
use kube::api::ListParams;
use kube::{Api, Client};

pub use self::table::Until;
use super::CliError;
use kruise_runtime::duration::parse_duration;

/// Subcommands of `kruise cloneset`.
#[derive(Clone, Debug, clap::Subcommand)]
pub enum ClonesetCommand {
    /// Print the rollout of a CloneSet (pods by revision and lifecycle state) as it changes.
    Watch(WatchArgs),
}

/// Arguments of `kruise cloneset watch`.
#[derive(Clone, Debug, clap::Args)]
pub struct WatchArgs {
    /// The CloneSet.
    pub name: String,
    /// Its namespace.
    #[arg(short, long, default_value = "default")]
    pub namespace: String,
    /// Stop once this holds (exit 0).
    #[arg(long, value_enum, default_value_t)]
    pub until: Until,
    /// How often to look.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub interval: Duration,
    /// Give up (exit 1) after this long when `--until` is set.
    #[arg(long, default_value = "300s", value_parser = parse_duration)]
    pub timeout: Duration,
}

fn cluster(error: impl std::fmt::Display) -> CliError {
    CliError::Cluster(error.to_string())
}

/// Runs `kruise cloneset ...`.
///
/// # Errors
/// [`CliError::Cluster`] when the cluster cannot be reached or the condition is not met in time.
pub fn run(command: &ClonesetCommand, stdout: &mut impl Write) -> Result<(), CliError> {
    let ClonesetCommand::Watch(args) = command;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(cluster)?;
    runtime.block_on(watch(args, stdout))
}

async fn watch(args: &WatchArgs, stdout: &mut impl Write) -> Result<(), CliError> {
    let client = Client::try_default().await.map_err(cluster)?;
    let clonesets: Api<CloneSet> = Api::namespaced(client.clone(), &args.namespace);
    let pods: Api<Pod> = Api::namespaced(client, &args.namespace);
    let started = Instant::now();
    let mut last = String::new();
    loop {
        let cloneset = clonesets.get(&args.name).await.map_err(cluster)?;
        let selector = cloneset
            .status
            .as_ref()
            .map(|s| s.label_selector.clone())
            .filter(|s| !s.is_empty());
        let mut owned: Vec<Pod> = match selector {
            Some(selector) => {
                pods.list(&ListParams::default().labels(&selector))
                    .await
                    .map_err(cluster)?
                    .items
            }
            None => Vec::new(),
        };
        let uid = cloneset.metadata.uid.clone().unwrap_or_default();
        owned.retain(|pod| {
            pod.metadata.deletion_timestamp.is_none()
                && pod
                    .metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|owner| owner.uid == uid)
        });
        let text = table::render(&cloneset, &owned);
        if text != last {
            let elapsed = started.elapsed().as_secs_f64();
            writeln!(stdout, "[{elapsed:6.1}s] {text}")?;
            stdout.flush()?;
            last = text;
        }
        if table::reached(args.until, &cloneset, &owned) {
            return Ok(());
        }
        if args.until != Until::Forever && started.elapsed() >= args.timeout {
            return Err(CliError::Cluster(format!(
                "CloneSet {}/{}: not {:?} after {:?}",
                args.namespace, args.name, args.until, args.timeout
            )));
        }
        tokio::time::sleep(args.interval).await;
    }
}
