//! CloneSet scaling against the real API server: pods are created and become Ready, the revision is named
//! like upstream's, scale-down deletes by the deletion ranking (here `pod-deletion-cost`), and
//! `scaleStrategy.podsToDelete` and the `apps.kruise.io/specified-delete` label replace the named pods;
//! a preDelete hook holds a deletion until the test releases it.

use std::time::Duration;

use anyhow::{Result, ensure};
use k8s_openapi::api::apps::v1::ControllerRevision;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::json;

use crate::cloneset_env::{Env, WAIT, describe, lifecycle};
use crate::support::{Cluster, wait_for};

pub async fn cloneset_creates_ready_pods(cluster: &Cluster) -> Result<()> {
    let env = Env::start(cluster, "e2e-cs-create").await?;
    let result = creates_ready_pods(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn creates_ready_pods(env: &Env) -> Result<()> {
    let cloneset = env.create("web", 3, "nginx:1.25", json!({})).await?;
    let pods = env.wait_rolled_out("web", 3, "nginx:1.25").await?;
    for pod in &pods {
        ensure!(
            pod.name_any().starts_with("web-"),
            "pod name {}",
            pod.name_any()
        );
        ensure!(
            pod.labels()
                .contains_key("apps.kruise.io/cloneset-instance-id"),
            "no instance id on {}",
            pod.name_any()
        );
        ensure!(lifecycle(pod) == "Normal", "{}", describe(pod));
    }
    let status = env.clonesets().get("web").await?.status.unwrap_or_default();
    // Named from the template as upstream's defaulting webhook stores it.
    let mut defaulted = cloneset.clone();
    kruise_api::defaults::ApplyDefaults::apply_defaults(&mut defaulted);
    let expected = kruise_inplace::revision::for_template("web", &defaulted.spec.template, 0)?;
    ensure!(
        status.update_revision == expected.name,
        "update revision {} is not upstream's name {}",
        status.update_revision,
        expected.name
    );
    ensure!(
        status.collision_count == Some(0),
        "{:?}",
        status.collision_count
    );
    ensure!(
        status.label_selector == "app=web",
        "{}",
        status.label_selector
    );
    let revisions: Api<ControllerRevision> = Api::namespaced(env.client.clone(), &env.namespace);
    let revision = revisions.get(&expected.name).await?;
    ensure!(
        revision.revision == Some(1),
        "revision number {:?}",
        revision.revision
    );
    ensure!(
        revision.labels().get("controller.kubernetes.io/hash") == Some(&expected.hash),
        "{:?}",
        revision.labels()
    );
    let created = wait_for(
        "three SuccessfulCreate Events",
        Duration::from_secs(20),
        || async {
            let reasons = env.event_reasons("web").await?;
            let created: Vec<_> = reasons
                .iter()
                .filter(|(r, _)| r == "SuccessfulCreate")
                .cloned()
                .collect();
            if created.len() >= 3 {
                return Ok(Some(created));
            }
            anyhow::bail!("Events: {reasons:?}")
        },
    )
    .await?;
    for pod in &pods {
        let note = format!("succeed to create pod {}", pod.name_any());
        ensure!(
            created.iter().any(|(_, n)| *n == note),
            "no Event {note:?}: {created:?}"
        );
    }
    Ok(())
}

pub async fn cloneset_scales_down_by_rank_and_specified_delete(cluster: &Cluster) -> Result<()> {
    let env = Env::start(cluster, "e2e-cs-scale").await?;
    let result = scales_down(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn set_cost(env: &Env, pod: &str, cost: i32) -> Result<()> {
    let patch = json!({"metadata": {"annotations": {"controller.kubernetes.io/pod-deletion-cost": cost.to_string()}}});
    env.pods_api()
        .patch(pod, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    Ok(())
}

async fn scales_down(env: &Env) -> Result<()> {
    env.create("web", 4, "nginx:1.25", json!({})).await?;
    let pods = env.wait_rolled_out("web", 4, "nginx:1.25").await?;
    let names: Vec<String> = pods.iter().map(ResourceExt::name_any).collect();
    // Lower cost goes first: names[2] and names[0].
    for (name, cost) in names.iter().zip([-50, 100, -100, 200]) {
        set_cost(env, name, cost).await?;
    }
    env.patch("web", json!({"spec": {"replicas": 2}})).await?;
    let left = env.wait_rolled_out("web", 2, "nginx:1.25").await?;
    let left: Vec<String> = left.iter().map(ResourceExt::name_any).collect();
    ensure!(
        left == [names[1].clone(), names[3].clone()],
        "scale-down kept {left:?}, expected the two costliest of {names:?}"
    );

    // podsToDelete: the named pod is replaced, and the name leaves the list once it is gone.
    let victim = left[0].clone();
    env.patch(
        "web",
        json!({"spec": {"scaleStrategy": {"podsToDelete": [victim]}}}),
    )
    .await?;
    let replaced = wait_for("the podsToDelete pod replaced", WAIT, || async {
        let pods = env.pods("web").await?;
        let names: Vec<String> = pods.iter().map(ResourceExt::name_any).collect();
        let cloneset = env.clonesets().get("web").await?;
        Ok((pods.len() == 2
            && !names.contains(&victim)
            && pods.iter().all(crate::cloneset_env::is_ready)
            && cloneset.spec.scale_strategy.pods_to_delete.is_empty())
        .then_some(names))
    })
    .await?;
    ensure!(
        replaced.contains(&left[1]),
        "the other pod went too: {replaced:?}"
    );

    // The specified-delete label does the same.
    let marked = left[1].clone();
    let patch = json!({"metadata": {"labels": {"apps.kruise.io/specified-delete": "true"}}});
    env.pods_api()
        .patch(&marked, &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    wait_for("the labelled pod replaced", WAIT, || async {
        let pods = env.pods("web").await?;
        Ok((pods.len() == 2
            && pods.iter().all(|p| p.name_any() != marked)
            && pods.iter().all(crate::cloneset_env::is_ready))
        .then_some(()))
    })
    .await?;
    let deleted = env
        .event_reasons("web")
        .await?
        .into_iter()
        .filter(|(reason, _)| reason == "SuccessfulDelete")
        .count();
    ensure!(
        deleted >= 4,
        "{deleted} SuccessfulDelete Events, expected 4"
    );
    Ok(())
}

pub async fn cloneset_pre_delete_hook_holds_deletion(cluster: &Cluster) -> Result<()> {
    let env = Env::start(cluster, "e2e-cs-predelete").await?;
    let result = pre_delete(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn pre_delete(env: &Env) -> Result<()> {
    let hook = "example.io/block-deleting";
    env.create(
        "web",
        2,
        "nginx:1.25",
        json!({
            "template": {"metadata": {"labels": {"app": "web", hook: "true"}}},
            "lifecycle": {"preDelete": {"labelsHandler": {hook: "true"}}},
        }),
    )
    .await?;
    env.wait_rolled_out("web", 2, "nginx:1.25").await?;
    env.patch("web", json!({"spec": {"replicas": 1}})).await?;
    let held = wait_for("a pod in PreparingDelete", WAIT, || async {
        let pods = env.pods("web").await?;
        Ok(pods.into_iter().find(|p| lifecycle(p) == "PreparingDelete"))
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let pods = env.pods("web").await?;
    ensure!(
        pods.len() == 2
            && pods
                .iter()
                .any(|p| p.name_any() == held.name_any() && lifecycle(p) == "PreparingDelete"),
        "the hooked pod did not wait: {:?}",
        pods.iter().map(describe).collect::<Vec<_>>()
    );
    // Release: the pod is deleted.
    let patch = json!({"metadata": {"labels": {hook: null}}});
    env.pods_api()
        .patch(
            &held.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await?;
    let left = env.wait_rolled_out("web", 1, "nginx:1.25").await?;
    ensure!(
        left[0].name_any() != held.name_any(),
        "the released pod is still there"
    );
    Ok(())
}
