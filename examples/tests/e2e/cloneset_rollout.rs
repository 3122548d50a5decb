//! CloneSet rollouts against the real API server: an in-place image update keeps every pod (name, UID,
//! node) and only changes the image and restart count, never with more than `maxUnavailable` pods
//! unavailable (checked on every watch event); the partition holds old pods until it is lowered;
//! `maxSurge` adds and then removes surge pods; a non-image change recreates pods; an inPlaceUpdate hook
//! holds an update until released; a killed manager restarted mid-rollout finishes it with nothing lost.

use std::collections::BTreeSet;
use std::time::Duration;

use anyhow::{Result, bail, ensure};
use k8s_openapi::api::core::v1::Pod;
use kube::ResourceExt;
use kube::api::{Patch, PatchParams};
use serde_json::json;

use crate::cloneset_env::{
    Env, ManagerHandle, WAIT, describe, identities, is_ready, lifecycle, restarts, revision,
    running_image,
};
use crate::pod_watch::PodWatch;
use crate::support::{Cluster, wait_for};

pub async fn cloneset_updates_in_place_within_max_unavailable(cluster: &Cluster) -> Result<()> {
    let env = Env::start(cluster, "e2e-cs-inplace").await?;
    let result = in_place(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn in_place(env: &Env) -> Result<()> {
    env.create(
        "web",
        4,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1}}}),
    )
    .await?;
    let before = env.wait_rolled_out("web", 4, "nginx:1.25").await?;
    let watch = PodWatch::start(env.pods_api(), "web");
    tokio::time::sleep(Duration::from_millis(500)).await;
    env.set_image("web", "nginx:1.26").await?;
    let after = env.wait_rolled_out("web", 4, "nginx:1.26").await;
    let seen = watch.stop();
    seen.check(usize::MAX, usize::MAX)?;
    let (max_unavailable, max_total) = (seen.max_unavailable, seen.max_pods);
    let after = after?;
    ensure!(
        identities(&before) == identities(&after),
        "pods changed identity:\nbefore {:?}\nafter  {:?}",
        identities(&before),
        identities(&after)
    );
    for (old, new) in before.iter().zip(&after) {
        ensure!(
            restarts(new) == restarts(old) + 1,
            "restartCount of {}",
            describe(new)
        );
        ensure!(
            running_image(new) == Some("nginx:1.26"),
            "{}",
            describe(new)
        );
        let image = new
            .spec
            .as_ref()
            .and_then(|s| s.containers.first())
            .and_then(|c| c.image.as_deref());
        ensure!(image == Some("nginx:1.26"), "spec image {image:?}");
    }
    ensure!(
        max_unavailable <= 1,
        "{max_unavailable} pods were unavailable at once (maxUnavailable 1)"
    );
    ensure!(max_unavailable == 1, "the watch never saw a pod updating");
    ensure!(
        max_total == 4,
        "{max_total} pods at once during an in-place update"
    );
    let in_place = env
        .event_reasons("web")
        .await?
        .into_iter()
        .filter(|(reason, _)| reason == "SuccessfulUpdatePodInPlace")
        .count();
    ensure!(
        in_place == 4,
        "{in_place} SuccessfulUpdatePodInPlace Events"
    );
    Ok(())
}

pub async fn cloneset_partition_holds_old_pods(cluster: &Cluster) -> Result<()> {
    let env = Env::start(cluster, "e2e-cs-partition").await?;
    let result = partition(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn partition(env: &Env) -> Result<()> {
    env.create(
        "web",
        5,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {
            "podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 2, "partition": 3}}}),
    )
    .await?;
    env.wait_rolled_out("web", 5, "nginx:1.25").await?;
    env.set_image("web", "nginx:1.26").await?;
    let count = |pods: &[Pod], image: &str| {
        pods.iter()
            .filter(|p| running_image(p) == Some(image) && is_ready(p))
            .count()
    };
    wait_for("2 pods updated, 3 held by the partition", WAIT, || async {
        let pods = env.pods("web").await?;
        let status = env.clonesets().get("web").await?.status.unwrap_or_default();
        Ok((count(&pods, "nginx:1.26") == 2
            && count(&pods, "nginx:1.25") == 3
            && status.updated_ready_replicas == 2
            && status.expected_updated_replicas == 2)
            .then_some(()))
    })
    .await?;
    // It stays there.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let pods = env.pods("web").await?;
    ensure!(
        count(&pods, "nginx:1.25") == 3,
        "the partition did not hold: {:?}",
        pods.iter().map(describe).collect::<Vec<_>>()
    );
    let status = env.clonesets().get("web").await?.status.unwrap_or_default();
    ensure!(
        status.current_revision != status.update_revision,
        "current revision moved before the rollout ended"
    );
    env.patch(
        "web",
        json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}}),
    )
    .await?;
    env.wait_rolled_out("web", 5, "nginx:1.26").await?;
    Ok(())
}

