//! The container images of `scripts/image.sh` run in a real containerd: the archives built from the debug
//! binaries of this test run are imported into a private containerd (`scripts/containerd.sh`, as the
//! node-agent scenarios use), the image configs containerd stored are read back (Entrypoint, User), and each
//! image's entrypoint runs with `--version` in a container (`ctr run`: the image's root filesystem, user and
//! environment), printing what the binary prints on the host. Skips like the other containerd scenarios when
//! containerd cannot run here.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

use crate::node_agents::Runtime;
use crate::support::Cluster;

/// The images `scripts/image.sh` builds, with the user each runs as (`uid:gid`).
const IMAGES: [(&str, &str); 2] = [("kruise-manager", "65532:65532"), ("kruise-daemon", "0:0")];
/// The image name prefix used here (the manifests' default is ghcr.io/kruise-rs).
const REPOSITORY: &str = "localhost/kruise-rs-e2e";

fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn checked(what: &str, output: &Output) -> Result<String> {
    if !output.status.success() {
        bail!(
            "{what} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout).trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// `ctr --address SOCKET -n k8s.io ARGS...`, its standard output.
fn ctr(socket: &str, args: &[&str]) -> Result<String> {
    let output = Command::new("ctr")
        .arg("--address")
        .arg(socket)
        .args(["-n", "k8s.io"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context("running ctr")?;
    checked(&format!("ctr {}", args.join(" ")), &output)
}

/// A blob of containerd's content store, as JSON.
fn content(socket: &str, digest: &str) -> Result<Value> {
    let text = ctr(socket, &["content", "get", digest])?;
    serde_json::from_str(&text).with_context(|| format!("content {digest} is not JSON"))
}

/// The image config containerd stored for `reference`: its target is the manifest (or an index naming it,
/// depending on how the archive was imported), whose `config` names the config blob.
fn stored_config(socket: &str, reference: &str) -> Result<Value> {
    let listing = ctr(socket, &["images", "ls"])?;
    let digest = listing
        .lines()
        .find_map(|line| {
            let mut columns = line.split_whitespace();
            (columns.next() == Some(reference))
                .then(|| columns.nth(1).map(str::to_owned))
                .flatten()
        })
        .with_context(|| format!("{reference} is not among containerd's images: {listing}"))?;
    let mut target = content(socket, &digest)?;
    if target.get("config").is_none() {
        let manifest_digest = target["manifests"][0]["digest"]
            .as_str()
            .with_context(|| format!("target of {reference}: {target}"))?
            .to_owned();
        target = content(socket, &manifest_digest)?;
    }
    let config_digest = target["config"]["digest"]
        .as_str()
        .with_context(|| format!("manifest of {reference}: {target}"))?;
    content(socket, config_digest)
}

pub async fn container_images_run_their_entrypoints(cluster: &Cluster) -> Result<()> {
    let manager = PathBuf::from(env!("CARGO_BIN_EXE_kruise-manager"));
    let daemon = PathBuf::from(env!("CARGO_BIN_EXE_kruise-daemon"));
    let bin_dir = manager
        .parent()
        .context("kruise-manager has no directory")?
        .to_path_buf();
    if daemon.parent() != Some(bin_dir.as_path()) {
        bail!("kruise-manager and kruise-daemon are not in one directory: {manager:?}, {daemon:?}");
    }
    let keep_logs_in = cluster.log_dir.join("runtime-image");
    let mut runtime = match Runtime::start("image", &["image-0".to_owned()], keep_logs_in)? {
        Ok(runtime) => runtime,
        Err(reason) => {
            if crate::support::skipping_forbidden() {
                bail!(
                    "containerd cannot run on this machine, and CI=true forbids skipping: {reason}"
                );
            }
            eprintln!("    SKIPPED: containerd cannot run on this machine: {reason}");
            return Ok(());
        }
    };
    let result = run_images(&runtime, &bin_dir).await;
    runtime.stop(result.is_err());
    result
}

async fn run_images(runtime: &Runtime, bin_dir: &Path) -> Result<()> {
    let socket = runtime
        .endpoints
        .first()
        .and_then(|(_, endpoint)| endpoint.strip_prefix("unix://"))
        .context("no containerd endpoint")?
        .to_owned();
    let out = tempfile::tempdir()?;
    let started = Instant::now();
    let script = repository_root().join("scripts").join("image.sh");
    let bin_dir_arg = bin_dir.to_string_lossy().into_owned();
    let out_arg = out.path().to_string_lossy().into_owned();
    let built = tokio::task::spawn_blocking(move || {
        Command::new(script)
            .args([
                "--bin-dir",
                &bin_dir_arg,
                "--out",
                &out_arg,
                "--repository",
                REPOSITORY,
            ])
            .stdin(Stdio::null())
            .output()
    })
    .await??;
    let listing = checked("scripts/image.sh", &built)?;
    eprintln!(
        "    scripts/image.sh built both archives in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    for (name, user) in IMAGES {
        let (archive, reference) = listing
            .lines()
            .filter_map(|line| line.split_once(' '))
            .find(|(_, reference)| reference.starts_with(&format!("{REPOSITORY}/{name}:")))
            .with_context(|| format!("scripts/image.sh printed no {name} archive: {listing}"))?;
        let version_tag = format!(":{}", env!("CARGO_PKG_VERSION"));
        if !reference.ends_with(&version_tag) {
            bail!("{reference}: not tagged with the workspace version {version_tag}");
        }
        ctr(&socket, &["images", "import", archive])?;

        let config = stored_config(&socket, reference)?;
        let entrypoint: Vec<&str> = config["config"]["Entrypoint"]
            .as_array()
            .with_context(|| format!("{reference}: no Entrypoint in {config}"))?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        if entrypoint != [format!("/usr/local/bin/{name}")] {
            bail!("{reference}: Entrypoint {entrypoint:?}");
        }
        if config["config"]["User"] != user {
            bail!(
                "{reference}: User {} (expected {user})",
                config["config"]["User"]
            );
        }

        // The entrypoint with `--version`, inside the image (its libraries, user and environment).
        let container = format!("e2e-image-{name}-{}", std::process::id());
        let mut args = vec!["run", "--rm", reference, container.as_str()];
        args.extend(entrypoint.iter().copied());
        args.push("--version");
        let in_container = ctr(&socket, &args)?;
        let on_host = checked(
            &format!("{name} --version"),
            &Command::new(bin_dir.join(name)).arg("--version").output()?,
        )?;
        if in_container.trim() != on_host.trim()
            || !in_container.contains(env!("CARGO_PKG_VERSION"))
        {
            bail!(
                "{reference}: `--version` printed {:?} in the container, {:?} on the host",
                in_container.trim(),
                on_host.trim()
            );
        }
        // And `--help`, which needs the binary's whole argument parser.
        let help_container = format!("{container}-help");
        let mut args = vec!["run", "--rm", reference, help_container.as_str()];
        args.extend(entrypoint.iter().copied());
        args.push("--help");
        let help = ctr(&socket, &args)?;
        if !help.contains("Usage:") || !help.contains(name) {
            bail!("{reference}: `--help` printed {help:?}");
        }
        eprintln!("    {reference}: {} (user {user})", in_container.trim());
    }
    Ok(())
}
