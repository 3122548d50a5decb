//! `kruise-node-simulator`: plays kubelet for N simulated nodes (see `--help` and the module docs of
//! `kruise_simulator`). Uses `KUBECONFIG` (or in-cluster configuration) like kubectl.

use std::process::ExitCode;

use clap::Parser;
use kruise_runtime::logging::{self, LogFormat};
use kruise_runtime::shutdown;
use kruise_simulator::{Simulator, SimulatorConfig};

/// Plays kubelet for simulated nodes: registers them, binds pending pods, reports pod status (Running,
/// Ready honouring readiness gates), restarts containers after in-place image updates.
#[derive(Parser)]
#[command(name = "kruise-node-simulator", version)]
struct Cli {
    #[command(flatten)]
    config: SimulatorConfig,
    /// Log format.
    #[arg(long, value_enum, default_value_t)]
    log_format: LogFormat,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.log_format);
    let (trigger, signal) = shutdown::channel();
    trigger.on_signals();
    let client = match kube::Client::try_default().await {
        Ok(client) => client,
        Err(error) => {
            tracing::error!(%error, "cannot configure a Kubernetes client (set KUBECONFIG)");
            return ExitCode::FAILURE;
        }
    };
    match Simulator::new(client, cli.config).run(signal).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "node simulator failed");
            ExitCode::FAILURE
        }
    }
}
