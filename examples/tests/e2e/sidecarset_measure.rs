//! Measurement (not a pass/fail check, run on demand): the pod webhook's latency with two matching
//! SidecarSets under 200 concurrent requests, and kruise-manager's memory with 100 SidecarSets and 5,000
//! pods in its stores.
//!
//! kruise-manager runs as a child process (the build of the test: `scripts/measure-sidecarset.sh` runs
//! it in release). The load generator sends AdmissionReviews of a pod CREATE (a realistic 3-container pod
//! that two SidecarSets match: a log agent sharing the app's volumes, and a hot-upgrade proxy with
//! transferred env and an init container) straight to `/mutate-pod` over HTTPS on loopback, trusting the
//! caBundle the manager wrote: 200 connections (kept alive, as kube-apiserver does), each sending its
//! requests one after another. Every answer must allow the pod with a patch. Then 98 more SidecarSets
//! (other selectors) and 5,000 pods (created through the API server, so they also pass the webhook) are
//! added, and the manager's RSS is read from `/proc`.
//!
//! Runs only with `KRUISE_E2E_MEASURE=1` (see `scripts/measure-sidecarset.sh`); otherwise it says so and
//! passes. `KRUISE_E2E_MEASURE_REQUESTS` (default 20,000) and `KRUISE_E2E_MEASURE_PODS` (default 5,000)
//! change the sizes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use axum::body::Bytes;
use futures::StreamExt;
use http_body_util::{BodyExt, Full};
use k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::SidecarSet;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use tokio::net::TcpStream;

use crate::manager_process::{ManagerProcess, Webhooks};
use crate::sidecarset::{MANAGER_NAMESPACE, sidecarsets, wait_for_manager};
use crate::support::{
    Cluster, ensure_namespace, histogram_summary, http_get, percentile, rss, wait_for,
};

const NAMESPACE: &str = "e2e-sidecarset-measure";
const CONNECTIONS: usize = 200;
const SIDECARSETS: usize = 100;

fn size(variable: &str, default: usize) -> usize {
    std::env::var(variable)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

pub async fn sidecarset_measure_webhook_and_memory(cluster: &Cluster) -> Result<()> {
    if std::env::var("KRUISE_E2E_MEASURE").as_deref() != Ok("1") {
        eprintln!("    skipped: set KRUISE_E2E_MEASURE=1 (scripts/measure-sidecarset.sh)");
        return Ok(());
    }
    if cluster.external {
        eprintln!(
            "    skipped on KRUISE_E2E_KUBECONFIG: the cluster cannot call a webhook on loopback"
        );
        return Ok(());
    }
    let client = cluster.client.clone();
    ensure_namespace(&client, NAMESPACE).await?;
    let args = crate::manager_process::scenario_args(
        MANAGER_NAMESPACE,
        "sidecarset-measure",
        &[
            "--log-format=json".to_owned(),
            format!("--cloneset-namespace={NAMESPACE}"),
        ],
    );
    let mut manager =
        ManagerProcess::spawn(cluster, "sidecarset-measure", &args, Webhooks::Served, &[]).await?;
    let pid = manager.process.child.id().context("no manager pid")?;
    let webhook_port = manager.webhook_port.context("no webhook port")?;
    let result = measure(&client, pid, manager.metrics_port, webhook_port).await;
    let cleaned = cleanup(&client).await;
    let stopped = manager.terminate().await;
    result
        .and(cleaned)
        .and(stopped)
        .with_context(|| manager.log_tail())
}

async fn cleanup(client: &Client) -> Result<()> {
    let sets = sidecarsets(client);
    for set in sets.list(&ListParams::default()).await? {
        let name = set.metadata.name.unwrap_or_default();
        if name.starts_with("measure-") {
            let _ = sets.delete(&name, &DeleteParams::default()).await;
        }
    }
    Api::<Pod>::namespaced(client.clone(), NAMESPACE)
        .delete_collection(
            &DeleteParams::default().grace_period(0),
            &ListParams::default(),
        )
        .await?;
    Ok(())
}

/// The two SidecarSets the measured pod matches (those of the injection benchmark), and `others` more
/// that select other pods.
fn sidecarset_specs(others: usize) -> Vec<Value> {
    let mut specs = vec![
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
            "metadata": {"name": "measure-log-agent"}, "spec": {
            "selector": {"matchLabels": {"app": "bench"}},
            "containers": [{"name": "log-agent", "image": "registry.example.com/log-agent:2.1",
                "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}},
                "volumeMounts": [{"name": "agent-conf", "mountPath": "/etc/agent"}],
                "shareVolumePolicy": {"type": "enabled"}}],
            "volumes": [{"name": "agent-conf", "configMap": {"name": "agent-conf"}}]}}),
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
            "metadata": {"name": "measure-mesh"}, "spec": {
            "selector": {"matchLabels": {"app": "bench"}},
            "initContainers": [{"name": "mesh-init", "image": "registry.example.com/mesh-init:1.0"}],
            "containers": [{"name": "envoy", "image": "registry.example.com/envoy:1.30",
                "ports": [{"containerPort": 15001}],
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 15021}},
                "upgradeStrategy": {"upgradeType": "HotUpgrade",
                    "hotUpgradeEmptyImage": "registry.example.com/empty:1"},
                "transferEnv": [{"sourceContainerName": "c0", "envNames": ["POD_NAME", "REGION"]}]}],
            "imagePullSecrets": [{"name": "registry"}]}}),
    ];
    for index in 0..others {
        specs.push(
            json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet",
            "metadata": {"name": format!("measure-other-{index}")}, "spec": {
            "selector": {"matchLabels": {"app": format!("other-{index}")}},
            "containers": [{"name": format!("agent-{index}"), "image": "busybox:1.35",
                "command": ["sleep", "999d"]}]}}),
        );
    }
    specs
}

