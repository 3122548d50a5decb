//! `kruise rollout status KIND/NAME`: follows the workload through a watch on that one object until its
//! status says the rollout is complete ([`super::rollout_status`]), showing the progress as it changes.

use std::io::Write;
use std::time::Duration;

use futures::TryStreamExt;
use kruise_runtime::duration::parse_duration;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use serde_json::Value;

use super::connection::ClusterArgs;
use super::progress_screen::ProgressScreen;
use super::rollout_status::{Observed, Progress, progress};
use super::target::Target;
use super::verbs::{block_on, cluster, read};
use crate::CliError;

/// Arguments of `kruise rollout status`.
#[derive(Clone, Debug, clap::Args)]
pub struct StatusArgs {
    /// The workload, `KIND/NAME`: `cloneset/web`, `asts/db`, `ads/agent`.
    pub target: Target,
    /// Follow the rollout until it is complete; `--watch=false` prints the status once.
    #[arg(
        short,
        long,
        default_value_t = true,
        action = clap::ArgAction::Set,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "true",
        value_name = "BOOL"
    )]
    pub watch: bool,
    /// Give up after this long (exit code 1), e.g. `90s`, `5m`; default: wait as long as it takes.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// Which cluster (kubectl's connection flags).
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// `kruise rollout status`: exit 0 once the rollout is complete (or at once with `--watch=false`), 1 on
/// timeout; `terminal` says whether `out` is a terminal (bars redrawn in place) or not (one line per change).
///
/// # Errors
/// The cluster side fails, the workload is deleted, or the timeout passes first.
pub fn status(args: &StatusArgs, terminal: bool, out: &mut impl Write) -> Result<(), CliError> {
    let display = args.target.display();
    block_on(async {
        let deadline = args
            .timeout
            .map(|timeout| tokio::time::Instant::now() + timeout);
        let connection = args.cluster.connect().await?;
        let workload = read(&connection, &args.target).await?;
        let version = workload.resource.version.clone();
        let judge = |object: &Value| -> Result<Progress, CliError> {
            let observed = Observed::read(object, args.target.kind, &version)
                .map_err(|error| CliError::Invalid(format!("{display}: {error}")))?;
            Ok(progress(&display, &observed))
        };
        let mut screen = ProgressScreen::new(terminal);
        let mut last = judge(&workload.object)?;
        screen.show(&last, out)?;
        if last.complete || !args.watch {
            return Ok(());
        }
        let config =
            watcher::Config::default().fields(&format!("metadata.name={}", args.target.name));
        let mut events =
            std::pin::pin!(watcher::watcher(workload.api.clone(), config).default_backoff());
        loop {
            let next = match deadline {
                Some(deadline) => {
                    match tokio::time::timeout_at(deadline, events.try_next()).await {
                        Ok(next) => next,
                        Err(_) => {
                            return Err(CliError::Cluster(format!(
                                "timed out after {} waiting for {display}: {}",
                                args.timeout.map(|t| format!("{t:?}")).unwrap_or_default(),
                                last.message
                            )));
                        }
                    }
                }
                None => events.try_next().await,
            };
            let event = match next {
                Ok(Some(event)) => event,
                Ok(None) => return Err(CliError::Cluster(format!("the watch of {display} ended"))),
                // The watcher backs off and starts again after an error.
                Err(_) => continue,
            };
            match event {
                Event::Apply(object) | Event::InitApply(object) => {
                    let object = serde_json::to_value(&object).map_err(cluster)?;
                    last = judge(&object)?;
                    screen.show(&last, out)?;
                    if last.complete {
                        return Ok(());
                    }
                }
                Event::Delete(_) => {
                    return Err(CliError::Cluster(format!(
                        "{display} was deleted while its rollout was followed"
                    )));
                }
                Event::Init | Event::InitDone => {}
            }
        }
    })
}
