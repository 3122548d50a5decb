//! kruise-manager shares its webhook certificate through a Secret and keeps every caBundle on it: when the
//! Secret's material is replaced (here: it no longer fits the manager's host names, so the manager
//! generates a new CA and certificate at its next check), the new bundle (the new CA and the old one) reaches
//! both webhook configurations and the CRDs' conversion webhook without a restart, and reviews keep working
//! with the new certificate.

use std::time::Duration;

use anyhow::{Context as _, Result, ensure};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::{Pod, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kruise_manager::webhook::cert_secret::HOSTS_ANNOTATION;
use kruise_manager::webhook::configuration::CONFIGURATION_NAME;
use kruise_manager::webhook::validating_configuration::VALIDATING_CONFIGURATION_NAME;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

use crate::manager_process::{ManagerProcess, READY_WITHIN, Webhooks};
use crate::support::{Cluster, http_get, wait_for};

const NAMESPACE: &str = "e2e-webhook-certs";
const SECRET: &str = "kruise-rs-webhook-certs";
const PODS_NAMESPACE: &str = "e2e-webhook-certs-pods";

pub async fn webhook_ca_bundle_follows_the_secret(cluster: &Cluster) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: the cluster cannot call a webhook on this machine's loopback)"
        );
        return Ok(());
    }
    let args: Vec<String> = [
        format!("--namespace={NAMESPACE}"),
        "--create-namespace".to_owned(),
        "--identity=e2e-webhook-certs".to_owned(),
        "--leader-election-id=e2e-webhook-certs".to_owned(),
        format!("--webhook-cert-secret={SECRET}"),
        "--webhook-cert-check-interval=1s".to_owned(),
    ]
    .into();
    let mut manager =
        ManagerProcess::spawn(cluster, "webhook-certs", &args, Webhooks::Served, &[]).await?;
    let result = match manager.wait_ready().await {
        Ok(()) => scenario(&cluster.client, manager.metrics_port).await,
        Err(error) => Err(error),
    };
    let result = result.and(manager.stop().await);
    result.with_context(|| manager.log_tail())
}

async fn scenario(client: &Client, metrics_port: u16) -> Result<()> {
    crate::support::ensure_namespace(client, PODS_NAMESPACE).await?;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    let first = ca_bundle_of(&secrets.get(SECRET).await?)?;
    bundles_follow(client, &first).await?;
    reviews_answered(client, metrics_port).await?;

    // The Secret no longer fits the manager's host names: the manager replaces its material.
    let patch = json!({"metadata": {"annotations": {HOSTS_ANNOTATION: "elsewhere.example"}}});
    secrets
        .patch(SECRET, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    let second = wait_for(
        "the manager to write new material into the Secret",
        READY_WITHIN,
        || async {
            let bundle = ca_bundle_of(&secrets.get(SECRET).await?)?;
            Ok((bundle != first).then_some(bundle))
        },
    )
    .await?;
    ensure!(
        second.ends_with(&first) && second.len() > first.len(),
        "the new bundle must trust the new CA and still the old one"
    );
    bundles_follow(client, &second).await?;
    reviews_answered(client, metrics_port).await
}

fn ca_bundle_of(secret: &Secret) -> Result<String> {
    let bytes = secret
        .data
        .as_ref()
        .and_then(|data| data.get("ca.crt"))
        .context("the certificate Secret has no ca.crt")?;
    Ok(String::from_utf8(bytes.0.clone())?)
}

/// Waits until both webhook configurations and the CloneSet CRD's conversion webhook carry `bundle`.
async fn bundles_follow(client: &Client, bundle: &str) -> Result<()> {
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    wait_for(
        "every caBundle to be the Secret's ca.crt",
        READY_WITHIN,
        || async {
            let mutating = mutating
                .get_opt(CONFIGURATION_NAME)
                .await?
                .and_then(|c| c.webhooks?.first()?.client_config.ca_bundle.clone());
            let validating = validating
                .get_opt(VALIDATING_CONFIGURATION_NAME)
                .await?
                .and_then(|c| c.webhooks?.first()?.client_config.ca_bundle.clone());
            let conversion = crds
                .get_opt("clonesets.apps.kruise.io")
                .await?
                .and_then(|crd| crd.spec.conversion?.webhook?.client_config?.ca_bundle);
            let all = [mutating, validating, conversion];
            Ok(all
                .iter()
                .all(|found| found.as_ref().is_some_and(|b| b.0 == bundle.as_bytes()))
                .then_some(()))
        },
    )
    .await
}

/// Waits until a pod (dry run) passes the webhook: the API server trusts the certificate being served.
async fn reviews_answered(client: &Client, metrics_port: u16) -> Result<()> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), PODS_NAMESPACE);
    let pod: Pod = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "through-the-webhook"},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]}
    }))?;
    let before = answered(metrics_port).await?;
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    wait_for(
        "a pod to pass the webhook with the served certificate",
        Duration::from_secs(60),
        || async {
            pods.create(&dry_run, &pod).await?;
            Ok((answered(metrics_port).await? > before).then_some(()))
        },
    )
    .await
}

/// The reviews the manager answered with 200.
async fn answered(metrics_port: u16) -> Result<u64> {
    let (_, text) = http_get(metrics_port, "/metrics").await?;
    Ok(text
        .lines()
        .find_map(|line| line.strip_prefix("kruise_manager_webhook_requests_total{code=\"200\"} "))
        .and_then(|count| count.trim().parse().ok())
        .unwrap_or(0))
}
