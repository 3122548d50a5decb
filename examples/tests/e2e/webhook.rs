//! kruise-manager (the binary) serves the pod webhook over HTTPS and registers it with its caBundle:
//! pods owned by a CloneSet get both readiness gates, other pods none; ordered launch priority gets its
//! barriers; excluded namespaces are left alone; a graceful stop removes the registration again.

use std::time::Duration;

use anyhow::{Context as _, Result, ensure};
use k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;
use k8s_openapi::api::core::v1::Pod;
use kruise_manager::webhook::configuration::CONFIGURATION_NAME;
use kube::api::{DynamicObject, GroupVersionKind, PostParams};
use kube::core::ApiResource;
use kube::{Api, Client};
use serde_json::{Value, json};

use crate::manager_process::{ManagerProcess, Webhooks};
use crate::support::{Cluster, http_get, wait_for};

const NAMESPACE: &str = "e2e-webhook";

pub async fn webhook_injects_readiness_gates(cluster: &Cluster) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: the cluster cannot call a webhook on this machine's loopback)"
        );
        return Ok(());
    }
    let client = &cluster.client;
    let args: Vec<String> = [
        "--create-namespace".to_owned(),
        "--identity=e2e-webhook".to_owned(),
        "--leader-election-id=e2e-webhook".to_owned(),
    ]
    .into();
    let mut manager =
        ManagerProcess::spawn(cluster, "webhook", &args, Webhooks::Served, &[]).await?;
    let result = match manager.wait_ready().await {
        Ok(()) => scenario(client, manager.metrics_port).await,
        Err(error) => Err(error),
    };
    let result = result.and(manager.stop().await);
    let result = match result {
        Ok(()) => configuration_removed(client).await,
        Err(error) => Err(error),
    };
    result.with_context(|| manager.log_tail())
}

async fn scenario(client: &Client, metrics_port: u16) -> Result<()> {
    crate::support::ensure_namespace(client, NAMESPACE).await?;
    let configurations: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let configuration = wait_for(
        "the MutatingWebhookConfiguration",
        Duration::from_secs(30),
        || async { Ok(configurations.get_opt(CONFIGURATION_NAME).await?) },
    )
    .await?;
    let ca = configuration
        .webhooks
        .as_ref()
        .and_then(|w| w.first())
        .and_then(|w| w.client_config.ca_bundle.clone());
    ensure!(ca.is_some_and(|ca| !ca.0.is_empty()), "no caBundle written");

    let owner_uid = create_cloneset(client).await?;
    let owned = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "owned", "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1",
            "kind": "CloneSet", "name": "owner", "uid": owner_uid, "controller": true}]},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}
    });
    // The API server picks the configuration up asynchronously: retry (dry run) until the webhook acts.
    wait_for(
        "the webhook to mutate pods",
        Duration::from_secs(30),
        || async {
            let pod = create(client, NAMESPACE, &owned, true).await?;
            Ok((!gates(&pod).is_empty()).then_some(()))
        },
    )
    .await?;

    let pod = create(client, NAMESPACE, &owned, false).await?;
    ensure!(
        gates(&pod) == ["InPlaceUpdateReady", "KruisePodReady"],
        "owned pod gates: {:?}",
        gates(&pod)
    );

    let mut custom = owned.clone();
    custom["metadata"]["name"] = json!("owned-custom-gate");
    custom["spec"]["readinessGates"] = json!([{"conditionType": "example.com/custom"}]);
    let pod = create(client, NAMESPACE, &custom, false).await?;
    ensure!(
        gates(&pod) == ["example.com/custom", "InPlaceUpdateReady", "KruisePodReady"],
        "gates appended after the pod's own: {:?}",
        gates(&pod)
    );

    let plain = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain"},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}});
    let pod = create(client, NAMESPACE, &plain, false).await?;
    ensure!(
        gates(&pod).is_empty(),
        "plain pod got gates: {:?}",
        gates(&pod)
    );

    let ordered = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "ordered", "annotations": {"apps.kruise.io/container-launch-priority": "Ordered"}},
        "spec": {"containers": [{"name": "a", "image": "nginx"}, {"name": "b", "image": "busybox"}]}});
    let pod = create(client, NAMESPACE, &ordered, false).await?;
    let barrier = |index: usize| -> Option<(String, String)> {
        let env = pod.spec.as_ref()?.containers.get(index)?.env.as_ref()?;
        let reference = env
            .iter()
            .find(|e| e.name == "KRUISE_CONTAINER_BARRIER")?
            .value_from
            .as_ref()?
            .config_map_key_ref
            .clone()?;
        Some((reference.name, reference.key))
    };
    ensure!(
        barrier(0) == Some(("ordered-barrier".into(), "p_0".into())),
        "container a: {:?}",
        barrier(0)
    );
    ensure!(
        barrier(1) == Some(("ordered-barrier".into(), "p_-1".into())),
        "container b: {:?}",
        barrier(1)
    );

    let mut excluded = ordered.clone();
    excluded["metadata"]["name"] = json!("e2e-excluded");
    let pod = create(client, "kube-system", &excluded, true).await?;
    ensure!(barrier_free(&pod), "a pod in kube-system was mutated");

    let bad = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad-priority"},
        "spec": {"containers": [
            {"name": "a", "image": "nginx", "env": [{"name": "KRUISE_CONTAINER_PRIORITY", "value": "high"}]},
            {"name": "b", "image": "busybox"}]}});
    let refused = create(client, NAMESPACE, &bad, true).await;
    let message = refused
        .err()
        .map(|error| format!("{error:#}"))
        .unwrap_or_default();
    ensure!(
        message.contains("KRUISE_CONTAINER_PRIORITY"),
        "a bad priority must be refused with a clear message, got {message:?}"
    );

    let (_, metrics) = http_get(metrics_port, "/metrics").await?;
    ensure!(
        metrics.contains("kruise_manager_webhook_requests_total{code=\"200\"}"),
        "webhook metrics missing"
    );
    // The same under the Go manager's names, by webhook path, and the process metrics. (The
    // controllers' series appear once the leader starts its controllers, which this scenario does not
    // wait for; the unit tests of `kruise_runtime::metrics` cover them.)
    for expected in [
        "controller_runtime_webhook_requests_total{webhook=\"/mutate-pod\",code=\"200\"}",
        "controller_runtime_webhook_latency_seconds_count{webhook=\"/mutate-pod\"}",
        "leader_election_master_status{name=\"kruise-manager\"}",
        "process_resident_memory_bytes ",
        "process_cpu_seconds_total ",
    ] {
        ensure!(
            metrics.contains(expected),
            "{expected} missing from /metrics:\n{metrics}"
        );
    }
    Ok(())
}

