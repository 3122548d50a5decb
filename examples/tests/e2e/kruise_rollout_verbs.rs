//! `kruise rollout status|history|undo|restart|approve` and the live `rollout plan KIND/NAME`, run as the
//! binary against the real API server while kruise-manager rolls the CloneSets out: `status` follows an
//! image change to the end through a watch (and times out on a paused rollout), `history` lists the
//! ControllerRevisions, `undo` rolls the pods back to revision 1, `restart` replaces them, `approve`
//! releases one batch of a partitioned rollout, and `plan` reads a workload from the cluster.

use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context as _, Result, ensure};
use k8s_openapi::api::apps::v1::ControllerRevision;
use kube::api::ListParams;
use kube::{Api, ResourceExt};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

use crate::asts_env;
use crate::cloneset_env::{Env, running_image};
use crate::kruise_binary;
use crate::support::{Cluster, wait_for};

const NAMESPACE: &str = "e2e-kruise-rollout";
const WAIT: Duration = Duration::from_secs(60);

/// The `kruise` command with `args`, `-n` [`NAMESPACE`] and the suite's kubeconfig.
fn command(cluster: &Cluster, args: &[&str]) -> tokio::process::Command {
    kruise_binary::command(&cluster.kubeconfig, Some(NAMESPACE), args)
}

/// Runs `kruise args... -n NAMESPACE`, expects exit 0 and returns its output.
async fn succeeds(cluster: &Cluster, args: &[&str]) -> Result<String> {
    kruise_binary::run(&cluster.kubeconfig, Some(NAMESPACE), args)
        .await?
        .succeeded(args)
}

/// Runs `kruise args... -n NAMESPACE` and expects exit `code` with an error line containing every one of
/// `words`.
async fn refused(cluster: &Cluster, args: &[&str], code: i32, words: &[&str]) -> Result<()> {
    kruise_binary::run(&cluster.kubeconfig, Some(NAMESPACE), args)
        .await?
        .refused(args, code, words)
}

