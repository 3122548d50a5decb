//! kube-apiserver restarted in the middle of CloneSet work (`scripts/control-plane.sh restart-apiserver`):
//! every connection of kruise-manager breaks, its requests in flight fail, and when the API server is
//! back every watch it resumes is answered `410 Gone` (etcd moved on while the server was down), so its
//! informers must list again. Nothing may be lost or doubled:
//!
//! * an in-place rollout of 10 pods with `maxUnavailable: 2`, the API server restarted once it is under
//!   way: it finishes with the same 10 pods, each updated once, never more than 2 unavailable and never
//!   more than 10 pods on any event of a pod watch;
//! * a scale-up from 10 to 30 (slow-start batches of creations), the API server restarted while
//!   creations are in flight: exactly 20 pods are created (counted in the API server's audit log: a
//!   create answered 201), no instance id twice, never more than 30 pods on any watch event;
//! * the manager's `informer_lists_total` / `informer_watch_errors_total{reason="gone"}` show that its pod
//!   watch really got `410 Gone` and listed again after each restart.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use kube::ResourceExt;
use serde_json::json;

use crate::audit_log::{audit_log_path, read_audit_log};
use crate::cloneset_env::{
    Env, ManagerHandle, WAIT, describe, identities, lifecycle, restarts, running_image,
    simulator_config,
};
use crate::pod_watch::PodWatch;
use crate::support::{Cluster, http_get, wait_for};

const NAMESPACE: &str = "e2e-cs-api-restart";
const CLONESET: &str = "web";
const INSTANCE_ID: &str = "apps.kruise.io/cloneset-instance-id";
/// How long the API server stays down (at least; its start takes longer).
const DOWN: Duration = Duration::from_secs(2);

pub async fn cloneset_survives_an_api_server_restart(cluster: &Cluster) -> Result<()> {
    if cluster.run_dir().is_none() {
        eprintln!("    skipped: restarting the API server needs the private control plane");
        return Ok(());
    }
    let mut config = simulator_config(NAMESPACE);
    // Slow container restarts, so the rollout is still under way when the API server goes down.
    config.restart_delay = Duration::from_secs(2);
    let mut env = Env::with_simulator(cluster, NAMESPACE, config).await?;
    // Two creations per reconcile: a 10 -> 30 scale-up takes ten reconciles, each after the last one's
    // creations were observed, so the API server goes down with creations still to make.
    env.manager = Some(
        ManagerHandle::child(
            cluster,
            NAMESPACE,
            "cs-api-restart",
            &["--cloneset-max-creations-per-reconcile=2"],
        )
        .await?,
    );
    let result = match env.wait_for_api().await {
        Ok(()) => scenario(cluster, &env).await,
        Err(error) => Err(error),
    };
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn scenario(cluster: &Cluster, env: &Env) -> Result<()> {
    let metrics_port = match &env.manager {
        Some(ManagerHandle::Child(manager)) => manager.metrics_port,
        _ => bail!("the scenario needs kruise-manager as a child process"),
    };
    env.create(
        CLONESET,
        10,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 2}}}),
    )
    .await?;
    let before = env.wait_rolled_out(CLONESET, 10, "nginx:1.25").await?;
    ensure!(
        pod_lists(metrics_port).await? == 1,
        "kruise-manager listed pods more than once before any restart"
    );

    // 1. An in-place rollout.
    let watch = PodWatch::start(env.pods_api(), CLONESET);
    env.set_image(CLONESET, "nginx:1.26").await?;
    wait_for("the rollout under way", WAIT, || async {
        let pods = env.pods(CLONESET).await?;
        let started = pods
            .iter()
            .filter(|p| lifecycle(p) == "Updating" || running_image(p) == Some("nginx:1.26"))
            .count();
        Ok((1..10).contains(&started).then_some(()))
    })
    .await?;
    let restarting = Instant::now();
    cluster.restart_api_server(DOWN).await?;
    let restarted = Instant::now();
    let after = env.wait_rolled_out(CLONESET, 10, "nginx:1.26").await?;
    eprintln!(
        "    in-place rollout: kube-apiserver down and back in {:.1}s, the rollout done {:.1}s later",
        (restarted - restarting).as_secs_f64(),
        restarted.elapsed().as_secs_f64()
    );
    let seen = watch.stop();
    ensure!(
        identities(&before) == identities(&after),
        "pods were lost or added across the restart:\nbefore {:?}\nafter  {:?}",
        identities(&before),
        identities(&after)
    );
    for pod in &after {
        ensure!(
            restarts(pod) == 1,
            "{} restarted {} times",
            describe(pod),
            restarts(pod)
        );
    }
    eprintln!(
        "    pod watch: at most {} unavailable, {} pods at once",
        seen.max_unavailable, seen.max_pods
    );
    seen.check(2, 10)?;
    ensure!(
        seen.max_unavailable >= 1,
        "the pod watch never saw a pod updating"
    );
    expect_relisted(metrics_port, 2).await?;

    // 2. A scale-up, the API server restarted while creations are in flight.
    let audit_log = audit_log_path(cluster).context("no audit log")?;
    let creates_before = pod_creates(&audit_log)?;
    let watch = PodWatch::start(env.pods_api(), CLONESET);
    env.patch(CLONESET, json!({"spec": {"replicas": 30}}))
        .await?;
    // Creations are bounded per reconcile (see the manager's arguments), so the scale-up takes several
    // reconciles and the restart lands in it; a scale-up that was quicker than this poll is still judged.
    let under_way = wait_for("the scale-up under way", WAIT, || async {
        let pods = env.pods(CLONESET).await?.len();
        Ok((pods > 10).then_some(pods))
    })
    .await?;
    eprintln!("    scale-up: kube-apiserver restarted with {under_way} of 30 pods created");
    let restarting = Instant::now();
    cluster.restart_api_server(DOWN).await?;
    let restarted = Instant::now();
    let scaled = env.wait_rolled_out(CLONESET, 30, "nginx:1.26").await?;
    eprintln!(
        "    scale-up: kube-apiserver down and back in {:.1}s, 30 pods Ready {:.1}s later",
        (restarted - restarting).as_secs_f64(),
        restarted.elapsed().as_secs_f64()
    );
    let seen = watch.stop();
    seen.check(30, 30)?;
    let created: Vec<String> = pod_creates(&audit_log)?
        .into_iter()
        .skip(creates_before.len())
        .collect();
    let unique: BTreeSet<&String> = created.iter().collect();
    ensure!(
        created.len() == 20 && unique.len() == 20,
        "kruise-manager created {} pods ({} names) to scale from 10 to 30: {created:?}",
        created.len(),
        unique.len()
    );
    let ids: BTreeSet<String> = scaled
        .iter()
        .filter_map(|pod| pod.labels().get(INSTANCE_ID).cloned())
        .collect();
    ensure!(
        ids.len() == 30,
        "{} distinct instance ids among 30 pods",
        ids.len()
    );
    expect_relisted(metrics_port, 3).await
}