/// A realistic pod: three containers with env, resources, probes and a volume each.
fn pod(name: &str) -> Value {
    let containers: Vec<Value> = (0..3)
        .map(|index| {
            json!({"name": format!("c{index}"), "image": format!("registry.example.com/app-{index}:1.0"),
                "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                    {"name": "REGION", "value": "eu-1"}, {"name": "LOG_LEVEL", "value": "info"}],
                "ports": [{"containerPort": 8080 + index}],
                "resources": {"requests": {"cpu": "250m", "memory": "256Mi"},
                    "limits": {"cpu": "1", "memory": "512Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080 + index}},
                "volumeMounts": [{"name": format!("data{index}"), "mountPath": format!("/data/{index}")}]})
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE,
            "labels": {"app": "bench", "tier": "backend", "version": "v1"},
            "annotations": {"kubernetes.io/psp": "restricted"}},
        "spec": {"containers": containers,
            "volumes": [{"name": "data0", "emptyDir": {}}, {"name": "data1", "emptyDir": {}},
                {"name": "data2", "emptyDir": {}}]}})
}

fn review(index: usize) -> Bytes {
    let name = format!("measure-{index}");
    let body = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": format!("00000000-0000-0000-0000-{index:012}"),
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "namespace": NAMESPACE, "operation": "CREATE", "name": name,
        "userInfo": {"username": "measure"}, "object": pod(&name), "dryRun": false}});
    Bytes::from(serde_json::to_vec(&body).unwrap_or_default())
}

async fn measure(client: &Client, pid: u32, metrics_port: u16, webhook_port: u16) -> Result<()> {
    wait_for_manager(client, metrics_port).await?;
    let (idle, _) = rss(pid)?;
    let sets = sidecarsets(client);
    let specs = sidecarset_specs(SIDECARSETS - 2);
    for spec in specs.iter().take(2) {
        let set: SidecarSet = serde_json::from_value(spec.clone())?;
        sets.create(&PostParams::default(), &set).await?;
    }
    // Through the API server: a dry-run pod gets both SidecarSets once the stores hold them.
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let probe: Pod = serde_json::from_value(pod("measure-probe"))?;
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    wait_for(
        "the webhook to inject both SidecarSets",
        Duration::from_secs(60),
        || async {
            let created = pods.create(&dry_run, &probe).await?;
            let names: Vec<String> = created
                .spec
                .map(|spec| spec.containers.into_iter().map(|c| c.name).collect())
                .unwrap_or_default();
            Ok(
                (names.iter().any(|n| n == "log-agent") && names.iter().any(|n| n == "envoy-1"))
                    .then_some(()),
            )
        },
    )
    .await?;

    let tls = tls_config(client).await?;
    let requests = size("KRUISE_E2E_MEASURE_REQUESTS", 20_000).max(CONNECTIONS);
    let bodies: Vec<Bytes> = (0..requests).map(review).collect();
    let started = Instant::now();
    let mut latencies = load(&tls, webhook_port, &bodies).await?;
    let wall = started.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    let (_, server) = http_get(metrics_port, "/metrics").await?;
    let (after_load, _) = rss(pid)?;

    // Memory: 100 SidecarSets and the pods.
    for spec in specs.iter().skip(2) {
        let set: SidecarSet = serde_json::from_value(spec.clone())?;
        sets.create(&PostParams::default(), &set).await?;
    }
    let count = size("KRUISE_E2E_MEASURE_PODS", 5_000);
    let started = Instant::now();
    create_pods(&pods, count).await?;
    let created_in = started.elapsed();
    // Let the stores and controllers settle.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let (loaded, peak) = rss(pid)?;

    eprintln!(
        "    SidecarSet webhook, pod CREATE with 2 matching SidecarSets, {CONNECTIONS} connections on loopback:"
    );
    eprintln!(
        "      {} requests in {:.1} s ({:.0}/s): p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        latencies.len(),
        wall,
        latencies.len() as f64 / wall,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.9),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or(f64::NAN),
    );
    eprintln!(
        "      server-side (manager histogram): {}",
        histogram_summary(
            &server,
            "kruise_manager_webhook_duration_seconds",
            "",
            "reviews"
        )
    );
    eprintln!(
        "    manager RSS: idle {idle:.0} MiB, after the load {after_load:.0} MiB, with {SIDECARSETS} SidecarSets and {count} pods {loaded:.0} MiB (peak {peak:.0} MiB); {count} pods created in {:.1} s",
        created_in.as_secs_f64()
    );
    Ok(())
}