pub async fn cloneset_max_surge_adds_and_removes_pods(cluster: &Cluster) -> Result<()> {
    let env = Env::start(cluster, "e2e-cs-surge").await?;
    let result = surge(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn surge(env: &Env) -> Result<()> {
    env.create(
        "web",
        3,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {
            "podUpdatePolicy": "ReCreate", "maxUnavailable": 0, "maxSurge": 1}}}),
    )
    .await?;
    let before = env.wait_rolled_out("web", 3, "nginx:1.25").await?;
    let watch = PodWatch::start(env.pods_api(), "web");
    tokio::time::sleep(Duration::from_millis(500)).await;
    env.set_image("web", "nginx:1.26").await?;
    let after = env.wait_rolled_out("web", 3, "nginx:1.26").await;
    let seen = watch.stop();
    seen.check(usize::MAX, usize::MAX)?;
    let (max_unavailable, max_total) = (seen.max_unavailable, seen.max_pods);
    let after = after?;
    ensure!(
        max_total == 4,
        "{max_total} pods at most; maxSurge 1 allows exactly one surge pod"
    );
    let old: BTreeSet<String> = before.iter().map(|p| p.uid().unwrap_or_default()).collect();
    ensure!(
        after
            .iter()
            .all(|p| !old.contains(&p.uid().unwrap_or_default())),
        "a ReCreate rollout kept an old pod"
    );
    // maxUnavailable 0 with surge: old pods go only after new ones are ready; a new pod is
    // unavailable while it starts, so at most the surge pod is down.
    ensure!(
        max_unavailable <= 1,
        "{max_unavailable} pods unavailable at once"
    );
    Ok(())
}

pub async fn cloneset_recreates_when_not_in_place(cluster: &Cluster) -> Result<()> {
    let env = Env::start(cluster, "e2e-cs-recreate").await?;
    let result = recreate(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn recreate(env: &Env) -> Result<()> {
    env.create(
        "web",
        2,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1}}}),
    )
    .await?;
    let before = env.wait_rolled_out("web", 2, "nginx:1.25").await?;
    // An env change cannot be made in place.
    env.patch(
        "web",
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "main", "image": "nginx:1.25", "env": [{"name": "MODE", "value": "b"}]}]}}}}),
    )
    .await?;
    let after = env.wait_rolled_out("web", 2, "nginx:1.25").await?;
    let old: BTreeSet<String> = before.iter().map(ResourceExt::name_any).collect();
    ensure!(
        after.iter().all(|p| !old.contains(&p.name_any())),
        "pods were not recreated: {:?}",
        after.iter().map(describe).collect::<Vec<_>>()
    );
    for pod in &after {
        let env_vars = pod
            .spec
            .as_ref()
            .and_then(|s| s.containers.first())
            .and_then(|c| c.env.clone())
            .unwrap_or_default();
        ensure!(
            env_vars.iter().any(|e| e.name == "MODE"),
            "{} lacks the new env",
            pod.name_any()
        );
    }
    let reasons = env.event_reasons("web").await?;
    let recreated = reasons
        .iter()
        .filter(|(r, _)| r == "SuccessfulUpdatePodReCreate")
        .count();
    ensure!(
        recreated == 2,
        "{recreated} SuccessfulUpdatePodReCreate Events: {reasons:?}"
    );
    ensure!(
        !reasons
            .iter()
            .any(|(r, _)| r == "SuccessfulUpdatePodInPlace"),
        "an env change was made in place"
    );
    Ok(())
}

