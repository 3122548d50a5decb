//! What the node-agent scenarios share: real containerd instances (one per simulated node, from
//! `scripts/containerd.sh` in a private run directory, stopped at the end), the node simulator in its
//! containerd-backed mode, kruise-manager (the binary: webhooks and controllers) and one kruise-daemon
//! process per node, acting as its ServiceAccount with the RBAC of the manifests ([`crate::identities`]).
//! A node's daemon can be killed (SIGKILL) and started again with the same arguments
//! ([`NodeAgents::kill_daemon`], [`NodeAgents::restart_daemon`]).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use kruise_runtime::shutdown;
use kruise_simulator::{Simulator, SimulatorConfig};
use tokio::task::JoinHandle;

use crate::manager_process::{ManagerProcess, Webhooks};
use crate::support::{Cluster, Process, free_port, http_get, wait_for};

/// The busybox image every containerd has (built from Debian's busybox-static, no registry).
pub const BUSYBOX: &str = "localhost/kruise-test/busybox:1.35";
/// A busybox whose stop signal the runtime cannot parse: stopping it with a grace period fails.
pub const BADSTOP: &str = "localhost/kruise-test/badstop:1.35";
/// A command that runs until SIGTERM, then exits 0 at once.
pub const SERVE: &str = "trap 'exit 0' TERM; while true; do sleep 1; done";

/// Where the simulator's containerd-backed pods write their logs:
/// `<dir>/<namespace>_<pod>_<uid>/<container>_<restart count>.log`.
pub fn pod_log_dir() -> PathBuf {
    std::env::temp_dir().join(format!("kruise-rs-e2e-pod-logs-{}", std::process::id()))
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("scripts")
        .join("containerd.sh")
}

/// Running containerd instances and their registries.
pub struct Runtime {
    dir: PathBuf,
    /// Where the registry and containerd logs are copied when the runtime stops after a failure.
    keep_logs_in: PathBuf,
    /// `(node, endpoint)`, one per node.
    pub endpoints: Vec<(String, String)>,
    /// `127.0.0.1:PORT` of the plain registry (`kruise-test/busybox:v1`, `:v2`).
    pub registry: String,
    /// `127.0.0.1:PORT` of the registry with basic auth (`private/busybox:v3`).
    pub auth_registry: String,
    /// `user:password` of the auth registry.
    pub auth: String,
}

