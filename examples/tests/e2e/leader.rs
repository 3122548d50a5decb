//! Leader election: two kruise-manager processes elect exactly one leader; when the leader is killed
//! (no release) the other takes over within the lease duration; a gracefully stopped leader releases the
//! lease. In process: registered controllers run only on the leader and move with the lease; a leader
//! whose controller dies releases the lease at once. A frozen leader: see `leader_frozen`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use clap::Parser;
use k8s_openapi::api::coordination::v1::Lease;
use kruise_manager::{Manager, ManagerError, ManagerOptions};
use kruise_runtime::controllers::ControllerSet;
use kruise_runtime::shutdown;
use kube::{Api, Client};

use crate::manager_process::{ManagerProcess, Webhooks};
use crate::support::{Cluster, ensure_namespace, http_get, wait_for};

const NAMESPACE: &str = "e2e-leader";
const LEASE_DURATION: Duration = Duration::from_secs(4);
const RETRY: Duration = Duration::from_secs(1);

fn election_args(identity: &str, lease: &str) -> Vec<String> {
    vec![
        format!("--namespace={NAMESPACE}"),
        format!("--identity={identity}"),
        format!("--leader-election-id={lease}"),
        "--no-webhook".into(),
        "--no-install-crds".into(),
        format!("--lease-duration={}s", LEASE_DURATION.as_secs()),
        "--renew-deadline=3s".into(),
        format!("--retry-period={}s", RETRY.as_secs()),
    ]
}

async fn holder(client: &Client, lease: &str) -> Result<Option<String>> {
    let leases: Api<Lease> = Api::namespaced(client.clone(), NAMESPACE);
    Ok(leases
        .get_opt(lease)
        .await?
        .and_then(|lease| lease.spec)
        .and_then(|spec| spec.holder_identity)
        .filter(|holder| !holder.is_empty()))
}

async fn leading(port: u16) -> bool {
    http_get(port, "/metrics").await.is_ok_and(|(_, text)| {
        text.lines()
            .any(|line| line.trim() == "kruise_manager_leader 1")
    })
}

pub async fn two_managers_elect_one_leader(cluster: &Cluster) -> Result<()> {
    let client = &cluster.client;
    ensure_namespace(client, NAMESPACE).await?;
    let lease = "e2e-processes";
    let mut managers = Vec::new();
    for identity in ["e2e-a", "e2e-b"] {
        let args = election_args(identity, lease);
        managers.push(
            ManagerProcess::spawn(cluster, identity, &args, Webhooks::AsArgumentsSay, &[]).await?,
        );
    }
    let result = failover(client, lease, &mut managers).await;
    result.with_context(|| {
        managers
            .iter()
            .map(ManagerProcess::log_tail)
            .collect::<Vec<_>>()
            .join("\n")
    })
}

async fn failover(client: &Client, lease: &str, managers: &mut [ManagerProcess]) -> Result<()> {
    let ports: Vec<u16> = managers
        .iter()
        .map(|manager| manager.metrics_port)
        .collect();
    let first = wait_for("a leader", Duration::from_secs(30), || async {
        holder(client, lease).await
    })
    .await?;
    let leader = usize::from(first == "e2e-b");
    let standby = 1 - leader;
    wait_for(
        "the leader's metrics to say so",
        Duration::from_secs(10),
        || async { Ok(leading(ports[leader]).await.then_some(())) },
    )
    .await?;
    // Exactly one leader, for several renew periods.
    for _ in 0..3 {
        ensure!(
            !leading(ports[standby]).await,
            "both managers claim to lead"
        );
        ensure!(
            holder(client, lease).await?.as_deref() == Some(first.as_str()),
            "the lease changed hands"
        );
        tokio::time::sleep(RETRY).await;
    }

    // Kill the leader: no release, the standby must wait for the lease to expire, then take over.
    let killed = Instant::now();
    managers[leader].process.child.kill().await?;
    let second = wait_for("the standby to take over", LEASE_DURATION * 3, || async {
        Ok(holder(client, lease)
            .await?
            .filter(|holder| *holder != first))
    })
    .await?;
    let took = killed.elapsed();
    eprintln!(
        "    {first} killed; {second} took over after {:.1}s (lease {}s)",
        took.as_secs_f64(),
        LEASE_DURATION.as_secs()
    );
    ensure!(
        took <= LEASE_DURATION + 2 * RETRY + Duration::from_secs(1),
        "takeover took {took:?}"
    );
    wait_for(
        "the new leader's metrics",
        Duration::from_secs(10),
        || async { Ok(leading(ports[standby]).await.then_some(())) },
    )
    .await?;

    // A graceful stop releases the lease at once.
    managers[standby]
        .stop()
        .await
        .context("the leader's graceful stop")?;
    if let Some(still) = holder(client, lease).await? {
        bail!("the lease is still held by {still} after a graceful stop");
    }
    Ok(())
}

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    options: ManagerOptions,
}