pub async fn kruise_rollout_verbs_follow_and_undo(cluster: &Cluster) -> Result<()> {
    let env = Env::start(cluster, NAMESPACE).await?;
    let result = scenario(cluster, &env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

/// The namespace of the Advanced StatefulSet part.
const ASTS_NAMESPACE: &str = "e2e-kruise-rollout-asts";

/// The same verbs on an Advanced StatefulSet rolled out by kruise-manager: `set image`, `rollout status`
/// to the end, `rollout history` with both revisions, `rollout undo` back to the first image.
pub async fn kruise_rollout_verbs_on_an_advanced_statefulset(cluster: &Cluster) -> Result<()> {
    let env = asts_env::start(cluster, ASTS_NAMESPACE, "rollout-asts").await?;
    let result = statefulset_verbs(cluster, &env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn statefulset_verbs(cluster: &Cluster, env: &Env) -> Result<()> {
    let kruise = |args: &'static [&'static str]| async move {
        kruise_binary::run(&cluster.kubeconfig, Some(ASTS_NAMESPACE), args)
            .await?
            .succeeded(args)
    };
    asts_env::create(env, asts_env::statefulset("db", 2, "nginx:1.24", json!({}))).await?;
    asts_env::wait_rolled_out(env, "db", "db", &["db-0", "db-1"], "main", "nginx:1.24").await?;
    kruise(&["set", "image", "asts/db", "main=nginx:1.25"]).await?;
    let status = kruise(&["rollout", "status", "asts/db", "--timeout", "150s"]).await?;
    ensure!(
        status
            .lines()
            .last()
            .is_some_and(|line| line.contains("successfully rolled out")),
        "status: {status:?}"
    );
    asts_env::wait_rolled_out(env, "db", "db", &["db-0", "db-1"], "main", "nginx:1.25").await?;
    let history = kruise(&["rollout", "history", "asts/db"]).await?;
    let rows: Vec<&str> = history.lines().skip(2).collect();
    ensure!(
        history.lines().nth(1) == Some("REVISION  CHANGE-CAUSE")
            && rows.first().is_some_and(|row| row.starts_with("1 "))
            && rows.get(1).is_some_and(|row| row.starts_with("2 ")),
        "history: {history:?}"
    );
    kruise(&["rollout", "undo", "asts/db", "--to-revision", "1"]).await?;
    asts_env::wait_rolled_out(env, "db", "db", &["db-0", "db-1"], "main", "nginx:1.24").await?;
    Ok(())
}

async fn scenario(cluster: &Cluster, env: &Env) -> Result<()> {
    env.create("web", 3, "nginx:1.24", json!({})).await?;
    env.wait_rolled_out("web", 3, "nginx:1.24").await?;
    follow_an_image_change(cluster, env).await?;
    history_and_undo(cluster, env).await?;
    restart(cluster, env).await?;
    approve_and_plan(cluster, env).await
}

/// The paused CloneSet's (current, update) revisions once it has observed the new template.
async fn observed_revisions(env: &Env, name: &str) -> Result<(String, String)> {
    wait_for(
        &format!("{name} to observe its new template"),
        WAIT,
        || async {
            let cloneset = env.clonesets().get(name).await?;
            let status = cloneset.status.unwrap_or_default();
            let observed = status.observed_generation == cloneset.metadata.generation.unwrap_or(0)
                && status.current_revision != status.update_revision;
            Ok(observed.then_some((status.current_revision, status.update_revision)))
        },
    )
    .await
}

/// `status` times out on the paused rollout (exit 1), then follows it to the end once resumed.
async fn follow_an_image_change(cluster: &Cluster, env: &Env) -> Result<()> {
    succeeds(cluster, &["rollout", "pause", "cloneset/web"]).await?;
    succeeds(
        cluster,
        &["set", "image", "cloneset/web", "main=nginx:1.25"],
    )
    .await?;
    let (old, new) = observed_revisions(env, "web").await?;
    refused(
        cluster,
        &["rollout", "status", "cloneset/web", "--timeout", "1s"],
        1,
        &[
            "timed out",
            "cloneset.apps.kruise.io/web",
            "0 out of 3 new pods",
            "(paused)",
        ],
    )
    .await?;

    let mut follower = command(
        cluster,
        &["rollout", "status", "cloneset/web", "--timeout", "60s"],
    );
    let mut child = follower
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdout = BufReader::new(child.stdout.take().context("no stdout")?);
    let mut first = String::new();
    tokio::time::timeout(WAIT, stdout.read_line(&mut first))
        .await
        .context("rollout status printed nothing")??;
    ensure!(
        first.contains(&old) && first.contains(&new) && first.contains("(paused)"),
        "first line of rollout status: {first:?} (revisions {old}, {new})"
    );
    succeeds(cluster, &["rollout", "resume", "cloneset/web"]).await?;
    let mut rest = String::new();
    tokio::time::timeout(WAIT, stdout.read_to_string(&mut rest))
        .await
        .context("rollout status did not end")??;
    let status = tokio::time::timeout(WAIT, child.wait()).await??;
    let mut stderr = String::new();
    if let Some(mut pipe) = child.stderr.take() {
        pipe.read_to_string(&mut stderr).await?;
    }
    ensure!(
        status.success()
            && rest.lines().last().is_some_and(|line| {
                line.starts_with(&format!(
                "cloneset.apps.kruise.io/web successfully rolled out: 3 pods at revision {new} | "
            ))
            }),
        "rollout status: {status}, output {first}{rest}, stderr {stderr:?}"
    );
    ensure!(
        rest.lines().count() >= 2,
        "one line per change, expected several: {first}{rest}"
    );
    env.wait_rolled_out("web", 3, "nginx:1.25").await?;
    Ok(())
}

/// `history` lists both revisions; `undo --to-revision 1` brings nginx:1.24 back to the pods.
async fn history_and_undo(cluster: &Cluster, env: &Env) -> Result<()> {
    let history = succeeds(cluster, &["rollout", "history", "cloneset/web"]).await?;
    let rows: Vec<&str> = history.lines().skip(2).collect();
    ensure!(
        history.starts_with("cloneset.apps.kruise.io/web\nREVISION  CHANGE-CAUSE\n")
            && rows.len() >= 2
            && rows.first().is_some_and(|row| row.starts_with("1 "))
            && rows.get(1).is_some_and(|row| row.starts_with("2 ")),
        "history: {history:?}"
    );
    let first = succeeds(
        cluster,
        &["rollout", "history", "cloneset/web", "--revision", "1"],
    )
    .await?;
    ensure!(
        first.starts_with("cloneset.apps.kruise.io/web with revision #1\n")
            && first.contains("image: nginx:1.24"),
        "history --revision 1: {first:?}"
    );
    refused(
        cluster,
        &["rollout", "undo", "cloneset/web", "--to-revision", "9"],
        2,
        &["unable to find specified revision 9"],
    )
    .await?;

    let undone = succeeds(
        cluster,
        &["rollout", "undo", "cloneset/web", "--to-revision", "1"],
    )
    .await?;
    ensure!(
        undone.trim_end() == "cloneset.apps.kruise.io/web rolled back",
        "undo: {undone:?}"
    );
    let pods = env.wait_rolled_out("web", 3, "nginx:1.24").await?;
    ensure!(
        pods.iter()
            .all(|pod| running_image(pod) == Some("nginx:1.24")),
        "pods after undo: {:?}",
        pods.iter().map(ResourceExt::name_any).collect::<Vec<_>>()
    );
    // The revision now current (the manager renumbers the restored one) is refused as a no-op.
    let current = current_revision_number(env, "web").await?;
    let skipped = succeeds(
        cluster,
        &[
            "rollout",
            "undo",
            "cloneset/web",
            "--to-revision",
            &current.to_string(),
        ],
    )
    .await?;
    ensure!(
        skipped.trim_end()
            == format!(
                "cloneset.apps.kruise.io/web skipped rollback (current template already matches revision {current})"
            ),
        "undo to the current revision: {skipped:?}"
    );
    Ok(())
}

/// The `.revision` of the ControllerRevision named by the CloneSet's `status.updateRevision`.
async fn current_revision_number(env: &Env, name: &str) -> Result<i64> {
    let update = env
        .clonesets()
        .get(name)
        .await?
        .status
        .unwrap_or_default()
        .update_revision;
    let revisions: Api<ControllerRevision> = Api::namespaced(env.client.clone(), &env.namespace);
    let list = revisions.list(&ListParams::default()).await?;
    list.items
        .iter()
        .find(|revision| revision.name_any() == update)
        .and_then(|revision| revision.revision)
        .with_context(|| format!("no ControllerRevision {update}"))
}

/// `restart` stamps the template and the pods are replaced with it; a paused CloneSet is refused.
async fn restart(cluster: &Cluster, env: &Env) -> Result<()> {
    succeeds(cluster, &["rollout", "pause", "cloneset/web"]).await?;
    refused(
        cluster,
        &["rollout", "restart", "cloneset/web"],
        1,
        &["paused", "kruise rollout resume cloneset/web"],
    )
    .await?;
    succeeds(cluster, &["rollout", "resume", "cloneset/web"]).await?;
    let restarted = succeeds(cluster, &["rollout", "restart", "cloneset/web"]).await?;
    ensure!(
        restarted.trim_end() == "cloneset.apps.kruise.io/web restarted",
        "restart: {restarted:?}"
    );
    let cloneset = env.clonesets().get("web").await?;
    let stamp = cloneset
        .spec
        .template
        .metadata
        .as_ref()
        .and_then(|metadata| metadata.annotations.as_ref())
        .and_then(|annotations| annotations.get("kubectl.kubernetes.io/restartedAt"))
        .cloned()
        .context("no restartedAt annotation on the template")?;
    ensure!(
        chrono::DateTime::parse_from_rfc3339(&stamp).is_ok(),
        "restartedAt {stamp:?} is not RFC 3339"
    );
    let pods = env.wait_rolled_out("web", 3, "nginx:1.24").await?;
    ensure!(
        pods.iter()
            .all(|pod| pod.annotations().get("kubectl.kubernetes.io/restartedAt") == Some(&stamp)),
        "pods without the new restartedAt: {:?}",
        pods.iter()
            .map(|pod| (
                pod.name_any(),
                pod.annotations()
                    .get("kubectl.kubernetes.io/restartedAt")
                    .cloned()
            ))
            .collect::<Vec<_>>()
    );
    Ok(())
}

/// A partition holding every pod back: `approve` releases one pod, `status` ends with "partitioned rollout
/// complete", and the live `plan` prints the plan of the CloneSet.
async fn approve_and_plan(cluster: &Cluster, env: &Env) -> Result<()> {
    env.create(
        "canary",
        3,
        "nginx:1.24",
        json!({"updateStrategy": {"rollingUpdate": {"partition": 3, "maxUnavailable": 1}}}),
    )
    .await?;
    env.wait_rolled_out("canary", 3, "nginx:1.24").await?;
    succeeds(
        cluster,
        &["set", "image", "cloneset/canary", "main=nginx:1.25"],
    )
    .await?;
    observed_revisions(env, "canary").await?;

    let plan = succeeds(cluster, &["rollout", "plan", "cloneset/canary"]).await?;
    ensure!(
        plan.starts_with(&format!("CloneSet {NAMESPACE}/canary: step "))
            && plan.contains("\nactions"),
        "live plan: {plan:?}"
    );
    refused(
        cluster,
        &["rollout", "plan", "cloneset/canary", "-f", "x.yaml"],
        2,
        &["without -f and --pods"],
    )
    .await?;

    refused(
        cluster,
        &["rollout", "approve", "cloneset/canary", "--partition", "3"],
        2,
        &["--partition 3", "below the current partition"],
    )
    .await?;
    let approved = succeeds(cluster, &["rollout", "approve", "cloneset/canary"]).await?;
    ensure!(
        approved.trim_end()
            == "cloneset.apps.kruise.io/canary approved: partition 3 -> 2 (1 more pods may update)",
        "approve: {approved:?}"
    );
    let status = succeeds(
        cluster,
        &["rollout", "status", "cloneset/canary", "--timeout", "60s"],
    )
    .await?;
    ensure!(
        status.lines().last().is_some_and(|line| line.starts_with(
            "cloneset.apps.kruise.io/canary partitioned rollout complete: 1 of 3 pods updated"
        )),
        "status of the partitioned rollout: {status:?}"
    );
    let pods = env.pods("canary").await?;
    let images: Vec<Option<&str>> = pods.iter().map(running_image).collect();
    ensure!(
        images
            .iter()
            .filter(|image| **image == Some("nginx:1.25"))
            .count()
            == 1
            && images
                .iter()
                .filter(|image| **image == Some("nginx:1.24"))
                .count()
                == 2,
        "canary images after one approval: {images:?}"
    );
    let strategy = env.clonesets().get("canary").await?.spec.update_strategy;
    ensure!(
        strategy
            .rolling_update
            .as_ref()
            .and_then(|rolling| rolling.partition.as_ref())
            .is_some_and(|partition| *partition
                == k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(2)),
        "partition after approve: {strategy:?}"
    );
    Ok(())
}
