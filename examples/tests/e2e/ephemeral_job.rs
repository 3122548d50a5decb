//! kruise-manager (the binary) with the node simulator runs an EphemeralJob on the local v1.20 API server.
//!
//! What this can test: the job's selection of two running pods (`status.match: 2`), and how the
//! controller handles a cluster that does not serve ephemeral containers: the local v1.20 API server runs
//! with the `EphemeralContainers` feature gate off, so `pods/ephemeralcontainers` answers 404; the job
//! gets phase `Error` and a `JobError` condition saying ephemeral containers are not enabled, and the
//! controller neither rewrites the status nor reconciles in a loop afterwards (checked over a quiet
//! window through the job's `resourceVersion` and the manager's reconcile counter). It also proves the
//! manager's RBAC reaches the subresource (a missing rule would answer 403, not 404).
//!
//! What this cannot test here: the injection itself. No local API server serves the subresource (v1.20
//! with the gate off), and the simulator is no kubelet that could start an ephemeral container. The
//! request bodies for v1.23+ (`Pod`) and v1.16–v1.22 (`EphemeralContainers`) are checked in
//! `kruise_schedule::ephemeral_job`'s unit tests. Against an external cluster (`KRUISE_E2E_KUBECONFIG`,
//! Kubernetes v1.25 or later with real nodes) the scenario instead checks a real injection: the pods get
//! the job's container marked with `KRUISE_EJOB_ID` and the job reports them.

use std::time::Duration;

use anyhow::{Context as _, Result, bail, ensure};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1alpha1::{EphemeralJob, EphemeralJobStatus};
use kruise_runtime::shutdown;
use kruise_simulator::{Simulator, SimulatorConfig};
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

use crate::manager_process::{ManagerProcess, Webhooks};
use crate::support::{Cluster, ensure_namespace, http_get, wait_for};

const NAMESPACE: &str = "e2e-ejob";
const NODE_PREFIX: &str = "e2e-ejob";
const LABEL: &str = "e2e-ejob=target";
const WAIT: Duration = Duration::from_secs(40);
/// How long the job must stay untouched once it reports the error.
const QUIET: Duration = Duration::from_secs(5);

type SimulatorTask = tokio::task::JoinHandle<Result<(), kruise_simulator::SimulatorError>>;

pub async fn ephemeral_job_reports_a_cluster_without_ephemeral_containers(
    cluster: &Cluster,
) -> Result<()> {
    let mut args: Vec<String> = vec![
        "--create-namespace".into(),
        "--namespace=e2e-ejob-system".into(),
        "--identity=e2e-ephemeraljob".into(),
        "--leader-elect=false".into(),
    ];
    // An external cluster cannot call a webhook on this machine's loopback.
    let webhooks = if cluster.external {
        args.push("--no-webhook".into());
        Webhooks::AsArgumentsSay
    } else {
        Webhooks::Served
    };
    let mut manager = ManagerProcess::spawn(cluster, "ephemeraljob", &args, webhooks, &[]).await?;
    let simulator = if cluster.external {
        None
    } else {
        let config = SimulatorConfig {
            nodes: 1,
            node_prefix: NODE_PREFIX.into(),
            namespace: Some(NAMESPACE.into()),
            ready_delay: Duration::from_millis(200),
            ..SimulatorConfig::default()
        };
        let (stop, stopped) = shutdown::channel();
        let task: SimulatorTask =
            tokio::spawn(Simulator::new(cluster.client.clone(), config).run(stopped));
        Some((stop, task))
    };
    let result = async {
        manager.wait_ready().await?;
        ensure_namespace(&cluster.client, NAMESPACE).await?;
        if cluster.external {
            real_injection(&cluster.client).await
        } else {
            not_enabled(&cluster.client, manager.metrics_port).await
        }
    }
    .await;
    let cleanup = cleanup(&cluster.client).await;
    if let Some((stop, task)) = simulator {
        stop.trigger();
        let _ = tokio::time::timeout(Duration::from_secs(15), task).await;
    }
    let stopped = manager.stop().await;
    result
        .and(cleanup)
        .and(stopped)
        .with_context(|| manager.log_tail())
}

/// Two running pods the job selects (pinned to the simulated node, or scheduled on a real cluster).
async fn start_pods(client: &Client, pinned: bool) -> Result<()> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    for name in ["target-0", "target-1"] {
        let mut spec = json!({
            "containers": [{"name": "main", "image": "busybox:1.36", "command": ["sleep", "3600"]}],
            "terminationGracePeriodSeconds": 0,
            "tolerations": [{"operator": "Exists"}],
        });
        if pinned {
            spec["nodeName"] = json!(format!("{NODE_PREFIX}-0"));
        }
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {"e2e-ejob": "target"}},
            "spec": spec,
        }))?;
        pods.create(&PostParams::default(), &pod).await?;
    }
    wait_for("two running target pods", WAIT, || async {
        let running = pods
            .list(&ListParams::default().labels(LABEL))
            .await?
            .items
            .iter()
            .filter(|pod| pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
            .count();
        Ok((running == 2).then_some(()))
    })
    .await
}

fn job(name: &str) -> Result<EphemeralJob> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "EphemeralJob",
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"e2e-ejob": "target"}}, "parallelism": 2,
            "template": {"ephemeralContainers": [{"name": "debugger", "image": "busybox:1.36",
                "command": ["sh", "-c", "echo hello from $KRUISE_EJOB_ID"],
                "imagePullPolicy": "IfNotPresent", "terminationMessagePolicy": "File"}]}}
    }))?)
}

