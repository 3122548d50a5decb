//! `kruise-daemon`: the node agent (see `--help` and the module docs of `kruise_daemon`). Uses
//! `KUBECONFIG` (or in-cluster configuration) like kubectl.

use std::process::ExitCode;

use clap::Parser;
use kruise_daemon::{Daemon, DaemonOptions};
use kruise_runtime::logging::{self, LogFormat};
use kruise_runtime::shutdown;

/// Recreates containers for ContainerRecreateRequests and pulls images for NodeImages on one node, through
/// the node's CRI runtime.
#[derive(Parser)]
#[command(name = "kruise-daemon", version)]
struct Cli {
    #[command(flatten)]
    options: DaemonOptions,
    /// Log format.
    #[arg(long, visible_alias = "logging-format", value_enum, default_value_t)]
    log_format: LogFormat,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.log_format);
    let daemon = match Daemon::new(cli.options) {
        Ok(daemon) => daemon,
        Err(error) => {
            tracing::error!(%error, "invalid options");
            return ExitCode::from(2);
        }
    };
    let (trigger, signal) = shutdown::channel();
    trigger.on_signals();
    let client = match kube::Client::try_default().await {
        Ok(client) => client,
        Err(error) => {
            tracing::error!(%error, "cannot configure a Kubernetes client (set KUBECONFIG)");
            return ExitCode::FAILURE;
        }
    };
    match daemon.run(client, signal).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "kruise-daemon failed");
            ExitCode::FAILURE
        }
    }
}