impl Runtime {
    /// Installs (cached) and starts one containerd per node; `Ok(Err(reason))` when containerd cannot run
    /// here (the scenario then skips with that reason).
    /// A failed run copies the registry and containerd logs into `keep_logs_in` before they go.
    pub fn start(
        name: &str,
        nodes: &[String],
        keep_logs_in: PathBuf,
    ) -> Result<std::result::Result<Self, String>> {
        let dir =
            std::env::temp_dir().join(format!("kruise-rs-e2e-cri-{name}-{}", std::process::id()));
        for (step, args) in [
            ("install", vec!["install".to_owned()]),
            ("start", {
                let mut args = vec!["start".to_owned()];
                args.extend(nodes.iter().cloned());
                args
            }),
        ] {
            let output = std::process::Command::new(script())
                .args(&args)
                .env("KRUISE_CRI_DIR", &dir)
                .stdin(Stdio::null())
                .output()
                .with_context(|| format!("running scripts/containerd.sh {step}"))?;
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            match output.status.code() {
                Some(0) => {}
                Some(3) => return Ok(Err(stderr)),
                _ => bail!("scripts/containerd.sh {step} failed: {stderr}"),
            }
        }
        let mut runtime = Self {
            dir,
            keep_logs_in,
            endpoints: Vec::new(),
            registry: String::new(),
            auth_registry: String::new(),
            auth: String::new(),
        };
        let output = std::process::Command::new(script())
            .arg("env")
            .env("KRUISE_CRI_DIR", &runtime.dir)
            .output()?;
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let Some((key, value)) = line.trim_start_matches("export ").split_once('=') else {
                continue;
            };
            let value = value.trim_matches('\'').to_owned();
            match key {
                "KRUISE_CRI_ENDPOINTS" => {
                    runtime.endpoints = value
                        .split(',')
                        .filter_map(|pair| pair.split_once('='))
                        .map(|(node, endpoint)| (node.to_owned(), endpoint.to_owned()))
                        .collect();
                }
                "KRUISE_CRI_REGISTRY" => runtime.registry = value,
                "KRUISE_CRI_AUTH_REGISTRY" => runtime.auth_registry = value,
                "KRUISE_CRI_AUTH" => runtime.auth = value,
                _ => {}
            }
        }
        if runtime.endpoints.len() != nodes.len() {
            bail!(
                "scripts/containerd.sh env: endpoints {:?}",
                runtime.endpoints
            );
        }
        Ok(Ok(runtime))
    }

    /// Stops everything it started and removes its files (idempotent). With `keep_logs`, the registry and
    /// containerd logs are first copied into the directory given to [`Self::start`]; their new paths are
    /// returned.
    pub fn stop(&mut self, keep_logs: bool) -> Vec<PathBuf> {
        if self.endpoints.is_empty() {
            return Vec::new();
        }
        self.endpoints.clear();
        let kept = if keep_logs {
            self.copy_logs()
        } else {
            Vec::new()
        };
        let _ = std::process::Command::new(script())
            .arg("stop")
            .env("KRUISE_CRI_DIR", &self.dir)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .status();
        kept
    }

    /// Copies `registry.log`, `registry-auth.log` and each node's `containerd.log` (as `containerd-NODE.log`).
    fn copy_logs(&self) -> Vec<PathBuf> {
        let mut sources: Vec<(PathBuf, String)> = ["registry.log", "registry-auth.log"]
            .iter()
            .map(|name| (self.dir.join(name), (*name).to_owned()))
            .collect();
        if let Ok(nodes) = std::fs::read_dir(self.dir.join("nodes")) {
            for node in nodes.flatten() {
                let name = node.file_name().to_string_lossy().into_owned();
                sources.push((
                    node.path().join("containerd.log"),
                    format!("containerd-{name}.log"),
                ));
            }
        }
        if std::fs::create_dir_all(&self.keep_logs_in).is_err() {
            return Vec::new();
        }
        sources
            .into_iter()
            .filter_map(|(source, name)| {
                let target = self.keep_logs_in.join(name);
                std::fs::copy(&source, &target).ok().map(|_| target)
            })
            .collect()
    }
}

impl Drop for Runtime {
    /// A runtime dropped before [`Runtime::stop`] belongs to a scenario that did not finish (it timed out or
    /// failed while starting): its logs are kept.
    fn drop(&mut self) {
        let kept = self.stop(true);
        if !kept.is_empty() {
            eprintln!("    runtime logs kept in {}", self.keep_logs_in.display());
        }
    }
}

/// The simulator, kruise-manager and the daemons of one scenario, stopped when dropped (the runtime last).
pub struct NodeAgents {
    /// The node names.
    pub nodes: Vec<String>,
    /// The kruise-daemon processes, one per node, with their health ports.
    pub daemons: Vec<(Process, u16)>,
    /// How each daemon was started (same order as `daemons`), to start it again.
    launches: Vec<DaemonLaunch>,
    /// The logs of daemon processes that were killed and replaced.
    replaced_logs: Vec<PathBuf>,
    manager: ManagerProcess,
    /// Whether [`Self::stop_manager`] already stopped the manager.
    manager_stopped: bool,
    simulator: Option<(shutdown::Trigger, JoinHandle<()>)>,
    /// The runtime (stopped after everything else).
    pub runtime: Runtime,
}

