//! kruise-manager as a child process of a scenario, started one way everywhere: the binary under test (or
//! `KRUISE_E2E_MANAGER_BIN`, e.g. a release build to measure), its metrics and health endpoints on a free
//! port, optionally its webhook server on another one (with `--webhook-url` pointing at it), output in the
//! run's log directory as `manager-NAME.log`.

use std::time::Duration;

use anyhow::{Context, Result, ensure};

use crate::cloneset_env::Env;
use crate::support::{Cluster, Process, free_port, http_get, wait_for};

/// How long kruise-manager may take to answer `/readyz` (CRD install, webhook certificates, caches).
pub const READY_WITHIN: Duration = Duration::from_secs(90);

/// How long a graceful stop may take.
pub const STOP_WITHIN: Duration = Duration::from_secs(20);

/// A running kruise-manager process and where it listens.
pub struct ManagerProcess {
    /// The process and its log.
    pub process: Process,
    /// The port of `/metrics`, `/healthz` and `/readyz`.
    pub metrics_port: u16,
    /// The port of the webhook server, when it serves webhooks.
    pub webhook_port: Option<u16>,
}

/// Whether the manager serves its webhooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Webhooks {
    /// `--webhook-bind-address` on a free port, `--webhook-url` at its pod route.
    Served,
    /// The caller's arguments decide (`--no-webhook`, or nothing).
    AsArgumentsSay,
}

impl ManagerProcess {
    /// Starts kruise-manager with `args`, the listen addresses chosen here, and `env` added to its
    /// environment, as the manifests' ServiceAccount of its `--namespace` ([`crate::identities`]). Does
    /// not wait for it to be ready (see [`Self::wait_ready`]).
    pub async fn spawn(
        cluster: &Cluster,
        name: &str,
        args: &[String],
        webhooks: Webhooks,
        env: &[(&str, &str)],
    ) -> Result<Self> {
        let namespace = args
            .iter()
            .find_map(|arg| arg.strip_prefix("--namespace="))
            .unwrap_or("kruise-system");
        let lease = args
            .iter()
            .find_map(|arg| arg.strip_prefix("--leader-election-id="))
            .unwrap_or("kruise-manager");
        let kubeconfig = crate::identities::manager_kubeconfig(cluster, namespace, lease).await?;
        let metrics_port = free_port()?;
        let mut all = args.to_vec();
        all.push(format!("--metrics-bind-address=127.0.0.1:{metrics_port}"));
        let webhook_port = match webhooks {
            Webhooks::Served => {
                let port = free_port()?;
                all.push(format!("--webhook-bind-address=127.0.0.1:{port}"));
                all.push(format!("--webhook-url=https://127.0.0.1:{port}/mutate-pod"));
                Some(port)
            }
            Webhooks::AsArgumentsSay => None,
        };
        let program = std::env::var("KRUISE_E2E_MANAGER_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_kruise-manager").to_owned());
        let process = Process::spawn_with_env(
            &program,
            &all,
            env,
            &kubeconfig,
            cluster.log(&format!("manager-{name}")),
        )?;
        Ok(Self {
            process,
            metrics_port,
            webhook_port,
        })
    }

    /// Waits until `/readyz` answers 200; the error carries the tail of the manager's log.
    pub async fn wait_ready(&self) -> Result<()> {
        wait_ready(self.metrics_port)
            .await
            .map_err(|error| error.context(self.log_tail()))
    }

    /// Stops it gracefully (SIGTERM) and checks that it exited successfully.
    pub async fn stop(&mut self) -> Result<()> {
        let status = self.process.terminate(STOP_WITHIN).await?;
        ensure!(
            status.success(),
            "kruise-manager exited with {status} after SIGTERM"
        );
        Ok(())
    }

    /// Stops it (SIGTERM), waiting for the exit but not judging its status.
    pub async fn terminate(&mut self) -> Result<()> {
        self.process.terminate(STOP_WITHIN).await.map(drop)
    }

    /// The watch requests it has open for `resource` (`pods`, `nodeimages.apps.kruise.io`), from its
    /// `kruise_manager_api_open_watches` gauge (0 when the gauge has no such series).
    pub async fn open_watches(&self, resource: &str) -> Result<i64> {
        let (_, text) = http_get(self.metrics_port, "/metrics").await?;
        open_watches(&text, resource)
    }

    /// Checks that every controller shares one watch of each of `resources` (the shared informers):
    /// waits until the count is 1 (a watch starts when its first controller asks), then checks it again
    /// a little later (a second watch of a slower controller would show by then).
    pub async fn expect_one_watch_each(&self, resources: &[&str]) -> Result<()> {
        for resource in resources {
            wait_for(&format!("one {resource} watch"), READY_WITHIN, || async {
                Ok((self.open_watches(resource).await? >= 1).then_some(()))
            })
            .await?;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        for resource in resources {
            let open = self.open_watches(resource).await?;
            ensure!(
                open == 1,
                "kruise-manager has {open} {resource} watches open; every controller should share one"
            );
        }
        Ok(())
    }

    /// `manager log PATH:` and the last lines of the log, for failure messages.
    pub fn log_tail(&self) -> String {
        format!(
            "manager log {}:\n{}",
            self.process.log.display(),
            self.process.tail()
        )
    }
}

/// Waits until the kruise-manager whose metrics listen on `metrics_port` answers `/readyz` with 200.
pub async fn wait_ready(metrics_port: u16) -> Result<()> {
    wait_for("kruise-manager /readyz", READY_WITHIN, || async {
        Ok(http_get(metrics_port, "/readyz")
            .await
            .ok()
            .filter(|(code, _)| *code == 200)
            .map(|_| ()))
    })
    .await
}

/// The value of `kruise_manager_api_open_watches{resource="RESOURCE"}` in a metrics text.
fn open_watches(metrics: &str, resource: &str) -> Result<i64> {
    let series = format!("kruise_manager_api_open_watches{{resource=\"{resource}\"}} ");
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(&series))
        .map_or(Ok(0), |value| {
            value
                .trim()
                .parse()
                .with_context(|| format!("{series}{value}: not a count"))
        })
}

/// The arguments of a kruise-manager run for one scenario: `--namespace` (created if missing), no leader
/// election, `--identity=e2e-<identity>`, a 5 s shutdown timeout, then `extra`.
pub fn scenario_args(manager_namespace: &str, identity: &str, extra: &[String]) -> Vec<String> {
    let mut args = vec![
        format!("--namespace={manager_namespace}"),
        "--create-namespace".to_owned(),
        "--leader-elect=false".to_owned(),
        format!("--identity=e2e-{identity}"),
        "--shutdown-timeout=5s".to_owned(),
    ];
    args.extend_from_slice(extra);
    args
}

/// The node simulator of `config` for `namespace`, and a kruise-manager serving its webhooks, run with
/// [`scenario_args`] (`manager_namespace`, identity `namespace`) and `extra`, its log named `log_name`. The
/// simulator is stopped again when the manager cannot start.
pub async fn with_served_manager(
    cluster: &Cluster,
    namespace: &str,
    manager_namespace: &str,
    log_name: &str,
    config: kruise_simulator::SimulatorConfig,
    extra: &[String],
) -> Result<(Env, ManagerProcess)> {
    let env = Env::with_simulator(cluster, namespace, config).await?;
    let args = scenario_args(manager_namespace, namespace, extra);
    match ManagerProcess::spawn(cluster, log_name, &args, Webhooks::Served, &[]).await {
        Ok(manager) => Ok((env, manager)),
        Err(error) => {
            let _ = env.stop().await;
            Err(error)
        }
    }
}
