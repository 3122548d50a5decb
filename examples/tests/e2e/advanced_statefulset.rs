//! The Advanced StatefulSet controller against the real API server, its pods run by the node simulator:
//! the tutorial's web demo (5 pods under `Parallel`, a new image held by partition 4 and then released,
//! never more than `maxUnavailable` 3 pods unavailable); `OrderedReady` creating one pod at a time, the
//! next only once the one before has been Ready for `minReadySeconds`; an in-place rollout under
//! `Parallel` with `maxUnavailable` 2 that keeps every pod and never exceeds the budget on any watch event;
//! `InPlaceOnly` marking a pod not ready and changing its image only after `gracePeriodSeconds`;
//! `reserveOrdinals` skipping ordinals (and moving a pod off a newly reserved one), also from
//! `ordinals.start` with the gate `StatefulSetStartOrdinal`; a scale-down that deletes the highest
//! ordinals and, with `whenScaled: Delete`, their claims; with `whenDeleted: Delete`, claims kept on
//! scale-down and deleted with the StatefulSet; a v1alpha1 StatefulSet through the conversion webhook,
//! its status read back in v1alpha1; a preDelete hook holding a scale-down until released; a killed
//! manager restarted mid-rollout finishing it with the same pods; with `volumeClaimUpdateStrategy:
//! OnPodRollingUpdate` (gate `StatefulSetAutoResizePVCGate`), each pod's claim expanded before the pod is
//! updated and the pod updated only once the claim has grown (the test plays the storage system), and a
//! refused expansion (StorageClass without `allowVolumeExpansion`) reported and holding the rollout.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use anyhow::{Result, bail, ensure};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kruise_api::apps::v1alpha1;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use serde_json::{Value, json};

use crate::asts_env::{
    ROLLOUT_WAIT, create, images, manager, patch, running, sets, start, start_with, statefulset,
    wait_rolled_out,
};
use crate::asts_storage::{
    bind_claims, claims, describe_claims, requested, set_capacity, storage_class,
};
use crate::cloneset_env::{
    Env, ManagerHandle, describe, identities, is_ready, lifecycle, restarts, revision,
};
use crate::manager_process::{ManagerProcess, Webhooks};
use crate::pod_watch::PodWatch;
use crate::support::{Cluster, wait_for};

/// The tutorial's manifests (user documentation, copied from the seed).
const WEB_V1: &str = include_str!("fixtures/advanced-sts-web-v1.yaml");
const WEB_V2: &str = include_str!("fixtures/advanced-sts-web-v2.yaml");
const WEB_V3: &str = include_str!("fixtures/advanced-sts-web-v3.yaml");

const WEB: [&str; 5] = ["web-0", "web-1", "web-2", "web-3", "web-4"];

fn fixture(text: &str) -> Result<Value> {
    Ok(serde_saphyr::from_str(text)?)
}