impl NodeAgents {
    /// Starts containerd for `nodes` (`<prefix>-0`, ...), kruise-manager, the simulator (pods of
    /// `namespace`) and a daemon per node. `Ok(None)` when the scenario must skip (reason printed).
    pub async fn start(
        cluster: &Cluster,
        prefix: &str,
        nodes: usize,
        namespace: &str,
    ) -> Result<Option<Self>> {
        if cluster.external {
            eprintln!(
                "    (skipped on KRUISE_E2E_KUBECONFIG: the cluster cannot call a webhook on this machine's loopback)"
            );
            return Ok(None);
        }
        let names: Vec<String> = (0..nodes)
            .map(|index| format!("{prefix}-{index}"))
            .collect();
        let keep_logs_in = cluster.log_dir.join(format!("runtime-{prefix}"));
        let runtime = match Runtime::start(prefix, &names, keep_logs_in)? {
            Ok(runtime) => runtime,
            Err(reason) => {
                if crate::support::skipping_forbidden() {
                    bail!(
                        "containerd cannot run on this machine, and CI=true forbids skipping: {reason}"
                    );
                }
                eprintln!("    SKIPPED: containerd cannot run on this machine: {reason}");
                return Ok(None);
            }
        };
        crate::support::ensure_namespace(&cluster.client, namespace).await?;
        let args: Vec<String> = [
            "--create-namespace".to_owned(),
            format!("--identity=e2e-{prefix}"),
            format!("--leader-election-id=e2e-{prefix}"),
        ]
        .into();
        let manager = ManagerProcess::spawn(
            cluster,
            prefix,
            &args,
            Webhooks::Served,
            &[("KRUISE_NODEIMAGE_CREATION_DELAY", "0s")],
        )
        .await?;
        let config = SimulatorConfig {
            nodes,
            node_prefix: prefix.into(),
            namespace: Some(namespace.into()),
            delete_nodes_on_exit: true,
            cri_endpoints: runtime.endpoints.clone(),
            pod_log_dir: pod_log_dir(),
            ..SimulatorConfig::default()
        };
        let (stop, stopped) = shutdown::channel();
        let client = cluster.client.clone();
        let simulator = tokio::spawn(async move {
            if let Err(error) = Simulator::new(client, config).run(stopped).await {
                eprintln!("    simulator failed: {error}");
            }
        });
        let mut daemons = Vec::new();
        let mut launches = Vec::new();
        // The daemons run with the manifest's ServiceAccount and roles, not the suite's admin token.
        let daemon_kubeconfig = crate::identities::daemon_kubeconfig(cluster).await?;
        for (node, endpoint) in &runtime.endpoints {
            let port = free_port()?;
            let launch = DaemonLaunch {
                // `KRUISE_E2E_DAEMON_BIN` runs another build (a release one, to measure it).
                program: std::env::var("KRUISE_E2E_DAEMON_BIN")
                    .unwrap_or_else(|_| env!("CARGO_BIN_EXE_kruise-daemon").to_owned()),
                args: vec![
                    format!("--node-name={node}"),
                    format!("--cri-endpoint={endpoint}"),
                    format!("--health-bind-address=127.0.0.1:{port}"),
                ],
                kubeconfig: daemon_kubeconfig.clone(),
                log: cluster.log(&format!("daemon-{node}")),
                starts: 1,
            };
            daemons.push((launch.spawn(launch.log.clone())?, port));
            launches.push(launch);
        }
        let agents = Self {
            nodes: names,
            daemons,
            launches,
            replaced_logs: Vec::new(),
            manager,
            manager_stopped: false,
            simulator: Some((stop, simulator)),
            runtime,
        };
        agents.manager.wait_ready().await?;
        for (_, port) in &agents.daemons {
            daemon_healthy(*port).await?;
        }
        Ok(Some(agents))
    }

    /// Kills the daemon of node number `index` at once (SIGKILL: no graceful stop, nothing it was doing
    /// is finished) and waits for it to be gone.
    pub async fn kill_daemon(&mut self, index: usize) -> Result<()> {
        let (daemon, _) = self
            .daemons
            .get_mut(index)
            .with_context(|| format!("no daemon number {index}"))?;
        daemon.child.kill().await.context("killing kruise-daemon")
    }

    /// Starts the daemon of node number `index` again, with the arguments (node, runtime endpoint, health
    /// port) and identity it had, and waits for its `/healthz`. Its output goes to a new log,
    /// `daemon-NODE-start-N.log`; the old one is kept with the scenario's logs.
    pub async fn restart_daemon(&mut self, index: usize) -> Result<()> {
        let launch = self
            .launches
            .get_mut(index)
            .with_context(|| format!("no daemon number {index}"))?;
        launch.starts += 1;
        let stem = launch.log.with_extension("");
        let log = PathBuf::from(format!("{}-start-{}.log", stem.display(), launch.starts));
        let process = launch.spawn(log)?;
        let (daemon, port) = self
            .daemons
            .get_mut(index)
            .with_context(|| format!("no daemon number {index}"))?;
        let old = std::mem::replace(daemon, process);
        self.replaced_logs.push(old.log.clone());
        daemon_healthy(*port).await
    }