pub async fn cloneset_in_place_update_hook_holds_update(cluster: &Cluster) -> Result<()> {
    let env = Env::start(cluster, "e2e-cs-hook").await?;
    let result = update_hook(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn update_hook(env: &Env) -> Result<()> {
    let hook = "example.io/block-updating";
    env.create(
        "web",
        1,
        "nginx:1.25",
        json!({
            "template": {"metadata": {"labels": {"app": "web", hook: "true"}}},
            "lifecycle": {"inPlaceUpdate": {"labelsHandler": {hook: "true"}}},
            "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}},
        }),
    )
    .await?;
    let before = env.wait_rolled_out("web", 1, "nginx:1.25").await?;
    let name = before[0].name_any();
    env.set_image("web", "nginx:1.26").await?;
    wait_for("the pod held in PreparingUpdate", WAIT, || async {
        let pod = env.pods_api().get(&name).await?;
        Ok((lifecycle(&pod) == "PreparingUpdate").then_some(()))
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let pod = env.pods_api().get(&name).await?;
    ensure!(
        lifecycle(&pod) == "PreparingUpdate" && running_image(&pod) == Some("nginx:1.25"),
        "the hook did not hold the update: {}",
        describe(&pod)
    );
    // Release: the update runs, and the pod waits in Updated for the hook to come back.
    let patch = |value: serde_json::Value| json!({"metadata": {"labels": {hook: value}}});
    env.pods_api()
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(&patch(serde_json::Value::Null)),
        )
        .await?;
    wait_for(
        "the released pod updated in place, state Updated",
        WAIT,
        || async {
            let pod = env.pods_api().get(&name).await?;
            Ok(
                (lifecycle(&pod) == "Updated" && running_image(&pod) == Some("nginx:1.26"))
                    .then_some(()),
            )
        },
    )
    .await?;
    env.pods_api()
        .patch(
            &name,
            &PatchParams::default(),
            &Patch::Merge(&patch(json!("true"))),
        )
        .await?;
    let after = env.wait_rolled_out("web", 1, "nginx:1.26").await?;
    ensure!(after[0].uid() == before[0].uid(), "the pod was recreated");
    wait_for("the pod back to Normal", WAIT, || async {
        let pod = env.pods_api().get(&name).await?;
        Ok((lifecycle(&pod) == "Normal").then_some(()))
    })
    .await?;
    Ok(())
}

pub async fn cloneset_rollout_survives_manager_restart(cluster: &Cluster) -> Result<()> {
    let mut config = crate::cloneset_env::simulator_config("e2e-cs-restart");
    // Slow restarts, so the manager dies while updates are in flight.
    config.restart_delay = Duration::from_secs(2);
    let mut env = Env::with_simulator(cluster, "e2e-cs-restart", config).await?;
    env.manager = Some(ManagerHandle::child(cluster, "e2e-cs-restart", "cs-restart-1", &[]).await?);
    // The child manager installs the CRDs; alone (no scenario before it did), the CloneSet would be
    // created before its API exists.
    let result = match env.wait_for_api().await {
        Ok(()) => restart(cluster, &mut env).await,
        Err(error) => Err(error),
    };
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn restart(cluster: &Cluster, env: &mut Env) -> Result<()> {
    env.create(
        "web",
        4,
        "nginx:1.25",
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1}}}),
    )
    .await?;
    let before = env.wait_rolled_out("web", 4, "nginx:1.25").await?;
    env.set_image("web", "nginx:1.26").await?;
    wait_for("the rollout under way", WAIT, || async {
        let pods = env.pods("web").await?;
        let started = pods
            .iter()
            .filter(|p| lifecycle(p) == "Updating" || running_image(p) == Some("nginx:1.26"))
            .count();
        Ok((1..4).contains(&started).then_some(()))
    })
    .await?;
    let Some(manager) = env.manager.take() else {
        bail!("no manager to kill");
    };
    manager.kill().await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let stalled = env.pods("web").await?;
    ensure!(
        stalled
            .iter()
            .any(|p| running_image(p) == Some("nginx:1.25")),
        "the rollout finished without a manager"
    );
    env.manager = Some(ManagerHandle::child(cluster, "e2e-cs-restart", "cs-restart-2", &[]).await?);
    let after = env.wait_rolled_out("web", 4, "nginx:1.26").await?;
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
            pod.name_any(),
            restarts(pod)
        );
        ensure!(lifecycle(pod) == "Normal", "{}", describe(pod));
    }
    let revisions: BTreeSet<String> = after.iter().map(revision).collect();
    ensure!(revisions.len() == 1, "{revisions:?}");
    Ok(())
}