/// The pod template's readiness gate an in-place update needs, and in-place updates under `Parallel`
/// with `maxUnavailable`.
fn in_place(max_unavailable: i32) -> Value {
    json!({
        "podManagementPolicy": "Parallel",
        "updateStrategy": {"rollingUpdate": {
            "podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": max_unavailable}},
        "template": {"spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}]}},
    })
}

async fn set_image(env: &Env, name: &str, image: &str) -> Result<()> {
    patch(
        env,
        name,
        json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": image}]}}}}),
    )
    .await?;
    Ok(())
}

pub async fn advanced_statefulset_seed_demo_partition_holds_and_releases(
    cluster: &Cluster,
) -> Result<()> {
    let env = start(cluster, "e2e-asts-demo", "asts-demo").await?;
    let result = seed_demo(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn seed_demo(env: &Env) -> Result<()> {
    create(env, fixture(WEB_V1)?).await?;
    // The tutorial's untagged image is reported as `nginx:latest`.
    wait_rolled_out(env, "web", "nginx", &WEB, "nginx", "nginx:latest").await?;
    let watch = PodWatch::start(env.pods_api(), "nginx");
    tokio::time::sleep(Duration::from_millis(500)).await;
    // v2: the new image, partition 4: only web-4 (slot index 4) is updated.
    patch(env, "web", json!({"spec": fixture(WEB_V2)?["spec"]})).await?;
    let at = |pods: &[Pod], image: &str| -> Vec<String> {
        pods.iter()
            .filter(|p| is_ready(p) && running(p, "nginx").as_deref() == Some(image))
            .map(ResourceExt::name_any)
            .collect()
    };
    wait_for(
        "web-4 updated, web-0..3 held by partition 4",
        ROLLOUT_WAIT,
        || async {
            let pods = env.pods("nginx").await?;
            let status = sets(env).get("web").await?.status.unwrap_or_default();
            Ok((at(&pods, "nginx:1.7.9") == ["web-4"]
                && at(&pods, "nginx:latest").len() == 4
                && status.updated_ready_replicas == 1)
                .then_some(()))
        },
    )
    .await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let pods = env.pods("nginx").await?;
    ensure!(
        at(&pods, "nginx:latest").len() == 4,
        "the partition did not hold: {:?}",
        images(&pods, "nginx")
    );
    let status = sets(env).get("web").await?.status.unwrap_or_default();
    ensure!(
        status.current_revision != status.update_revision,
        "current revision moved before the rollout ended"
    );
    // v3: partition 0 releases the rest, at most maxUnavailable 3 at a time.
    patch(env, "web", json!({"spec": fixture(WEB_V3)?["spec"]})).await?;
    let after = wait_rolled_out(env, "web", "nginx", &WEB, "nginx", "nginx:1.7.9").await;
    let seen = watch.stop();
    after?;
    seen.check(3, 5)?;
    let reasons = env.event_reasons("web").await?;
    let count = |reason: &str| reasons.iter().filter(|(r, _)| r == reason).count();
    // Identical Events (the same pod created again) are counted in one Event's series.
    ensure!(
        count("SuccessfulCreate") >= 5 && count("SuccessfulDelete") >= 5,
        "{} SuccessfulCreate, {} SuccessfulDelete Events: {reasons:?}",
        count("SuccessfulCreate"),
        count("SuccessfulDelete")
    );
    ensure!(
        reasons.iter().any(|(r, message)| r == "SuccessfulCreate"
            && message == "create Pod web-4 in StatefulSet web successful"),
        "upstream's Event message: {reasons:?}"
    );
    Ok(())
}

pub async fn advanced_statefulset_in_place_parallel_within_max_unavailable(
    cluster: &Cluster,
) -> Result<()> {
    let env = start(cluster, "e2e-asts-inplace", "asts-inplace").await?;
    let result = in_place_rollout(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn in_place_rollout(env: &Env) -> Result<()> {
    let names = ["web-0", "web-1", "web-2", "web-3", "web-4"];
    create(env, statefulset("web", 5, "nginx:1.25", in_place(2))).await?;
    let before = wait_rolled_out(env, "web", "web", &names, "main", "nginx:1.25").await?;
    let watch = PodWatch::start(env.pods_api(), "web");
    tokio::time::sleep(Duration::from_millis(500)).await;
    set_image(env, "web", "nginx:1.26").await?;
    let after = wait_rolled_out(env, "web", "web", &names, "main", "nginx:1.26").await;
    let seen = watch.stop();
    let after = after?;
    seen.check(2, 5)?;
    ensure!(
        seen.max_unavailable >= 1,
        "the watch never saw a pod updating"
    );
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
    }
    let in_place = env
        .event_reasons("web")
        .await?
        .into_iter()
        .filter(|(reason, _)| reason == "SuccessfulUpdatePodInPlace")
        .count();
    ensure!(
        in_place == 5,
        "{in_place} SuccessfulUpdatePodInPlace Events"
    );
    Ok(())
}

pub async fn advanced_statefulset_reserve_ordinals_skip_ordinals(cluster: &Cluster) -> Result<()> {
    let env = start(cluster, "e2e-asts-reserve", "asts-reserve").await?;
    let result = reserve(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn reserve(env: &Env) -> Result<()> {
    create(
        env,
        statefulset(
            "web",
            3,
            "nginx:1.25",
            json!({"podManagementPolicy": "Parallel", "reserveOrdinals": [1]}),
        ),
    )
    .await?;
    let before = wait_rolled_out(
        env,
        "web",
        "web",
        &["web-0", "web-2", "web-3"],
        "main",
        "nginx:1.25",
    )
    .await?;
    // Reserving 2 as well moves that pod to the next free ordinal; the others stay.
    patch(env, "web", json!({"spec": {"reserveOrdinals": [1, 2]}})).await?;
    let after = wait_rolled_out(
        env,
        "web",
        "web",
        &["web-0", "web-3", "web-4"],
        "main",
        "nginx:1.25",
    )
    .await?;
    let kept = |pods: &[Pod]| -> BTreeSet<String> {
        pods.iter()
            .filter(|p| p.name_any() != "web-2" && p.name_any() != "web-4")
            .map(|p| p.uid().unwrap_or_default())
            .collect()
    };
    ensure!(
        kept(&before) == kept(&after),
        "web-0 and web-3 were replaced"
    );
    Ok(())
}

pub async fn advanced_statefulset_scale_down_deletes_highest_ordinals_and_claims(
    cluster: &Cluster,
) -> Result<()> {
    let env = start(cluster, "e2e-asts-scale", "asts-scale").await?;
    let result = scale_down(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn scale_down(env: &Env) -> Result<()> {
    create(
        env,
        statefulset(
            "db",
            3,
            "nginx:1.25",
            json!({
                "podManagementPolicy": "Parallel",
                "persistentVolumeClaimRetentionPolicy": {"whenScaled": "Delete", "whenDeleted": "Retain"},
                "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                    "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
            }),
        ),
    )
    .await?;
    let pods = wait_rolled_out(
        env,
        "db",
        "db",
        &["db-0", "db-1", "db-2"],
        "main",
        "nginx:1.25",
    )
    .await?;
    for pod in &pods {
        let claim = pod
            .spec
            .as_ref()
            .and_then(|s| s.volumes.as_ref())
            .and_then(|volumes| volumes.iter().find(|v| v.name == "data"))
            .and_then(|v| v.persistent_volume_claim.as_ref())
            .map(|c| c.claim_name.clone());
        ensure!(
            claim.as_deref() == Some(&format!("data-{}", pod.name_any())),
            "{} mounts {claim:?}",
            pod.name_any()
        );
    }
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(env.client.clone(), &env.namespace);
    let live_claims = || async {
        let list = claims.list(&ListParams::default()).await?;
        Ok::<_, anyhow::Error>(
            list.items
                .into_iter()
                .filter(|c| c.metadata.deletion_timestamp.is_none())
                .map(|c| c.name_any())
                .collect::<Vec<_>>(),
        )
    };
    ensure!(
        live_claims().await? == ["data-db-0", "data-db-1", "data-db-2"],
        "claims {:?}",
        live_claims().await?
    );
    patch(env, "db", json!({"spec": {"replicas": 1}})).await?;
    wait_rolled_out(env, "db", "db", &["db-0"], "main", "nginx:1.25").await?;
    // The garbage collector deletes the claims the scaled-down pods owned (with the pvc-protection
    // finalizer and no controller to lift it, they stay Terminating: deleted, not gone).
    wait_for(
        "the claims of db-1 and db-2 deleted, db-0's kept",
        ROLLOUT_WAIT,
        || async {
            let live = live_claims().await?;
            Ok((live == ["data-db-0"]).then_some(()))
        },
    )
    .await?;
    let kept = claims.get("data-db-0").await?;
    ensure!(
        kept.owner_references().is_empty(),
        "whenDeleted: Retain keeps the claim free of owners: {:?}",
        kept.owner_references()
    );
    Ok(())
}

pub async fn advanced_statefulset_rollout_survives_manager_restart(
    cluster: &Cluster,
) -> Result<()> {
    let namespace = "e2e-asts-restart";
    let mut config = crate::cloneset_env::simulator_config(namespace);
    // Slow restarts, so the manager dies while updates are in flight.
    config.restart_delay = Duration::from_secs(2);
    let mut env = Env::with_simulator(cluster, namespace, config).await?;
    env.manager = Some(manager(cluster, namespace, "asts-restart-1").await?);
    let result = restart(cluster, &mut env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn restart(cluster: &Cluster, env: &mut Env) -> Result<()> {
    crate::asts_env::wait_for_api(env).await?;
    let names = ["web-0", "web-1", "web-2", "web-3"];
    create(env, statefulset("web", 4, "nginx:1.25", in_place(1))).await?;
    let before = wait_rolled_out(env, "web", "web", &names, "main", "nginx:1.25").await?;
    set_image(env, "web", "nginx:1.26").await?;
    wait_for("the rollout under way", ROLLOUT_WAIT, || async {
        let pods = env.pods("web").await?;
        let started = pods
            .iter()
            .filter(|p| {
                lifecycle(p) == "Updating" || running(p, "main").as_deref() == Some("nginx:1.26")
            })
            .count();
        Ok((1..4).contains(&started).then_some(()))
    })
    .await?;
    let Some(killed) = env.manager.take() else {
        bail!("no manager to kill");
    };
    killed.kill().await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let stalled = env.pods("web").await?;
    ensure!(
        stalled
            .iter()
            .any(|p| running(p, "main").as_deref() == Some("nginx:1.25")),
        "the rollout finished without a manager"
    );
    env.manager = Some(manager(cluster, &env.namespace, "asts-restart-2").await?);
    let after = wait_rolled_out(env, "web", "web", &names, "main", "nginx:1.26").await?;
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
    }
    let revisions: BTreeSet<String> = after.iter().map(revision).collect();
    ensure!(revisions.len() == 1, "{revisions:?}");
    Ok(())
}

pub async fn advanced_statefulset_ordered_ready_creates_one_at_a_time(
    cluster: &Cluster,
) -> Result<()> {
    let env = start(cluster, "e2e-asts-ordered", "asts-ordered").await?;
    let result = ordered_ready(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn ordered_ready(env: &Env) -> Result<()> {
    let watch = PodWatch::start(env.pods_api(), "web");
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The default podManagementPolicy, OrderedReady: each pod waits for the one before to be Ready.
    create(env, statefulset("web", 3, "nginx:1.25", json!({}))).await?;
    let pods = wait_rolled_out(
        env,
        "web",
        "web",
        &["web-0", "web-1", "web-2"],
        "main",
        "nginx:1.25",
    )
    .await;
    let seen = watch.stop();
    let pods = pods?;
    seen.check(1, 3)?;
    let created: Vec<_> = pods
        .iter()
        .map(|p| p.metadata.creation_timestamp.clone().map(|t| t.0))
        .collect();
    ensure!(
        created.windows(2).all(|pair| pair[0] <= pair[1]),
        "pods were not created in ordinal order: {created:?}"
    );
    Ok(())
}

pub async fn advanced_statefulset_pre_delete_hook_holds_scale_down(
    cluster: &Cluster,
) -> Result<()> {
    let env = start(cluster, "e2e-asts-hook", "asts-hook").await?;
    let result = pre_delete_hook(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn pre_delete_hook(env: &Env) -> Result<()> {
    let hook = "example.io/block-deleting";
    create(
        env,
        statefulset(
            "web",
            2,
            "nginx:1.25",
            json!({
                "podManagementPolicy": "Parallel",
                "template": {"metadata": {"labels": {"app": "web", hook: "true"}}},
                "lifecycle": {"preDelete": {"labelsHandler": {hook: "true"}}},
            }),
        ),
    )
    .await?;
    wait_rolled_out(env, "web", "web", &["web-0", "web-1"], "main", "nginx:1.25").await?;
    patch(env, "web", json!({"spec": {"replicas": 1}})).await?;
    wait_for("web-1 held in PreparingDelete", ROLLOUT_WAIT, || async {
        let pod = env.pods_api().get("web-1").await?;
        Ok((lifecycle(&pod) == "PreparingDelete").then_some(()))
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let held = env.pods_api().get("web-1").await?;
    ensure!(
        lifecycle(&held) == "PreparingDelete" && held.metadata.deletion_timestamp.is_none(),
        "the hook did not hold the deletion: {}",
        describe(&held)
    );
    // Release: the pod is deleted.
    env.pods_api()
        .patch(
            "web-1",
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": {hook: null}}})),
        )
        .await?;
    wait_rolled_out(env, "web", "web", &["web-0"], "main", "nginx:1.25").await?;
    Ok(())
}

pub async fn advanced_statefulset_min_ready_seconds_spaces_ordered_creations(
    cluster: &Cluster,
) -> Result<()> {
    let env = start(cluster, "e2e-asts-minready", "asts-minready").await?;
    let result = min_ready_seconds(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

/// When `pod` became Ready (its Ready condition's transition time).
fn ready_since(pod: &Pod) -> Option<k8s_openapi::jiff::Timestamp> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "Ready" && c.status == "True")?
        .last_transition_time
        .as_ref()
        .map(|t| t.0)
}

async fn min_ready_seconds(env: &Env) -> Result<()> {
    // OrderedReady creates the next pod only once the one before has been available (Ready for
    // minReadySeconds): a lower bound on the gap, whatever the machine's speed.
    let min_ready = 3;
    create(
        env,
        statefulset(
            "web",
            2,
            "nginx:1.25",
            json!({"updateStrategy": {"rollingUpdate": {"minReadySeconds": min_ready}}}),
        ),
    )
    .await?;
    let pods =
        wait_rolled_out(env, "web", "web", &["web-0", "web-1"], "main", "nginx:1.25").await?;
    let first_ready = ready_since(&pods[0]);
    let second_created = pods[1].metadata.creation_timestamp.as_ref().map(|t| t.0);
    let (Some(first_ready), Some(second_created)) = (first_ready, second_created) else {
        bail!(
            "no Ready time or creation time: {:?}",
            pods.iter().map(describe).collect::<Vec<_>>()
        );
    };
    // Both times are whole seconds: allow one second of rounding.
    let gap = second_created.as_second() - first_ready.as_second();
    ensure!(
        gap >= i64::from(min_ready) - 1,
        "web-1 was created {gap}s after web-0 became Ready (minReadySeconds {min_ready})"
    );
    wait_for("availableReplicas 2", ROLLOUT_WAIT, || async {
        let status = sets(env).get("web").await?.status.unwrap_or_default();
        Ok((status.available_replicas == 2).then_some(()))
    })
    .await?;
    Ok(())
}

pub async fn advanced_statefulset_claims_deleted_with_the_set_when_deleted_delete(
    cluster: &Cluster,
) -> Result<()> {
    let env = start(cluster, "e2e-asts-whendeleted", "asts-whendeleted").await?;
    let result = deleted_with_the_set(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn deleted_with_the_set(env: &Env) -> Result<()> {
    let set = create(
        env,
        statefulset(
            "db",
            2,
            "nginx:1.25",
            json!({
                "podManagementPolicy": "Parallel",
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"},
                "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                    "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
            }),
        ),
    )
    .await?;
    wait_rolled_out(env, "db", "db", &["db-0", "db-1"], "main", "nginx:1.25").await?;
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(env.client.clone(), &env.namespace);
    let uid = set.uid().unwrap_or_default();
    wait_for(
        "both claims owned by the StatefulSet",
        ROLLOUT_WAIT,
        || async {
            let list = claims.list(&ListParams::default()).await?;
            let owned = list
                .items
                .iter()
                .filter(|c| c.owner_references().iter().any(|o| o.uid == uid))
                .count();
            Ok((owned == 2).then_some(()))
        },
    )
    .await?;
    // Scaling down keeps the claim (whenScaled: Retain) ...
    patch(env, "db", json!({"spec": {"replicas": 1}})).await?;
    wait_rolled_out(env, "db", "db", &["db-0"], "main", "nginx:1.25").await?;
    let kept = claims.get("data-db-1").await?;
    ensure!(
        kept.metadata.deletion_timestamp.is_none(),
        "whenScaled: Retain deleted data-db-1"
    );
    // ... deleting the StatefulSet deletes both (the garbage collector follows the owner references).
    sets(env)
        .delete("db", &kube::api::DeleteParams::background())
        .await?;
    wait_for(
        "both claims deleted with the StatefulSet",
        ROLLOUT_WAIT,
        || async {
            let list = claims.list(&ListParams::default()).await?;
            Ok(list
                .items
                .iter()
                .all(|c| c.metadata.deletion_timestamp.is_some())
                .then_some(()))
        },
    )
    .await?;
    Ok(())
}

pub async fn advanced_statefulset_v1alpha1_through_the_conversion_webhook(
    cluster: &Cluster,
) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: the cluster cannot call a webhook on this machine's loopback)"
        );
        return Ok(());
    }
    let namespace = "e2e-asts-alpha";
    let mut env = Env::without_manager(cluster, namespace).await?;
    let args: Vec<String> = vec![
        format!("--namespace={namespace}"),
        "--leader-elect=false".into(),
        format!("--statefulset-namespace={namespace}"),
        "--shutdown-timeout=5s".into(),
    ];
    let process = ManagerProcess::spawn(cluster, "asts-alpha", &args, Webhooks::Served, &[]).await;
    let result = match process {
        Ok(process) => {
            env.manager = Some(ManagerHandle::Child(Box::new(process)));
            v1alpha1_set(&env).await
        }
        Err(error) => Err(error),
    };
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn v1alpha1_set(env: &Env) -> Result<()> {
    let alpha: Api<v1alpha1::StatefulSet> = Api::namespaced(env.client.clone(), &env.namespace);
    let mut object = statefulset(
        "web",
        2,
        "nginx:1.25",
        json!({"podManagementPolicy": "Parallel"}),
    );
    object["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    object["metadata"]["namespace"] = json!(env.namespace);
    let set: v1alpha1::StatefulSet = serde_json::from_value(object)?;
    // The API server picks the CRD's conversion webhook up asynchronously.
    wait_for("a v1alpha1 StatefulSet created", ROLLOUT_WAIT, || async {
        Ok(alpha.create(&PostParams::default(), &set).await.ok())
    })
    .await?;
    wait_rolled_out(env, "web", "web", &["web-0", "web-1"], "main", "nginx:1.25").await?;
    // The status the controller wrote (v1beta1) reads back through v1alpha1.
    let status = alpha.get("web").await?.status.unwrap_or_default();
    ensure!(
        (
            status.replicas,
            status.ready_replicas,
            status.updated_replicas
        ) == (2, 2, 2)
            && !status.update_revision.is_empty()
            && status.current_revision == status.update_revision
            && status.label_selector == "app=web",
        "v1alpha1 status {status:?}"
    );
    Ok(())
}

pub async fn advanced_statefulset_start_ordinal_with_its_gate(cluster: &Cluster) -> Result<()> {
    let env = start_with(
        cluster,
        "e2e-asts-start",
        "asts-start",
        // Upstream's one list: the manager hands the gate on to the Advanced StatefulSet controller.
        &["--feature-gates=StatefulSetStartOrdinal=true"],
    )
    .await?;
    let result = start_ordinal(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn start_ordinal(env: &Env) -> Result<()> {
    create(
        env,
        statefulset(
            "web",
            3,
            "nginx:1.25",
            json!({"podManagementPolicy": "Parallel", "ordinals": {"start": 5}, "reserveOrdinals": [6]}),
        ),
    )
    .await?;
    wait_rolled_out(
        env,
        "web",
        "web",
        &["web-5", "web-7", "web-8"],
        "main",
        "nginx:1.25",
    )
    .await?;
    Ok(())
}

pub async fn advanced_statefulset_in_place_only_with_a_grace_period(
    cluster: &Cluster,
) -> Result<()> {
    let env = start(cluster, "e2e-asts-grace", "asts-grace").await?;
    let result = in_place_only_grace(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

async fn in_place_only_grace(env: &Env) -> Result<()> {
    let names = ["web-0", "web-1"];
    create(
        env,
        statefulset(
            "web",
            2,
            "nginx:1.25",
            json!({
                "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceOnly",
                    "inPlaceUpdateStrategy": {"gracePeriodSeconds": 4}}},
                "template": {"spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}]}},
            }),
        ),
    )
    .await?;
    let before = wait_rolled_out(env, "web", "web", &names, "main", "nginx:1.25").await?;
    let watch = PodWatch::start(env.pods_api(), "web");
    tokio::time::sleep(Duration::from_millis(500)).await;
    set_image(env, "web", "nginx:1.26").await?;
    // The pod is marked not ready first; its image changes only after the grace period.
    let first = wait_for(
        "web-1 marked not ready for its update",
        ROLLOUT_WAIT,
        || async {
            let pod = env.pods_api().get("web-1").await?;
            Ok((!is_ready(&pod)).then_some(pod))
        },
    )
    .await?;
    let spec_image = |pod: &Pod| {
        pod.spec
            .as_ref()
            .and_then(|s| s.containers.first())
            .and_then(|c| c.image.clone())
    };
    ensure!(
        spec_image(&first).as_deref() == Some("nginx:1.25"),
        "the image changed before the grace period: {}",
        describe(&first)
    );
    let after = wait_rolled_out(env, "web", "web", &names, "main", "nginx:1.26").await;
    let seen = watch.stop();
    let after = after?;
    seen.check(1, 2)?;
    ensure!(
        identities(&before) == identities(&after),
        "InPlaceOnly recreated pods"
    );
    Ok(())
}

pub async fn advanced_statefulset_volume_claims_resize_on_rolling_update(
    cluster: &Cluster,
) -> Result<()> {
    let env = start_with(
        cluster,
        "e2e-asts-resize",
        "asts-resize",
        &["--statefulset-feature-gates=StatefulSetAutoResizePVCGate=true"],
    )
    .await?;
    let result = async {
        resize_on_rolling_update(&env).await?;
        expansion_refused(&env).await
    }
    .await;
    let stopped = env.stop().await;
    result.and(stopped)
}

/// `name`: 3 pods (`Parallel`) at `nginx:1.25`, each with a claim `data` of `storage` in `class`, claims
/// resized on rolling update.
fn claimed_spec(class: &str, storage: &str) -> Value {
    json!({
        "podManagementPolicy": "Parallel",
        "volumeClaimUpdateStrategy": {"type": "OnPodRollingUpdate"},
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
            "storageClassName": class, "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": storage}}}}],
    })
}

/// Creates `name` with bound claims of `class` and waits for its 3 pods; returns their UIDs by name.
async fn roll_out_with_bound_claims(
    env: &Env,
    name: &str,
    class: &str,
) -> Result<BTreeMap<String, String>> {
    create(
        env,
        statefulset(name, 3, "nginx:1.25", claimed_spec(class, "1Gi")),
    )
    .await?;
    let claims: Vec<String> = (0..3).map(|i| format!("data-{name}-{i}")).collect();
    let claims: Vec<&str> = claims.iter().map(String::as_str).collect();
    bind_claims(env, &claims).await?;
    let pods: Vec<String> = (0..3).map(|i| format!("{name}-{i}")).collect();
    let pods: Vec<&str> = pods.iter().map(String::as_str).collect();
    let pods = wait_rolled_out(env, name, name, &pods, "main", "nginx:1.25").await?;
    Ok(pods
        .iter()
        .map(|p| (p.name_any(), p.uid().unwrap_or_default()))
        .collect())
}

/// Raises the claim template of `name` to 2Gi and its image to `nginx:1.26`.
async fn raise_storage_and_image(env: &Env, name: &str, class: &str) -> Result<()> {
    let mut spec = claimed_spec(class, "2Gi");
    spec["template"] = json!({"spec": {"containers": [{"name": "main", "image": "nginx:1.26"}]}});
    patch(env, name, json!({"spec": spec})).await?;
    Ok(())
}

/// `status.volumeClaims` of `name` as `(template, compatible, compatible ready)`.
async fn claim_counts(env: &Env, name: &str) -> Result<Vec<(String, i32, i32)>> {
    let status = sets(env).get(name).await?.status.unwrap_or_default();
    Ok(status
        .volume_claims
        .into_iter()
        .map(|c| {
            (
                c.volume_claim_name,
                c.compatible_replicas,
                c.compatible_ready_replicas,
            )
        })
        .collect())
}

async fn wait_claim_counts(env: &Env, name: &str, compatible: i32, ready: i32) -> Result<()> {
    let want = vec![("data".to_owned(), compatible, ready)];
    wait_for(
        &format!("{name}: status.volumeClaims {want:?}"),
        ROLLOUT_WAIT,
        || async {
            let counts = claim_counts(env, name).await?;
            if counts == want {
                return Ok(Some(()));
            }
            bail!("status.volumeClaims {counts:?}")
        },
    )
    .await
}

/// Fails unless each pod of `old` that is not `except` still runs with its UID at `nginx:1.25`.
async fn ensure_untouched(
    env: &Env,
    label: &str,
    old: &BTreeMap<String, String>,
    except: &[String],
) -> Result<()> {
    let pods = env.pods(label).await?;
    for (name, uid) in old.iter().filter(|(name, _)| !except.contains(name)) {
        let pod = pods.iter().find(|p| &p.name_any() == name);
        ensure!(
            pod.is_some_and(|p| p.uid().as_deref() == Some(uid)
                && running(p, "main").as_deref() == Some("nginx:1.25")),
            "{name} was updated while its claims were not ready: {:?}; claims {:?}",
            images(&pods, "main"),
            describe_claims(env).await?
        );
    }
    Ok(())
}

async fn resize_on_rolling_update(env: &Env) -> Result<()> {
    let class = format!("{}-expandable", env.namespace);
    storage_class(env, &class, true).await?;
    let old = roll_out_with_bound_claims(env, "db", &class).await?;
    wait_claim_counts(env, "db", 3, 3).await?;
    raise_storage_and_image(env, "db", &class).await?;
    let mut updated: Vec<String> = Vec::new();
    // maxUnavailable 1, from the highest ordinal down: one pod's claim at a time.
    for ordinal in [2, 1, 0] {
        let pod = format!("db-{ordinal}");
        let claim = format!("data-db-{ordinal}");
        // The claim is expanded before its pod is touched ...
        wait_for(
            &format!("{claim} expanded to 2Gi"),
            ROLLOUT_WAIT,
            || async {
                let found = claims(env).get(&claim).await?;
                Ok((requested(&found) == Some("2Gi")).then_some(()))
            },
        )
        .await?;
        ensure_untouched(env, "db", &old, &updated).await?;
        let done = i32::try_from(updated.len())?;
        wait_claim_counts(env, "db", done + 1, done).await?;
        // ... and the rollout waits while the capacity is the old one.
        tokio::time::sleep(Duration::from_secs(3)).await;
        ensure_untouched(env, "db", &old, &updated).await?;
        let expanded: Vec<String> = claims(env)
            .list(&ListParams::default())
            .await?
            .items
            .iter()
            .filter(|c| requested(c) == Some("2Gi"))
            .map(ResourceExt::name_any)
            .collect();
        ensure!(
            expanded.len() == updated.len() + 1,
            "only {claim} is expanded while it grows: {:?}",
            describe_claims(env).await?
        );
        // The test, as the resizer, grows the volume: the pod is updated.
        set_capacity(env, &claim, "2Gi").await?;
        let old_uid = old.get(&pod).cloned().unwrap_or_default();
        wait_for(
            &format!("{pod} recreated at nginx:1.26"),
            ROLLOUT_WAIT,
            || async {
                let pods = env.pods("db").await?;
                Ok(pods
                    .iter()
                    .any(|p| {
                        p.name_any() == pod
                            && p.uid().as_deref() != Some(old_uid.as_str())
                            && is_ready(p)
                            && running(p, "main").as_deref() == Some("nginx:1.26")
                    })
                    .then_some(()))
            },
        )
        .await?;
        updated.push(pod);
    }
    wait_rolled_out(
        env,
        "db",
        "db",
        &["db-0", "db-1", "db-2"],
        "main",
        "nginx:1.26",
    )
    .await?;
    wait_claim_counts(env, "db", 3, 3).await?;
    let expanded = claims(env).get("data-db-2").await?;
    ensure!(
        expanded
            .annotations()
            .get("apps.kruise.io/owned-by-asts")
            .map(String::as_str)
            == Some("db"),
        "upstream's annotation on an expanded claim: {:?}",
        expanded.annotations()
    );
    let reasons = env.event_reasons("db").await?;
    ensure!(
        reasons
            .iter()
            .any(|(reason, message)| reason == "SuccessfulResize"
                && message == "resize Claim data-db-2 Pod db-2 in StatefulSet db success"),
        "upstream's Event for an expansion: {reasons:?}"
    );
    Ok(())
}

/// A StorageClass without `allowVolumeExpansion`: the API server refuses the expansion, a Warning Event
/// says so, and no pod is updated.
async fn expansion_refused(env: &Env) -> Result<()> {
    let class = format!("{}-fixed", env.namespace);
    storage_class(env, &class, false).await?;
    let old = roll_out_with_bound_claims(env, "fixed", &class).await?;
    raise_storage_and_image(env, "fixed", &class).await?;
    let message = wait_for(
        "a FailedResize Warning Event about data-fixed-2",
        ROLLOUT_WAIT,
        || async {
            let reasons = env.event_reasons("fixed").await?;
            Ok(reasons
                .into_iter()
                .find(|(reason, message)| {
                    reason == "FailedResize" && message.contains("Claim data-fixed-2 ")
                })
                .map(|(_, message)| message))
        },
    )
    .await?;
    ensure!(
        message.contains("storageclass that provisions the pvc must support resize"),
        "the API server's message in the Event: {message}"
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    ensure_untouched(env, "fixed", &old, &[]).await?;
    let refused = claims(env).get("data-fixed-2").await?;
    ensure!(
        requested(&refused) == Some("1Gi"),
        "the refused claim keeps its size: {:?}",
        describe_claims(env).await?
    );
    Ok(())
}