/// The pods kruise-manager created in the namespace so far (a create answered 201), in audit order.
fn pod_creates(audit_log: &std::path::Path) -> Result<Vec<String>> {
    Ok(read_audit_log(audit_log)?
        .into_iter()
        .filter(|event| {
            event.verb == "create"
                && event.user_agent.starts_with("kruise-manager/")
                && event.response_status.as_ref().and_then(|s| s.code) == Some(201)
        })
        .filter_map(|event| {
            let object = event.object_ref?;
            (object.resource == "pods" && object.namespace.as_deref() == Some(NAMESPACE))
                .then_some(object.name)
                .flatten()
        })
        .collect())
}

/// Waits until kruise-manager's pod informer has stored `lists` full lists and has seen a watch answered
/// `410 Gone` (the API server restarts `lists - 1` times).
async fn expect_relisted(metrics_port: u16, lists: u64) -> Result<()> {
    wait_for(
        &format!("kruise-manager's pod informer to list {lists} times"),
        WAIT,
        || async { Ok((pod_lists(metrics_port).await? >= lists).then_some(())) },
    )
    .await?;
    let (_, text) = http_get(metrics_port, "/metrics").await?;
    let gone = series(
        &text,
        r#"kruise_manager_informer_watch_errors_total{resource="pods",reason="gone"}"#,
    );
    eprintln!(
        "    kruise-manager's pod informer: {lists}+ lists, {gone} watches answered 410 Gone"
    );
    ensure!(
        gone >= lists - 1,
        "the pod watch was answered 410 Gone {gone} times after {} restarts",
        lists - 1
    );
    Ok(())
}

async fn pod_lists(metrics_port: u16) -> Result<u64> {
    let (_, text) = http_get(metrics_port, "/metrics").await?;
    Ok(series(
        &text,
        r#"kruise_manager_informer_lists_total{resource="pods"}"#,
    ))
}

/// The value of one counter series (0 when absent).
fn series(text: &str, name: &str) -> u64 {
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or(0)
}