fn gates(pod: &Pod) -> Vec<String> {
    pod.spec
        .as_ref()
        .and_then(|spec| spec.readiness_gates.as_ref())
        .map(|gates| {
            gates
                .iter()
                .map(|gate| gate.condition_type.clone())
                .collect()
        })
        .unwrap_or_default()
}

fn barrier_free(pod: &Pod) -> bool {
    pod.spec.as_ref().is_some_and(|spec| {
        spec.containers.iter().all(|c| {
            c.env
                .iter()
                .flatten()
                .all(|e| e.name != "KRUISE_CONTAINER_BARRIER")
        })
    })
}

async fn create(client: &Client, namespace: &str, pod: &Value, dry_run: bool) -> Result<Pod> {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let params = PostParams {
        dry_run,
        ..PostParams::default()
    };
    let pod: Pod = serde_json::from_value(pod.clone())?;
    Ok(api.create(&params, &pod).await?)
}

async fn create_cloneset(client: &Client) -> Result<String> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apps.kruise.io", "v1alpha1", "CloneSet"),
        "clonesets",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), NAMESPACE, &resource);
    let cloneset: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "owner"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "owner"}},
            "template": {"metadata": {"labels": {"app": "owner"}}, "spec": {"containers": [{"name": "main", "image": "nginx"}]}}}
    }))?;
    let created = api.create(&PostParams::default(), &cloneset).await?;
    created.metadata.uid.context("the CloneSet has no uid")
}

async fn configuration_removed(client: &Client) -> Result<()> {
    let configurations: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    ensure!(
        configurations.get_opt(CONFIGURATION_NAME).await?.is_none(),
        "a gracefully stopped manager outside the cluster must remove its webhook configuration"
    );
    let plain = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "after-stop"},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]}});
    create(client, NAMESPACE, &plain, true)
        .await
        .context("pods can be created again after the manager stopped")?;
    Ok(())
}
