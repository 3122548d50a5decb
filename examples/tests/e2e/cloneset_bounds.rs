//! CloneSet specs stored without the validating webhook (these scenarios run the manager with `--no-webhook`,
//! as a CloneSet stored while the webhook was away): `replicas: 2147483647` makes the
//! manager create pods a few per reconcile (`--cloneset-max-creations-per-reconcile`) while it stays healthy
//! and keeps reconciling another CloneSet, and scaling back converges; an unparsable `maxUnavailable` gets a
//! Warning Event and the `InvalidSpec` condition, which goes when the spec is fixed.

use anyhow::{Context as _, Result, bail, ensure};
use kruise_api::apps::v1beta1::{CloneSetConditionType, INVALID_SPEC_REASON};
use serde_json::json;

use crate::cloneset_env::{Env, ManagerHandle, WAIT};
use crate::manager_process::ManagerProcess;
use crate::support::{Cluster, http_get, wait_for};

/// The cap the scenario runs the manager with.
const CAP: usize = 3;

pub async fn cloneset_huge_replicas_scale_in_bounded_steps(cluster: &Cluster) -> Result<()> {
    let namespace = "e2e-cs-huge";
    let mut env = Env::without_manager(cluster, namespace).await?;
    let cap = format!("--cloneset-max-creations-per-reconcile={CAP}");
    env.manager = Some(ManagerHandle::child(cluster, namespace, "cs-huge", &[&cap]).await?);
    let result = huge_replicas(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

fn manager(env: &Env) -> Result<&ManagerProcess> {
    match &env.manager {
        Some(ManagerHandle::Child(manager)) => Ok(manager),
        _ => bail!("the scenario runs kruise-manager as a child process"),
    }
}

/// The `actions=N` of every `acting` line the manager logged for CloneSet `key`.
fn logged_actions(manager: &ManagerProcess, key: &str) -> Result<Vec<usize>> {
    let log = std::fs::read_to_string(&manager.process.log)
        .with_context(|| format!("reading {}", manager.process.log.display()))?;
    let cloneset = format!("cloneset={key} ");
    log.lines()
        .filter(|line| line.contains(" acting ") && line.contains(&cloneset))
        .map(|line| {
            let count = line
                .split_whitespace()
                .find_map(|field| field.strip_prefix("actions="))
                .with_context(|| format!("no actions= in {line:?}"))?;
            Ok(count.parse()?)
        })
        .collect()
}

async fn huge_replicas(env: &Env) -> Result<()> {
    let manager = manager(env)?;
    manager.wait_ready().await?;
    env.wait_for_api().await?;
    env.create("huge", i32::MAX, "nginx:1.25", json!({}))
        .await?;
    env.create("other", 2, "nginx:1.25", json!({})).await?;
    let key = format!("{}/huge", env.namespace);
    // Several reconciles' worth of pods, each reconcile creating at most CAP.
    wait_for("the huge CloneSet past three reconciles", WAIT, || async {
        let count = env.pods("huge").await?.len();
        Ok((count > 3 * CAP).then_some(count))
    })
    .await?;
    let steps = logged_actions(manager, &key)?;
    ensure!(
        steps.len() >= 3 && steps.iter().all(|&actions| actions <= CAP),
        "every scale-up reconcile should create at most {CAP} pods: {steps:?}\n{}",
        manager.log_tail()
    );
    // The manager is healthy and still serves other CloneSets.
    let (code, body) = http_get(manager.metrics_port, "/healthz").await?;
    ensure!(code == 200, "/healthz answered {code}: {body}");
    env.wait_rolled_out("other", 2, "nginx:1.25").await?;
    let status = env
        .clonesets()
        .get("huge")
        .await?
        .status
        .unwrap_or_default();
    ensure!(
        status
            .conditions
            .iter()
            .all(|c| c.type_ != CloneSetConditionType::InvalidSpec),
        "a huge replicas is not invalid: {:?}",
        status.conditions
    );
    // Back to a small size: it converges.
    env.patch("huge", json!({"spec": {"replicas": 2}})).await?;
    env.wait_rolled_out("huge", 2, "nginx:1.25").await?;
    let (code, _) = http_get(manager.metrics_port, "/healthz").await?;
    ensure!(code == 200, "/healthz answered {code} after scaling back");
    Ok(())
}

pub async fn cloneset_invalid_max_unavailable_is_reported(cluster: &Cluster) -> Result<()> {
    let env = Env::start(cluster, "e2e-cs-invalid").await?;
    let result = invalid_max_unavailable(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn invalid_max_unavailable(env: &Env) -> Result<()> {
    let field = "spec.updateStrategy.rollingUpdate.maxUnavailable";
    env.create(
        "web",
        2,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {"maxUnavailable": "abc%"}}}),
    )
    .await?;
    let note = wait_for("the InvalidSpec Warning Event", WAIT, || async {
        let reasons = env.event_reasons("web").await?;
        Ok(reasons
            .into_iter()
            .find(|(reason, _)| reason == "InvalidSpec")
            .map(|(_, note)| note))
    })
    .await?;
    let key = format!("{}/web", env.namespace);
    ensure!(
        note.contains(&key) && note.contains(field) && note.contains("\"abc%\""),
        "the Event should name the CloneSet, the field and the value: {note}"
    );
    let condition = wait_for("the InvalidSpec condition", WAIT, || async {
        let status = env.clonesets().get("web").await?.status.unwrap_or_default();
        Ok(status
            .conditions
            .into_iter()
            .find(|c| c.type_ == CloneSetConditionType::InvalidSpec))
    })
    .await?;
    ensure!(
        condition.status == "True"
            && condition.reason == INVALID_SPEC_REASON
            && condition.message.contains(field),
        "{condition:?}"
    );
    // Read as 0, as upstream does: creating pods is not held (scaleStrategy.maxUnavailable is unset).
    env.wait_rolled_out("web", 2, "nginx:1.25").await?;
    // Fixed: the condition goes.
    env.patch(
        "web",
        json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}}}}),
    )
    .await?;
    wait_for("the InvalidSpec condition cleared", WAIT, || async {
        let status = env.clonesets().get("web").await?.status.unwrap_or_default();
        Ok(status
            .conditions
            .iter()
            .all(|c| c.type_ != CloneSetConditionType::InvalidSpec)
            .then_some(()))
    })
    .await?;
    Ok(())
}