    /// Stops kruise-manager before the end of the scenario (gracefully, checking its exit), for checks of
    /// what the daemons do on their own; [`Self::finish`] then leaves it alone.
    pub async fn stop_manager(&mut self) -> Result<()> {
        self.manager_stopped = true;
        self.manager.stop().await
    }

    /// The tails of the manager's and the daemons' logs (for failure messages).
    pub fn logs(&self) -> String {
        let mut text = self.manager.log_tail();
        for (daemon, _) in &self.daemons {
            text.push_str(&format!(
                "\ndaemon log {}:\n{}",
                daemon.log.display(),
                daemon.tail()
            ));
        }
        text
    }

    /// The resident memory of each daemon process (`VmRSS` of /proc/PID/status), in KiB.
    pub fn daemon_rss_kib(&self) -> Vec<u64> {
        self.daemons
            .iter()
            .filter_map(|(process, _)| process.child.id())
            .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
            .filter_map(|status| {
                status
                    .lines()
                    .find(|line| line.starts_with("VmRSS:"))
                    .and_then(|line| line.split_whitespace().nth(1))
                    .and_then(|kib| kib.parse().ok())
            })
            .collect()
    }

    /// Ends the scenario whose `result` is given: stops the daemons, the manager (gracefully: it removes
    /// its webhook configuration), the simulator (which deletes its nodes) and the runtime. When the scenario
    /// failed, the error also carries the tails of the manager's and the daemons' logs and the paths of every
    /// log kept for it (manager, daemons, registries, containerd), which stay in the run directory, are
    /// printed, and the error names that directory.
    pub async fn finish(mut self, result: Result<()>) -> Result<()> {
        let failed = result.is_err();
        let tails = if failed { self.logs() } else { String::new() };
        for (daemon, _) in &mut self.daemons {
            let _ = daemon.terminate(Duration::from_secs(10)).await;
        }
        let stopped = if self.manager_stopped {
            Ok(())
        } else {
            self.manager.terminate().await
        };
        if let Some((stop, task)) = self.simulator.take() {
            stop.trigger();
            let _ = tokio::time::timeout(Duration::from_secs(15), task).await;
        }
        let mut kept: Vec<PathBuf> = self.runtime.stop(failed);
        match result {
            Ok(()) => stopped,
            Err(error) => {
                kept.push(self.manager.process.log.clone());
                kept.extend(self.daemons.iter().map(|(daemon, _)| daemon.log.clone()));
                kept.extend(self.replaced_logs.iter().cloned());
                kept.sort();
                eprintln!("{tails}");
                eprintln!("    logs kept for this scenario:");
                for path in &kept {
                    eprintln!("      {}", path.display());
                }
                let log = &self.manager.process.log;
                let dir = log.parent().unwrap_or(log);
                Err(error.context(format!("logs kept in {}", dir.display())))
            }
        }
    }
}

/// How a kruise-daemon was started: enough to start it again the same way.
struct DaemonLaunch {
    program: String,
    args: Vec<String>,
    kubeconfig: PathBuf,
    /// The first process's log.
    log: PathBuf,
    /// How many processes were started so far.
    starts: u32,
}

impl DaemonLaunch {
    fn spawn(&self, log: PathBuf) -> Result<Process> {
        Process::spawn(&self.program, &self.args, &self.kubeconfig, log)
    }
}

/// Waits for a daemon's `/healthz` on `port` to answer 200.
async fn daemon_healthy(port: u16) -> Result<()> {
    wait_for(
        "kruise-daemon /healthz",
        Duration::from_secs(30),
        || async {
            Ok(http_get(port, "/healthz")
                .await
                .ok()
                .filter(|(code, _)| *code == 200)
                .map(|_| ()))
        },
    )
    .await
}
