//! The cluster examples of `examples/examples/` run against the real API server with the suite's kubeconfig:
//! `cloneset_crud` creates, scales, updates, reads and deletes its CloneSet (no controller for its namespace),
//! and `watch_rollout` follows an image change of a CloneSet that kruise-manager rolls out, and exits 0 once it
//! is rolled out.
//!
//! The examples are separate binaries: `cargo test` builds them into `target/<profile>/examples/`, next to the
//! `deps/` directory of this test binary. `cargo test --test e2e` alone does not build them; the scenario then
//! fails naming the missing file (build them with `cargo build -p kruise-examples --examples`).

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use anyhow::{Context as _, Result, bail, ensure};
use kruise_api::apps::v1beta1::CloneSet;
use kube::Api;
use serde_json::json;

use crate::cloneset_env::Env;
use crate::support::{Cluster, ensure_namespace};

/// The namespace of the CloneSet rolled out by kruise-manager (watched by `watch_rollout`).
const ROLLOUT_NAMESPACE: &str = "e2e-examples";
/// The namespace `cloneset_crud` works in; no controller reconciles CloneSets there.
const CRUD_NAMESPACE: &str = "e2e-examples-crud";
/// How long one example may run.
const EXAMPLE_TIMEOUT: Duration = Duration::from_secs(90);

pub async fn cluster_examples_run_against_the_api_server(cluster: &Cluster) -> Result<()> {
    let cloneset_crud = example_binary("cloneset_crud")?;
    let watch_rollout = example_binary("watch_rollout")?;
    // The manager installs the CRDs at start and runs the CloneSet controller for ROLLOUT_NAMESPACE only.
    let env = Env::start(cluster, ROLLOUT_NAMESPACE).await?;
    let result = async {
        crud_example(cluster, &cloneset_crud).await?;
        watch_example(cluster, &env, &watch_rollout).await
    }
    .await;
    let stopped = env.stop().await;
    result.and(stopped)
}

/// `target/<profile>/examples/<name>`: the test binary is `target/<profile>/deps/e2e-<hash>`.
pub(crate) fn example_binary(name: &str) -> Result<PathBuf> {
    let test_binary = std::env::current_exe().context("the path of the e2e test binary")?;
    let profile_dir = test_binary
        .parent()
        .and_then(Path::parent)
        .with_context(|| format!("no target directory above {}", test_binary.display()))?;
    let path = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    ensure!(
        path.is_file(),
        "the example binary {} is missing: `cargo test --workspace` builds it, or run \
         `cargo build -p kruise-examples --examples` before `cargo test --test e2e`",
        path.display()
    );
    Ok(path)
}

/// Runs `binary` with `args` against the cluster; fails on a non-zero exit with the example's output.
async fn run_example(cluster: &Cluster, binary: &Path, args: &[&str]) -> Result<String> {
    let mut command = tokio::process::Command::new(binary);
    command
        .args(args)
        .env("KUBECONFIG", &cluster.kubeconfig)
        .kill_on_drop(true);
    let output: Output = tokio::time::timeout(EXAMPLE_TIMEOUT, command.output())
        .await
        .with_context(|| format!("{} did not finish in {EXAMPLE_TIMEOUT:?}", binary.display()))?
        .with_context(|| format!("running {}", binary.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        bail!(
            "{} {args:?} exited with {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
            binary.display(),
            output.status
        );
    }
    Ok(stdout)
}

async fn crud_example(cluster: &Cluster, binary: &Path) -> Result<()> {
    ensure_namespace(&cluster.client, CRUD_NAMESPACE).await?;
    let stdout = run_example(cluster, binary, &[CRUD_NAMESPACE]).await?;
    eprintln!("    cloneset_crud printed:\n{}", indent(&stdout));
    let object = format!("{CRUD_NAMESPACE}/cloneset-crud-example");
    for expected in [
        format!("created CloneSet {object}: replicas 1, generation 1"),
        "scaled to 3 replicas, generation 2".to_owned(),
        "image set to nginx:1.25, generation 3".to_owned(),
        "status: none yet (no CloneSet controller has reconciled it)".to_owned(),
        format!("deleted CloneSet {object}"),
    ] {
        ensure!(
            stdout.lines().any(|line| line == expected),
            "cloneset_crud did not print {expected:?}:\n{stdout}"
        );
    }
    let clonesets: Api<CloneSet> = Api::namespaced(cluster.client.clone(), CRUD_NAMESPACE);
    ensure!(
        clonesets.get_opt("cloneset-crud-example").await?.is_none(),
        "CloneSet {object} still exists after cloneset_crud"
    );
    Ok(())
}

async fn watch_example(cluster: &Cluster, env: &Env, binary: &Path) -> Result<()> {
    env.create("web", 2, "nginx:1.24", json!({})).await?;
    env.wait_rolled_out("web", 2, "nginx:1.24").await?;
    // An image change (generation 2), then the example follows the rollout kruise-manager makes.
    let changed = env.set_image("web", "nginx:1.25").await?;
    let generation = changed.metadata.generation.unwrap_or_default();
    ensure!(
        generation == 2,
        "generation {generation} after the image change"
    );
    let stdout = run_example(cluster, binary, &[ROLLOUT_NAMESPACE, "web", "80"]).await?;
    eprintln!("    watch_rollout printed:\n{}", indent(&stdout));
    let lines: Vec<&str> = stdout.lines().collect();
    ensure!(
        lines.last() == Some(&"CloneSet e2e-examples/web is rolled out"),
        "watch_rollout's last line:\n{stdout}"
    );
    ensure!(
        lines.iter().any(|line| line.starts_with(
            "generation 2 (observed 2): updated 2, ready 2, updated and ready 2, total 2 of 2"
        )),
        "watch_rollout never printed the rolled-out state:\n{stdout}"
    );
    // What the example said is what the API server has.
    let status = env.clonesets().get("web").await?.status.unwrap_or_default();
    ensure!(
        status.observed_generation == 2 && status.updated_ready_replicas == 2,
        "status after watch_rollout: observedGeneration {}, updatedReadyReplicas {}",
        status.observed_generation,
        status.updated_ready_replicas
    );
    env.wait_rolled_out("web", 2, "nginx:1.25").await?;

    // A CloneSet that does not exist is an error with a message, not a wait until the timeout.
    let missing = run_example(
        cluster,
        binary,
        &[ROLLOUT_NAMESPACE, "no-such-cloneset", "5"],
    )
    .await;
    let error = match missing {
        Ok(stdout) => bail!("watch_rollout succeeded on a missing CloneSet:\n{stdout}"),
        Err(error) => format!("{error:#}"),
    };
    ensure!(
        error.contains("CloneSet e2e-examples/no-such-cloneset not found"),
        "{error}"
    );
    Ok(())
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("      {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}