/// Trusts the caBundle the manager wrote into its webhook configuration.
async fn tls_config(client: &Client) -> Result<Arc<rustls::ClientConfig>> {
    let configurations: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let written = configurations
        .get(kruise_manager::webhook::configuration::CONFIGURATION_NAME)
        .await?;
    let ca = written
        .webhooks
        .into_iter()
        .flatten()
        .find_map(|webhook| webhook.client_config.ca_bundle)
        .context("no caBundle")?;
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(&ca.0) {
        roots.add(certificate?)?;
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Sends `bodies` over `CONNECTIONS` kept-alive HTTPS connections at once; the latency of each, in ms.
async fn load(tls: &Arc<rustls::ClientConfig>, port: u16, bodies: &[Bytes]) -> Result<Vec<f64>> {
    let mut tasks = Vec::with_capacity(CONNECTIONS);
    for connection in 0..CONNECTIONS {
        let mine: Vec<Bytes> = bodies
            .iter()
            .skip(connection)
            .step_by(CONNECTIONS)
            .cloned()
            .collect();
        let connector = tokio_rustls::TlsConnector::from(tls.clone());
        tasks.push(tokio::spawn(async move {
            let tcp = TcpStream::connect(("127.0.0.1", port)).await?;
            tcp.set_nodelay(true)?;
            let stream = connector
                .connect(ServerName::try_from("127.0.0.1")?, tcp)
                .await?;
            let (mut sender, connection) =
                hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
            tokio::spawn(connection);
            let mut latencies = Vec::with_capacity(mine.len());
            for body in mine {
                let request = hyper::Request::post("/mutate-pod")
                    .header("content-type", "application/json")
                    .body(Full::new(body))?;
                let started = Instant::now();
                let response = sender.send_request(request).await?;
                let status = response.status();
                let bytes = response.into_body().collect().await?.to_bytes();
                latencies.push(started.elapsed().as_secs_f64() * 1000.0);
                let answer: Value = serde_json::from_slice(&bytes)?;
                ensure!(
                    status == 200
                        && answer["response"]["allowed"] == true
                        && answer["response"]["patch"].is_string(),
                    "unexpected answer {status}: {answer}"
                );
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut all = Vec::with_capacity(bodies.len());
    for task in tasks {
        all.extend(task.await??);
    }
    if all.len() != bodies.len() {
        bail!("{} of {} requests answered", all.len(), bodies.len());
    }
    Ok(all)
}

/// Creates `count` pods, 32 at a time.
async fn create_pods(pods: &Api<Pod>, count: usize) -> Result<()> {
    let mut pending = futures::stream::iter((0..count).map(|index| {
        let pods = pods.clone();
        async move {
            let pod: Pod = serde_json::from_value(pod(&format!("measure-{index}")))?;
            pods.create(&PostParams::default(), &pod).await?;
            anyhow::Ok(())
        }
    }))
    .buffer_unordered(32);
    while let Some(result) = pending.next().await {
        result?;
    }
    Ok(())
}
