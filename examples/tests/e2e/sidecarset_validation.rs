//! The SidecarSet validating webhook on the real API server (kruise-manager as a child process): invalid
//! SidecarSets are refused with the field named (v1beta1 and v1alpha1 alike), a container name already
//! used by another SidecarSet selecting the same pods is refused, an UPDATE that flips a container's
//! upgrade type is refused while an image change passes, and `patchPodMetadata` is admitted only once the
//! `kruise-configuration` ConfigMap whitelists its key. Probes are dry runs, which webhooks with
//! `sideEffects: None` see like real writes.

use anyhow::{Result, bail, ensure};
use k8s_openapi::api::core::v1::ConfigMap;
use kruise_api::apps::v1beta1::SidecarSet;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::{Value, json};

use crate::sidecarset::{MANAGER_NAMESPACE, sidecarsets, wait_for_manager, with_manager};
use crate::support::{Cluster, wait_for};

const NAMESPACE: &str = "e2e-sidecarset-validate";
const STORED: &str = "validate-a";
const WAIT: std::time::Duration = std::time::Duration::from_secs(60);

pub async fn sidecarset_webhook_rejects_invalid_sidecarsets(cluster: &Cluster) -> Result<()> {
    with_manager(cluster, NAMESPACE, STORED, |client, port| {
        Box::pin(validation(client, port))
    })
    .await
}

fn sidecarset(name: &str, container: &str) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "validate"}},
            "containers": [{"name": container, "image": "busybox:1.35", "command": ["sleep", "999d"]}]}})
}

fn dry_run() -> PostParams {
    PostParams {
        dry_run: true,
        ..PostParams::default()
    }
}

/// The API server's refusal of `result`: its message, which must come from the SidecarSet webhook.
fn refusal<T>(result: kube::Result<T>) -> Result<Option<String>> {
    match result {
        Ok(_) => Ok(None),
        Err(kube::Error::Api(status)) if status.message.contains("vsidecarset.kb.io") => {
            ensure!(
                status.code == 422 || status.code == 400,
                "unexpected code: {status:?}"
            );
            Ok(Some(status.message))
        }
        Err(error) => bail!("{error}"),
    }
}

async fn validation(client: &Client, metrics_port: u16) -> Result<()> {
    wait_for_manager(client, metrics_port).await?;
    let api = sidecarsets(client);
    // The API server picks the configuration up asynchronously: dry runs until the webhook answers.
    let mut hot = sidecarset("validate-hot", "proxy");
    hot["spec"]["containers"][0]["upgradeStrategy"] = json!({"upgradeType": "HotUpgrade"});
    let hot: SidecarSet = serde_json::from_value(hot)?;
    let message = wait_for(
        "the webhook to refuse a HotUpgrade without empty image",
        WAIT,
        || async { refusal(api.create(&dry_run(), &hot).await) },
    )
    .await?;
    ensure!(
        message.contains("spec.containers[0].upgradeStrategy.hotUpgradeEmptyImage"),
        "{message}"
    );

    // v1alpha1 requests reach the webhook converted (matchPolicy Equivalent).
    let alpha: Api<kruise_api::apps::v1alpha1::SidecarSet> = Api::all(client.clone());
    let mut empty_selector = sidecarset("validate-alpha", "log");
    empty_selector["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    empty_selector["spec"]["selector"] = json!({});
    let message = refusal(
        alpha
            .create(&dry_run(), &serde_json::from_value(empty_selector)?)
            .await,
    )?;
    ensure!(
        message
            .as_deref()
            .is_some_and(|m| m.contains("spec.selector")),
        "v1alpha1 SidecarSet without selector admitted: {message:?}"
    );

    // A stored SidecarSet, then another one selecting the same pods with the same container name.
    api.create(
        &PostParams::default(),
        &serde_json::from_value(sidecarset(STORED, "log-agent"))?,
    )
    .await?;
    let twin: SidecarSet = serde_json::from_value(sidecarset("validate-b", "log-agent"))?;
    let message = wait_for("the store to hold the first SidecarSet", WAIT, || async {
        refusal(api.create(&dry_run(), &twin).await)
    })
    .await?;
    ensure!(
        message.contains("\"log-agent\" is also used by SidecarSet \"validate-a\""),
        "{message}"
    );
    let mut elsewhere = sidecarset("validate-c", "log-agent");
    elsewhere["spec"]["selector"] = json!({"matchLabels": {"app": "other"}});
    api.create(&dry_run(), &serde_json::from_value(elsewhere)?)
        .await?;

    // UPDATE: the upgrade type is immutable; an image change is fine.
    let flip = json!({"spec": {"containers": [{"name": "log-agent", "image": "busybox:1.35",
        "command": ["sleep", "999d"],
        "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "busybox:empty"}}]}});
    let message = refusal(
        api.patch(STORED, &PatchParams::default(), &Patch::Merge(&flip))
            .await,
    )?;
    ensure!(
        message
            .as_deref()
            .is_some_and(|m| m.contains("is immutable")),
        "upgradeType change admitted: {message:?}"
    );
    let image = json!({"spec": {"containers": [{"name": "log-agent", "image": "busybox:1.36",
        "command": ["sleep", "999d"]}]}});
    api.patch(STORED, &PatchParams::default(), &Patch::Merge(&image))
        .await?;

    // patchPodMetadata needs the whitelist of kruise-configuration.
    let mut patching = sidecarset("validate-d", "log-d");
    patching["spec"]["patchPodMetadata"] =
        json!([{"annotations": {"log.example.com/on": "true"}, "patchPolicy": "Overwrite"}]);
    let patching: SidecarSet = serde_json::from_value(patching)?;
    let message = refusal(api.create(&dry_run(), &patching).await)?;
    ensure!(
        message
            .as_deref()
            .is_some_and(|m| m.contains("spec.patchPodMetadata")),
        "patchPodMetadata without whitelist admitted: {message:?}"
    );
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), MANAGER_NAMESPACE);
    let whitelist: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "kruise-configuration"},
        "data": {"SidecarSet_PatchPodMetadata_WhiteList":
            r#"{"rules": [{"allowedAnnotationKeyExprs": ["^log\\.example\\.com/.*$"]}]}"#}
    }))?;
    configmaps
        .create(&PostParams::default(), &whitelist)
        .await?;
    let admitted = wait_for("the whitelist to admit patchPodMetadata", WAIT, || async {
        Ok(refusal(api.create(&dry_run(), &patching).await)?
            .is_none()
            .then_some(()))
    })
    .await;
    let _ = configmaps
        .delete("kruise-configuration", &DeleteParams::default())
        .await;
    admitted
}
