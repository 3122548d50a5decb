//! The `kruise` verbs that change workloads on a cluster, run as the binary against the real API server
//! with kubectl's connection flags: `rollout pause` holds an image change back, `rollout resume` lets
//! kruise-manager roll it out, `scaledown --pods` deletes exactly the named pod, and the namespace defaults
//! to the kubeconfig context's. Bad input is refused with a one-line error and the contract's exit code.

use std::time::Duration;

use anyhow::{Context as _, Result, ensure};
use kube::ResourceExt;
use serde_json::json;

use crate::cloneset_env::Env;
use crate::kruise_binary;
use crate::support::{Cluster, wait_for};

const NAMESPACE: &str = "e2e-kruise-verbs";
const WAIT: Duration = Duration::from_secs(90);

/// Runs `kruise args...` with the suite's kubeconfig and expects exit 0 and `expected` as its output.
async fn succeeds(cluster: &Cluster, args: &[&str], expected: &str) -> Result<()> {
    let stdout = kruise_binary::run(&cluster.kubeconfig, None, args)
        .await?
        .succeeded(args)?;
    ensure!(
        stdout.trim_end() == expected,
        "kruise {args:?}: stdout {stdout:?}, expected {expected:?}"
    );
    Ok(())
}

/// Runs `kruise args...` and expects exit `code` with an error line containing `words`.
async fn refused(cluster: &Cluster, args: &[&str], code: i32, words: &str) -> Result<()> {
    kruise_binary::run(&cluster.kubeconfig, None, args)
        .await?
        .refused(args, code, &[words])
}

pub async fn kruise_live_verbs_change_workloads(cluster: &Cluster) -> Result<()> {
    let env = Env::start(cluster, NAMESPACE).await?;
    let result = verbs(cluster, &env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn verbs(cluster: &Cluster, env: &Env) -> Result<()> {
    env.create("web", 3, "nginx:1.24", json!({})).await?;
    env.wait_rolled_out("web", 3, "nginx:1.24").await?;
    let n = ["-n", NAMESPACE];

    // Paused, an image change is stored but no pod is updated.
    succeeds(
        cluster,
        &["rollout", "pause", "cloneset/web", n[0], n[1]],
        "cloneset.apps.kruise.io/web paused",
    )
    .await?;
    succeeds(
        cluster,
        &["rollout", "pause", "cloneset/web", n[0], n[1]],
        "cloneset.apps.kruise.io/web already paused",
    )
    .await?;
    let cloneset = env.clonesets().get("web").await?;
    ensure!(
        cloneset
            .spec
            .update_strategy
            .rolling_update
            .as_ref()
            .is_some_and(|rolling| rolling.paused),
        "not paused on the server: {:?}",
        cloneset.spec.update_strategy
    );
    succeeds(
        cluster,
        &[
            "set",
            "image",
            "cloneset/web",
            "main=nginx:1.25",
            n[0],
            n[1],
        ],
        "cloneset.apps.kruise.io/web image updated",
    )
    .await?;
    wait_for(
        "the paused CloneSet to observe the new template",
        WAIT,
        || async {
            let status = env.clonesets().get("web").await?.status.unwrap_or_default();
            Ok((status.observed_generation >= 3).then_some(status))
        },
    )
    .await
    .and_then(|status| {
        ensure!(
            status.updated_replicas == 0,
            "a paused CloneSet updated {} pods",
            status.updated_replicas
        );
        Ok(())
    })?;

    // Resumed, kruise-manager rolls the image out.
    succeeds(
        cluster,
        &["rollout", "resume", "cloneset/web", n[0], n[1]],
        "cloneset.apps.kruise.io/web resumed",
    )
    .await?;
    env.wait_rolled_out("web", 3, "nginx:1.25").await?;

    // scaledown deletes the named pod and does not replace it. The namespace comes from the context.
    let victim = env
        .pods("web")
        .await?
        .first()
        .map(ResourceExt::name_any)
        .context("no pod of web")?;
    let kubeconfig = context_namespace_kubeconfig(cluster).await?;
    let args = ["scaledown", "cloneset/web", "--pods", &victim];
    let stdout = kruise_binary::run(&kubeconfig, None, &args)
        .await?
        .succeeded(&args)?;
    ensure!(
        stdout.trim_end()
            == format!("cloneset.apps.kruise.io/web scaled down to 2 (deleting {victim})"),
        "scaledown: stdout {stdout:?}"
    );
    wait_for(
        "web to have 2 pods, without the one scaled down",
        WAIT,
        || async {
            let names: Vec<String> = env
                .pods("web")
                .await?
                .iter()
                .map(ResourceExt::name_any)
                .collect();
            Ok((names.len() == 2 && !names.contains(&victim)).then_some(()))
        },
    )
    .await?;
    let spec = env.clonesets().get("web").await?.spec;
    ensure!(
        spec.replicas == Some(2),
        "replicas after scaledown: {:?}",
        spec.replicas
    );

    // Bad input: a one-line error and exit code 2; a missing object: exit code 1.
    refused(
        cluster,
        &["set", "image", "cloneset/web", "nope=x:1", n[0], n[1]],
        2,
        "unable to find container named \"nope\"",
    )
    .await?;
    refused(
        cluster,
        &["rollout", "pause", "cloneset/missing", n[0], n[1]],
        1,
        "cloneset.apps.kruise.io/missing not found",
    )
    .await?;
    refused(
        cluster,
        &["scaledown", "ads/agent", "--pods", "a", n[0], n[1]],
        2,
        "CloneSets only",
    )
    .await?;
    refused(
        cluster,
        &[
            "scaledown",
            "cloneset/web",
            "--pods",
            "not-a-pod",
            n[0],
            n[1],
        ],
        2,
        "pod not-a-pod not found",
    )
    .await?;
    refused(
        cluster,
        &["rollout", "pause", "deployment/web", n[0], n[1]],
        2,
        "unknown kind",
    )
    .await?;
    Ok(())
}

/// A copy of the suite's kubeconfig whose contexts default to [`NAMESPACE`] (written as JSON, which is YAML).
async fn context_namespace_kubeconfig(cluster: &Cluster) -> Result<std::path::PathBuf> {
    let mut config = kube::config::Kubeconfig::read_from(&cluster.kubeconfig)
        .context("reading the suite's kubeconfig")?;
    ensure!(
        !config.contexts.is_empty(),
        "the suite's kubeconfig has no contexts"
    );
    for named in &mut config.contexts {
        if let Some(context) = named.context.as_mut() {
            context.namespace = Some(NAMESPACE.to_owned());
        }
    }
    let path = cluster.kubeconfig.with_extension("verbs-namespace");
    std::fs::write(&path, serde_json::to_string(&config)?)?;
    Ok(path)
}