pub async fn controllers_run_only_on_the_leader(cluster: &Cluster) -> Result<()> {
    let client = &cluster.client;
    ensure_namespace(client, NAMESPACE).await?;
    let lease = "e2e-in-process";
    let running: Arc<[AtomicUsize; 2]> = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let mut stops = Vec::new();
    let mut tasks = Vec::new();
    for (index, identity) in ["e2e-x", "e2e-y"].iter().enumerate() {
        let mut args = vec!["kruise-manager".to_owned()];
        args.extend(election_args(identity, lease));
        args.push("--metrics-bind-address=127.0.0.1:0".into());
        let options = Cli::try_parse_from(args)?.options;
        let mut controllers = ControllerSet::new();
        let counter = Arc::clone(&running);
        controllers.register_fn("e2e-probe", move |context| {
            let counter = Arc::clone(&counter);
            async move {
                counter[index].fetch_add(1, Ordering::SeqCst);
                context
                    .metrics
                    .observe_reconcile(Duration::from_millis(1), true);
                context.shutdown.wait().await;
                counter[index].fetch_sub(1, Ordering::SeqCst);
                Ok(())
            }
        });
        let (stop, stopped) = shutdown::channel();
        stops.push(stop);
        tasks.push(tokio::spawn(
            Manager::new(options, controllers).run(client.clone(), stopped),
        ));
    }
    let count = |index: usize| running[index].load(Ordering::SeqCst);
    let first = wait_for(
        "one controller running",
        Duration::from_secs(30),
        || async {
            Ok(match (count(0), count(1)) {
                (1, 0) => Some(0),
                (0, 1) => Some(1),
                (0, 0) => None,
                both => bail!("controllers running on both managers: {both:?}"),
            })
        },
    )
    .await?;
    let other = 1 - first;
    stops[first].trigger();
    wait_for(
        "the controller to move to the other manager",
        Duration::from_secs(10),
        || async { Ok((count(first) == 0 && count(other) == 1).then_some(())) },
    )
    .await?;
    stops[other].trigger();
    for task in tasks {
        tokio::time::timeout(Duration::from_secs(15), task)
            .await
            .context("a manager did not stop")???;
    }
    ensure!(
        count(0) == 0 && count(1) == 0,
        "controllers still running after shutdown"
    );
    Ok(())
}

/// A leader whose controller dies (panics) gives its lease up at once and stops with an error, instead of
/// renewing a lease it does nothing with. The lease duration is long (60 s): a takeover well before
/// that is the release, not an expiry.
pub async fn a_leader_whose_controller_dies_releases_the_lease(cluster: &Cluster) -> Result<()> {
    let client = &cluster.client;
    ensure_namespace(client, NAMESPACE).await?;
    let lease = "e2e-dying";
    let died = Arc::new(AtomicBool::new(false));
    let running: Arc<[AtomicUsize; 2]> = Arc::new([AtomicUsize::new(0), AtomicUsize::new(0)]);
    let mut stops = Vec::new();
    let mut tasks = Vec::new();
    for (index, identity) in ["e2e-dying-a", "e2e-dying-b"].iter().enumerate() {
        let mut args = vec![
            "kruise-manager".to_owned(),
            format!("--namespace={NAMESPACE}"),
            format!("--identity={identity}"),
            format!("--leader-election-id={lease}"),
            "--no-webhook".into(),
            "--no-install-crds".into(),
            "--lease-duration=60s".into(),
            "--renew-deadline=50s".into(),
            "--retry-period=1s".into(),
        ];
        args.push("--metrics-bind-address=127.0.0.1:0".into());
        let options = Cli::try_parse_from(args)?.options;
        let mut controllers = ControllerSet::new();
        let died = Arc::clone(&died);
        let counter = Arc::clone(&running);
        controllers.register_fn("e2e-fragile", move |context| {
            let first = !died.swap(true, Ordering::SeqCst);
            let counter = Arc::clone(&counter);
            async move {
                assert!(!first, "e2e-fragile: the first leader's controller breaks");
                counter[index].fetch_add(1, Ordering::SeqCst);
                context.shutdown.wait().await;
                counter[index].fetch_sub(1, Ordering::SeqCst);
                Ok(())
            }
        });
        let (stop, stopped) = shutdown::channel();
        stops.push(stop);
        tasks.push(tokio::spawn(
            Manager::new(options, controllers).run(client.clone(), stopped),
        ));
    }
    let first = wait_for(
        "a manager to stop after its controller died",
        Duration::from_secs(60),
        || async { Ok(tasks.iter().position(tokio::task::JoinHandle::is_finished)) },
    )
    .await?;
    let other = 1 - first;
    let ended = tasks.remove(first).await?;
    match ended {
        Err(ManagerError::LeaderWorkFailed(reason)) => ensure!(
            reason.contains("e2e-fragile"),
            "the failure does not name the controller: {reason}"
        ),
        unexpected => bail!("the leader whose controller died ended with {unexpected:?}"),
    }
    // Released: the standby leads long before the 60 s lease could have expired.
    wait_for(
        "the standby to take over the released lease",
        Duration::from_secs(30),
        || async {
            let holder = holder(client, lease).await?;
            Ok((running[other].load(Ordering::SeqCst) == 1 && holder.is_some()).then_some(holder))
        },
    )
    .await?;
    stops[other].trigger();
    let task = tasks.remove(0);
    tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .context("the standby did not stop")???;
    Ok(())
}
