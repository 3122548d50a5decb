//! `kruise-manager`: CRDs, leader election, health and metrics, the pod mutating webhook, and the
//! controllers registered in [`controllers`]. Uses `KUBECONFIG` (or in-cluster configuration) like kubectl.

use std::process::ExitCode;

use clap::Parser;
use kruise_manager::cloneset::{CloneSetArgs, CloneSetConfig, CloneSetController};
use kruise_manager::daemonset::{DaemonSetArgs, DaemonSetConfig, DaemonSetController};
use kruise_manager::pod_readiness::PodReadinessController;
use kruise_manager::sidecarset::SidecarSetController;
use kruise_manager::statefulset::{StatefulSetArgs, StatefulSetController};
use kruise_manager::{Manager, ManagerError, ManagerOptions};
use kruise_runtime::OpenWatches;
use kruise_runtime::controllers::ControllerSet;
use kruise_runtime::{logging, shutdown};

/// jemalloc, with one arena, no per-thread caches and background threads returning freed pages to the
/// system at once (set in `.cargo/config.toml`): the manager parses and drops many versions of every pod, and
/// glibc malloc kept most of that memory resident (docs/measurements.md).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Runs the OpenKruise controllers and webhook of kruise-rs against a cluster.
#[derive(Parser)]
#[command(name = "kruise-manager", version)]
struct Cli {
    #[command(flatten)]
    options: ManagerOptions,
    #[command(flatten)]
    cloneset: CloneSetArgs,
    #[command(flatten)]
    statefulset: StatefulSetArgs,
    #[command(flatten)]
    daemonset: DaemonSetArgs,
}

/// The controllers this binary runs while leading.
fn controllers(config: CloneSetConfig, daemonset: DaemonSetConfig) -> ControllerSet {
    let mut controllers = ControllerSet::new();
    controllers.register(PodReadinessController {
        namespace: config.namespace.clone(),
    });
    controllers.register(CloneSetController::new(config));
    controllers.register(DaemonSetController::new(daemonset));
    kruise_manager::crr::reconciler::register(&mut controllers);
    kruise_manager::imagepull::node_image_controller::register(&mut controllers);
    kruise_manager::imagepull::job_controller::register(&mut controllers);
    kruise_manager::imagepull::list_job::register(&mut controllers);
    kruise_manager::sidecar_terminator::register(&mut controllers);
    kruise_manager::launch_priority_barrier::register(&mut controllers);
    controllers.register(kruise_manager::broadcast_job::BroadcastJobController);
    controllers.register(kruise_manager::ephemeral_job::EphemeralJobController);
    controllers.register(kruise_manager::advanced_cron_job::AdvancedCronJobController);
    controllers.register(kruise_manager::united_deployment::UnitedDeploymentController);
    controllers.register(kruise_manager::persistent_pod_state::PersistentPodStateController);
    kruise_manager::unavailable_budget::controller::register(&mut controllers);
    controllers
}

/// The configuration `kube::Client::try_default` would use, sending the user agent
/// `kruise-manager/VERSION (IDENTITY)` so API server audit logs tell the replicas apart (the client and
/// the leader's fenced connections both send it).
async fn identified_config(identity: &str) -> Result<kube::Config, kube::Error> {
    let mut config = kube::Config::infer()
        .await
        .map_err(kube::Error::InferConfig)?;
    let agent = format!("kruise-manager/{} ({identity})", env!("CARGO_PKG_VERSION"));
    match axum::http::HeaderValue::from_str(&agent) {
        Ok(value) => config.headers.push((axum::http::header::USER_AGENT, value)),
        Err(_) => tracing::warn!(%identity, "the identity cannot be sent in a User-Agent header"),
    }
    Ok(config)
}

/// A client of `config` whose watch requests count in `watches`.
fn counted_client(
    config: kube::Config,
    watches: &OpenWatches,
) -> Result<kube::Client, kube::Error> {
    Ok(kube::client::ClientBuilder::try_from(config)?
        .with_layer(&watches.layer())
        .build())
}

/// The stack of each runtime thread. Deserializing a v1beta1 UnitedDeployment (four large workload
/// templates nested inline) takes over 1 MiB of stack in debug builds, and tokio's default is 2 MiB.
const THREAD_STACK_BYTES: usize = 8 << 20;

fn main() -> ExitCode {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(THREAD_STACK_BYTES)
        .build();
    match runtime {
        Ok(runtime) => runtime.block_on(run()),
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.options.log_format);
    let (trigger, signal) = shutdown::channel();
    trigger.on_signals();
    // The controllers' gates: their own flags over the manager's `--feature-gates` (both checked by clap).
    let gates = &cli.options.feature_gates;
    let configs = cli.cloneset.config(gates).and_then(|cloneset| {
        Ok((
            cloneset,
            cli.daemonset.config(gates)?,
            cli.statefulset.config(gates)?,
        ))
    });
    let (cloneset, daemonset, statefulset) = match configs {
        Ok(configs) => configs,
        Err(error) => {
            tracing::error!(%error, "invalid feature gates");
            return ExitCode::from(2);
        }
    };
    let mut controller_set = controllers(cloneset, daemonset);
    controller_set.register(
        SidecarSetController::new(&cli.options.namespace).with_pod_unavailable_budget_update(
            cli.options.feature_gates.pod_unavailable_budget_update,
        ),
    );
    controller_set.register(StatefulSetController::new(statefulset));
    if cli.options.feature_gates.workload_spread {
        controller_set.register(kruise_manager::workload_spread::WorkloadSpreadController);
    }
    if cli.options.feature_gates.resource_distribution {
        controller_set
            .register(kruise_manager::resource_distribution::ResourceDistributionController);
    }
    kruise_manager::pod_probe_marker::register(&mut controller_set, gates.pod_probe_marker);
    let identity = cli.options.identity();
    let config = match identified_config(&identity).await {
        Ok(config) => config,
        Err(error) => {
            tracing::error!(%error, "cannot configure a Kubernetes client (set KUBECONFIG)");
            return ExitCode::FAILURE;
        }
    };
    let manager = Manager::new(cli.options, controller_set).with_fenced_connections(config.clone());
    let client = match counted_client(config, manager.metrics().open_watches()) {
        Ok(client) => client,
        Err(error) => {
            tracing::error!(%error, "cannot configure a Kubernetes client (set KUBECONFIG)");
            return ExitCode::FAILURE;
        }
    };
    match manager.run(client, signal).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error @ ManagerError::LostLeadership) => {
            tracing::error!(%error, "exiting so a fresh instance can rejoin the election");
            ExitCode::FAILURE
        }
        Err(error) => {
            tracing::error!(%error, "kruise-manager failed");
            ExitCode::FAILURE
        }
    }
}