/// The local v1.20 API server (gate off): `match: 2`, phase `Error`, the `JobError` condition, and quiet.
async fn not_enabled(client: &Client, metrics_port: u16) -> Result<()> {
    start_pods(client, true).await?;
    let jobs: Api<EphemeralJob> = Api::namespaced(client.clone(), NAMESPACE);
    jobs.create(&PostParams::default(), &job("debug")?).await?;
    let status = wait_for("the JobError condition", WAIT, || async {
        Ok(jobs.get("debug").await?.status.filter(|status| {
            status
                .conditions
                .iter()
                .any(|c| c.type_.as_str() == "JobError")
        }))
    })
    .await?;
    ensure!(
        status.matches == 2,
        "match {} (expected 2): {status:?}",
        status.matches
    );
    ensure!(status.phase.as_str() == "Error", "phase: {status:?}");
    let condition = status
        .conditions
        .iter()
        .find(|c| c.type_.as_str() == "JobError")
        .context("no JobError")?;
    ensure!(
        condition.status == "True"
            && condition.reason == "EphemeralContainersNotEnabled"
            && condition
                .message
                .contains("ephemeral containers are not enabled on this cluster"),
        "condition: {condition:?}"
    );
    ensure!(status.start_time.is_some(), "no startTime: {status:?}");

    // Quiet afterwards: no status rewrite, no reconcile loop.
    let before = jobs.get("debug").await?.metadata.resource_version;
    let reconciles_before = reconciles(metrics_port).await?;
    tokio::time::sleep(QUIET).await;
    let after = jobs.get("debug").await?.metadata.resource_version;
    let reconciles_after = reconciles(metrics_port).await?;
    ensure!(
        before == after,
        "the job was rewritten while nothing changed: {before:?} -> {after:?}"
    );
    ensure!(
        reconciles_after.saturating_sub(reconciles_before) <= 2,
        "{} reconciles in {QUIET:?} while nothing changed",
        reconciles_after.saturating_sub(reconciles_before)
    );
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    for pod in pods.list(&ListParams::default().labels(LABEL)).await?.items {
        let injected = pod.spec.and_then(|spec| spec.ephemeral_containers);
        ensure!(
            injected.is_none(),
            "a v1.20 pod without the gate got {injected:?}"
        );
    }
    eprintln!(
        "    (the injection itself is not testable on the local v1.20 API server: set KRUISE_E2E_KUBECONFIG to a v1.25+ cluster)"
    );
    Ok(())
}

/// The EphemeralJob reconciles the manager reports (`kruise_manager_reconcile_total`, any result).
async fn reconciles(metrics_port: u16) -> Result<u64> {
    let (code, text) = http_get(metrics_port, "/metrics").await?;
    ensure!(code == 200, "/metrics answered {code}");
    Ok(text
        .lines()
        .filter(|line| {
            line.starts_with("kruise_manager_reconcile_total{")
                && line.contains("controller=\"ephemeraljob\"")
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .map(|value| value as u64)
        .sum())
}

/// An external cluster (v1.25+, real kubelets): the containers are added, marked, and reported.
async fn real_injection(client: &Client) -> Result<()> {
    let version = client.apiserver_version().await?;
    let minor: u32 = version
        .minor
        .trim_end_matches('+')
        .parse()
        .unwrap_or_default();
    if version.major != "1" || minor < 25 {
        eprintln!(
            "    (skipped: the real injection check needs Kubernetes v1.25 or later, the cluster is {}.{})",
            version.major, version.minor
        );
        return Ok(());
    }
    start_pods(client, false).await?;
    let jobs: Api<EphemeralJob> = Api::namespaced(client.clone(), NAMESPACE);
    let created = jobs.create(&PostParams::default(), &job("debug")?).await?;
    let uid = created.metadata.uid.context("no uid")?;
    let status: EphemeralJobStatus = wait_for("the EphemeralJob to succeed", WAIT, || async {
        Ok(jobs
            .get("debug")
            .await?
            .status
            .filter(|status| matches!(status.phase.as_str(), "Succeeded" | "Failed" | "Error")))
    })
    .await?;
    ensure!(
        status.phase.as_str() == "Succeeded" && status.matches == 2 && status.succeeded == 2,
        "{status:?}"
    );
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    for pod in pods.list(&ListParams::default().labels(LABEL)).await?.items {
        let containers = pod
            .spec
            .and_then(|spec| spec.ephemeral_containers)
            .unwrap_or_default();
        let marked = containers.iter().any(|container| {
            container.name == "debugger"
                && container.env.iter().flatten().any(|env| {
                    env.name == "KRUISE_EJOB_ID" && env.value.as_deref() == Some(uid.as_str())
                })
        });
        if !marked {
            bail!(
                "pod {:?} lacks the marked container: {containers:?}",
                pod.metadata.name
            );
        }
    }
    Ok(())
}

async fn cleanup(client: &Client) -> Result<()> {
    let jobs: Api<EphemeralJob> = Api::namespaced(client.clone(), NAMESPACE);
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let _ = jobs.delete("debug", &DeleteParams::background()).await;
    let _ = pods
        .delete_collection(
            &DeleteParams::background().grace_period(0),
            &ListParams::default().labels(LABEL),
        )
        .await;
    wait_for("the scenario's pods and job to go", WAIT, || async {
        let left = pods
            .list(&ListParams::default().labels(LABEL))
            .await?
            .items
            .len();
        let job_left = jobs.get_opt("debug").await?.is_some();
        Ok((left == 0 && !job_left).then_some(()))
    })
    .await
}
