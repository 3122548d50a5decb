//! The end-to-end harness: a real control plane (started through `scripts/control-plane.sh` in a private
//! run directory, or given by `KRUISE_E2E_KUBECONFIG`), child processes that die with the harness, and
//! small polling and HTTP helpers.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, anyhow, bail, ensure};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

/// Why the suite cannot run here (printed once, then the suite passes as skipped, unless
/// [`skipping_forbidden`]).
pub struct Skip(pub String);

/// Under `CI=true` nothing may be skipped: a missing control plane or container runtime fails the run
/// instead (outside CI the scenarios skip with their reason).
pub fn skipping_forbidden() -> bool {
    std::env::var("CI").is_ok_and(|value| value == "true")
}

/// The cluster the scenarios run against.
pub struct Cluster {
    /// A client for it.
    pub client: Client,
    /// Its kubeconfig (for child processes).
    pub kubeconfig: PathBuf,
    /// Where logs of child processes go.
    pub log_dir: PathBuf,
    /// A cluster given by the user (scenarios that would change cluster-wide state skip on it).
    pub external: bool,
    run_dir: Option<PathBuf>,
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn script() -> PathBuf {
    workspace().join("scripts").join("control-plane.sh")
}

impl Cluster {
    /// Reuses `KRUISE_E2E_KUBECONFIG`, or starts a private control plane (skip when it is not installed or
    /// cannot run here; fail when it is installed but does not start).
    pub async fn acquire() -> Result<std::result::Result<Self, Skip>> {
        if let Ok(reason) = std::env::var("KRUISE_E2E_SKIP")
            && !reason.is_empty()
        {
            return Ok(Err(Skip(reason)));
        }
        if let Ok(path) = std::env::var("KRUISE_E2E_KUBECONFIG")
            && !path.is_empty()
        {
            let kubeconfig = PathBuf::from(path);
            let log_dir =
                std::env::temp_dir().join(format!("kruise-rs-e2e-logs-{}", std::process::id()));
            std::fs::create_dir_all(&log_dir)?;
            let client = client_for(&kubeconfig).await?;
            return Ok(Ok(Self {
                client,
                kubeconfig,
                log_dir,
                external: true,
                run_dir: None,
            }));
        }
        let run_dir = std::env::temp_dir().join(format!("kruise-rs-e2e-{}", std::process::id()));
        let started = Instant::now();
        let output = std::process::Command::new(script())
            .arg("start")
            .env("KRUISE_CP_DIR", &run_dir)
            .stdin(Stdio::null())
            .output()
            .context("running scripts/control-plane.sh")?;
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        match output.status.code() {
            Some(0) => {}
            Some(3) => return Ok(Err(Skip(stderr))),
            _ => bail!("the control plane did not start: {stderr}"),
        }
        eprintln!(
            "e2e: control plane started in {:.1}s ({})",
            started.elapsed().as_secs_f64(),
            run_dir.display()
        );
        let kubeconfig = run_dir.join("kubeconfig");
        let cluster = Self {
            client: client_for(&kubeconfig).await?,
            kubeconfig,
            log_dir: run_dir.join("e2e-logs"),
            external: false,
            run_dir: Some(run_dir),
        };
        std::fs::create_dir_all(&cluster.log_dir)?;
        Ok(Ok(cluster))
    }

    /// Stops a private control plane and removes its run directory (idempotent).
    pub fn teardown(&mut self) {
        self.stop(false);
    }

    /// Stops a private control plane but keeps every log of the run (the control plane's, and those of
    /// the processes the scenarios started, in [`Self::log_dir`]) in its run directory, and prints their
    /// paths: what a failed run leaves to look at.
    pub fn teardown_keeping_logs(&mut self) {
        let run_dir = self.run_dir.clone();
        self.stop(true);
        let dirs = [Some(self.log_dir.clone()), run_dir];
        let mut logs: Vec<PathBuf> = dirs
            .iter()
            .flatten()
            .flat_map(|dir| log_files(dir))
            .collect();
        logs.sort();
        logs.dedup();
        if logs.is_empty() {
            return;
        }
        eprintln!("e2e: the logs of this run are kept:");
        for log in logs {
            eprintln!("    {}", log.display());
        }
    }

    fn stop(&mut self, keep_logs: bool) {
        if let Some(run_dir) = self.run_dir.take() {
            let status = std::process::Command::new(script())
                .arg("stop")
                .env("KRUISE_CP_DIR", &run_dir)
                .env("KRUISE_CP_KEEP_LOGS", if keep_logs { "1" } else { "" })
                .stdin(Stdio::null())
                .stderr(Stdio::null())
                .status();
            if !matches!(status, Ok(status) if status.success()) {
                eprintln!(
                    "e2e: stopping the control plane in {} failed",
                    run_dir.display()
                );
            }
        }
    }

    /// A path for a child's log file.
    pub fn log(&self, name: &str) -> PathBuf {
        self.log_dir.join(format!("{name}.log"))
    }

    /// Restarts the private control plane's kube-apiserver on the same port, down for at least `down`
    /// (`scripts/control-plane.sh restart-apiserver`): every watch open before it is answered `410 Gone`
    /// when it resumes. Fails against an external cluster.
    pub async fn restart_api_server(&self, down: Duration) -> Result<()> {
        let Some(run_dir) = self.run_dir.clone() else {
            bail!("cannot restart the API server of an external cluster");
        };
        let output = Command::new(script())
            .arg("restart-apiserver")
            .arg(format!("{:.1}", down.as_secs_f64()))
            .env("KRUISE_CP_DIR", &run_dir)
            .stdin(Stdio::null())
            .output()
            .await
            .context("running scripts/control-plane.sh restart-apiserver")?;
        ensure!(
            output.status.success(),
            "restarting kube-apiserver failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
        Ok(())
    }

    /// The run directory of a private control plane (for the signal handler).
    pub fn run_dir(&self) -> Option<PathBuf> {
        self.run_dir.clone()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// The `*.log` files in `dir` and its subdirectories.
pub fn log_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "log") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Stops the private control plane in `run_dir` (used from the Ctrl-C handler).
pub fn stop_control_plane(run_dir: &Path) {
    let _ = std::process::Command::new(script())
        .arg("stop")
        .env("KRUISE_CP_DIR", run_dir)
        .stdin(Stdio::null())
        .status();
}

/// A client from a kubeconfig file.
pub async fn client_for(kubeconfig: &Path) -> Result<Client> {
    let config = Kubeconfig::read_from(kubeconfig)
        .with_context(|| format!("reading {}", kubeconfig.display()))?;
    let config = Config::from_custom_kubeconfig(config, &KubeConfigOptions::default()).await?;
    Ok(Client::try_from(config)?)
}

/// Polls `check` every 200 ms until it returns `Some`, or fails after `timeout` naming `what` and the
/// last error or state seen.
pub async fn wait_for<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Option<T>>>,
{
    let deadline = Instant::now() + timeout;
    let mut last = String::from("condition not met");
    loop {
        match check().await {
            Ok(Some(value)) => return Ok(value),
            Ok(None) => {}
            Err(error) => last = format!("{error:#}"),
        }
        if Instant::now() >= deadline {
            bail!("timed out after {timeout:?} waiting for {what}: {last}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A free loopback port (bound and released; good enough for tests).
pub fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// `GET http://127.0.0.1:<port><path>`: status code and body.
pub async fn http_get(port: u16, path: &str) -> Result<(u16, String)> {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
    stream
        .write_all(
            format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| anyhow!("not an HTTP response: {response:.80}"))?;
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}

/// A child process (killed when dropped) with its log file.
pub struct Process {
    /// The child.
    pub child: Child,
    /// Its combined output.
    pub log: PathBuf,
}

impl Process {
    /// Starts `program` with `args`, `KUBECONFIG` set, output to `log`.
    pub fn spawn(program: &str, args: &[String], kubeconfig: &Path, log: PathBuf) -> Result<Self> {
        Self::spawn_with_env(program, args, &[], kubeconfig, log)
    }

    /// Like [`Process::spawn`], with extra environment variables.
    pub fn spawn_with_env(
        program: &str,
        args: &[String],
        env: &[(&str, &str)],
        kubeconfig: &Path,
        log: PathBuf,
    ) -> Result<Self> {
        let file = std::fs::File::create(&log)?;
        let child = Command::new(program)
            .args(args)
            .envs(env.iter().copied())
            .env("KUBECONFIG", kubeconfig)
            // KRUISE_E2E_RUST_LOG sets the filter of every spawned process (debugging a scenario).
            .env(
                "RUST_LOG",
                std::env::var("KRUISE_E2E_RUST_LOG").unwrap_or_else(|_| "info".to_owned()),
            )
            .stdin(Stdio::null())
            .stdout(file.try_clone()?)
            .stderr(file)
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("starting {program}"))?;
        Ok(Self { child, log })
    }

    /// Sends SIGTERM (a graceful stop) and waits at most `timeout` for the exit status.
    pub async fn terminate(&mut self, timeout: Duration) -> Result<std::process::ExitStatus> {
        let pid = self
            .child
            .id()
            .ok_or_else(|| anyhow!("the process already exited"))?;
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()?;
        if !status.success() {
            bail!("kill -TERM {pid} failed");
        }
        Ok(tokio::time::timeout(timeout, self.child.wait())
            .await
            .context("no exit after SIGTERM")??)
    }

    /// The last lines of the log (for failure messages).
    pub fn tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(15)..].join("\n")
    }
}

/// Creates (or keeps) a namespace.
pub async fn ensure_namespace(client: &Client, name: &str) -> Result<()> {
    use k8s_openapi::api::core::v1::Namespace;
    use kube::api::{Patch, PatchParams};
    let api: kube::Api<Namespace> = kube::Api::all(client.clone());
    let value =
        serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
    api.patch(
        name,
        &PatchParams::apply("kruise-rs-e2e"),
        &Patch::Apply(&value),
    )
    .await?;
    Ok(())
}

/// `(VmRSS, VmHWM)` in MiB.
pub fn rss(pid: u32) -> Result<(f64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let field = |name: &str| -> f64 {
        status
            .lines()
            .find(|line| line.starts_with(name))
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    Ok((field("VmRSS:"), field("VmHWM:")))
}

/// The `p` quantile (0..=1) of sorted values (nearest rank).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// One Prometheus histogram read from a text exposition: its sum, count and cumulative buckets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Histogram {
    /// `_sum`, in the histogram's unit (seconds).
    pub sum: f64,
    /// `_count`.
    pub count: f64,
    /// `(le, cumulative count)`, in exposition order (ascending `le`, `+Inf` last).
    pub buckets: Vec<(f64, f64)>,
}

impl Histogram {
    /// The histogram `name` in the text exposition `metrics`, over the lines containing `filter` (`""` for
    /// all); empty when it is absent.
    pub fn parse(metrics: &str, name: &str, filter: &str) -> Histogram {
        let lines: Vec<&str> = metrics
            .lines()
            .filter(|line| line.starts_with(name) && line.contains(filter))
            .collect();
        let value = |suffix: &str| -> f64 {
            lines
                .iter()
                .find(|line| line.starts_with(&format!("{name}_{suffix}")))
                .and_then(|line| line.rsplit(' ').next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0.0)
        };
        let buckets = lines
            .iter()
            .filter(|line| line.contains("_bucket"))
            .filter_map(|line| {
                let le = line.split("le=\"").nth(1)?.split('"').next()?;
                let le = if le == "+Inf" {
                    f64::INFINITY
                } else {
                    le.parse().ok()?
                };
                Some((le, line.rsplit(' ').next()?.parse().ok()?))
            })
            .collect();
        Histogram {
            sum: value("sum"),
            count: value("count"),
            buckets,
        }
    }

    /// What was observed after `earlier` (a reading of the same histogram taken before this one).
    pub fn since(&self, earlier: &Histogram) -> Histogram {
        let before = |le: f64| {
            earlier
                .buckets
                .iter()
                .find(|(bound, _)| *bound == le)
                .map_or(0.0, |(_, count)| *count)
        };
        Histogram {
            sum: self.sum - earlier.sum,
            count: self.count - earlier.count,
            buckets: self
                .buckets
                .iter()
                .map(|(le, count)| (*le, count - before(*le)))
                .collect(),
        }
    }

    /// The upper bound (in ms) of the bucket holding the `q` quantile.
    fn quantile_ms(&self, q: f64) -> f64 {
        self.buckets
            .iter()
            .find(|(_, count)| *count >= q * self.count)
            .map_or(f64::NAN, |(le, _)| *le * 1000.0)
    }

    /// How many observations fell above the bucket bound `le_ms` (in ms; a bound of the histogram).
    fn count_above_ms(&self, le_ms: f64) -> f64 {
        let within = self
            .buckets
            .iter()
            .find(|(le, _)| (*le * 1000.0 - le_ms).abs() < 1e-6)
            .map_or(self.count, |(_, count)| *count);
        self.count - within
    }

    /// Count, mean, bucket quantiles (in ms) and how many took over 128 ms, counting `what`.
    pub fn summary(&self, what: &str) -> String {
        if self.count == 0.0 {
            return format!("no {what}");
        }
        format!(
            "{} {what}, mean {:.3} ms, p50 <= {} ms, p99 <= {} ms, {} over 128 ms",
            self.count,
            self.sum / self.count * 1000.0,
            self.quantile_ms(0.5),
            self.quantile_ms(0.99),
            self.count_above_ms(128.0)
        )
    }
}

/// Count, mean and bucket quantiles (in ms) of the Prometheus histogram `name` in the text exposition
/// `metrics`, over the lines containing `filter` (`""` for all), counting `what`.
pub fn histogram_summary(metrics: &str, name: &str, filter: &str, what: &str) -> String {
    Histogram::parse(metrics, name, filter).summary(what)
}
