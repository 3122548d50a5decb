//! Advanced DaemonSets against the real API server, with the node simulator playing kubelet on several
//! labelled nodes: the tutorial's demo (`examples/manifests/samples/advance-ds-demo.yaml`, v1alpha1) runs one
//! pod per node and replaces them node by node; a surge rollout never runs more than `maxSurge` extra pods
//! (checked on every pod watch event); an in-place rollout keeps every pod within `maxUnavailable`; the
//! rolling update's node `selector` and `partition` hold old pods; a node added mid-rollout gets the update
//! revision; taints, tolerations and cordons decide which nodes run a pod; a preDelete hook holds a deletion
//! until released.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use anyhow::{Result, anyhow, ensure};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1alpha1;
use kube::ResourceExt;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use crate::daemon_pod_watch::DaemonPodWatch;
use crate::daemonset_env::{
    DaemonSetEnv, WAIT, describe, node_of, restarts, revision, running_image,
};
use crate::support::{Cluster, wait_for};

/// The tutorial's manifest, as shipped.
const DEMO: &str = include_str!("../../manifests/samples/advance-ds-demo.yaml");

/// Lets the watch see the state before a change.
const SETTLE: Duration = Duration::from_millis(500);

fn count(reasons: &[(String, String)], reason: &str) -> usize {
    reasons.iter().filter(|(r, _)| r == reason).count()
}

pub async fn advanced_daemonset_runs_the_demo_on_every_node(cluster: &Cluster) -> Result<()> {
    let env = DaemonSetEnv::start(cluster, "e2e-ads-demo", 3).await?;
    let result = demo(&env).await;
    env.stop(result).await
}

async fn demo(env: &DaemonSetEnv) -> Result<()> {
    let mut object: Value = serde_saphyr::from_str(DEMO)?;
    env.confine(&mut object);
    let daemonset: v1alpha1::DaemonSet = serde_json::from_value(object)?;
    let alpha: Api<v1alpha1::DaemonSet> = Api::namespaced(env.client.clone(), &env.namespace);
    alpha.create(&PostParams::default(), &daemonset).await?;
    let selector = "k8s-app=nginx";
    let before = env
        .wait_rolled_out("nginx", selector, "nginx", "nginx:1.7.9")
        .await?;
    let on: BTreeSet<String> = before.iter().map(node_of).collect();
    ensure!(
        on.len() == 3,
        "one pod per node: {:?}",
        before.iter().map(describe).collect::<Vec<_>>()
    );
    let reasons = env
        .events_when("nginx", |r| count(r, "SuccessfulCreate") >= 3)
        .await?;
    for pod in &before {
        let message = format!("Created pod: {}", pod.name_any());
        ensure!(
            reasons
                .iter()
                .any(|(r, m)| r == "SuccessfulCreate" && *m == message),
            "no SuccessfulCreate Event {message:?} in {reasons:?}"
        );
    }
    // The v1alpha1 view shows the same numbers (`kubectl get daemon`).
    let read = alpha.get("nginx").await?;
    let status = read.status.ok_or_else(|| anyhow!("no v1alpha1 status"))?;
    ensure!(
        (
            status.desired_number_scheduled,
            status.number_ready,
            status.updated_number_scheduled
        ) == (3, 3, 3),
        "v1alpha1 status {status:?}"
    );

    // Standard rolling update (maxUnavailable 1 by default): each node's pod is deleted, then replaced.
    let watch = DaemonPodWatch::start(env.pods_api(), selector);
    tokio::time::sleep(SETTLE).await;
    env.set_image("nginx", "nginx", "nginx:1.9.1").await?;
    let after = env
        .wait_rolled_out("nginx", selector, "nginx", "nginx:1.9.1")
        .await;
    let seen = watch.stop();
    let after = after?;
    let old: BTreeSet<String> = before.iter().map(ResourceExt::name_any).collect();
    ensure!(
        after.iter().all(|pod| !old.contains(&pod.name_any())),
        "Standard replaces pods: {:?}",
        after.iter().map(describe).collect::<Vec<_>>()
    );
    ensure!(
        seen.max_unavailable_nodes <= 1,
        "{} nodes without a Ready pod at once (maxUnavailable 1)",
        seen.max_unavailable_nodes
    );
    ensure!(
        seen.max_pods_on_a_node <= 1,
        "{} pods on one node at once without surge",
        seen.max_pods_on_a_node
    );
    let reasons = env
        .events_when("nginx", |r| {
            count(r, "SuccessfulDelete") >= 3 && count(r, "SuccessfulCreate") >= 6
        })
        .await?;
    ensure!(
        count(&reasons, "SuccessfulDelete") == 3 && count(&reasons, "SuccessfulCreate") == 6,
        "Events {reasons:?}"
    );
    Ok(())
}

pub async fn advanced_daemonset_surge_stays_within_max_surge(cluster: &Cluster) -> Result<()> {
    let env = DaemonSetEnv::start(cluster, "e2e-ads-surge", 3).await?;
    let result = surge(&env).await;
    env.stop(result).await
}

async fn surge(env: &DaemonSetEnv) -> Result<()> {
    env.create(
        "agent",
        "agent:1",
        json!({"updateStrategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}}),
    )
    .await?;
    let before = env
        .wait_rolled_out("agent", "app=agent", "main", "agent:1")
        .await?;
    let watch = DaemonPodWatch::start(env.pods_api(), "app=agent");
    tokio::time::sleep(SETTLE).await;
    env.set_image("agent", "main", "agent:2").await?;
    let after = env
        .wait_rolled_out("agent", "app=agent", "main", "agent:2")
        .await;
    let seen = watch.stop();
    let after = after?;
    ensure!(
        seen.max_surge <= 1 && seen.max_pods_on_a_node <= 2,
        "{} surge pods at once, {} pods on one node (maxSurge 1)",
        seen.max_surge,
        seen.max_pods_on_a_node
    );
    ensure!(
        seen.max_surge == 1,
        "the watch never saw a surge pod ({} events)",
        seen.events
    );
    ensure!(
        seen.max_unavailable_nodes == 0,
        "{} nodes without a Ready pod at once (maxUnavailable 0)",
        seen.max_unavailable_nodes
    );
    let old: BTreeSet<String> = before.iter().map(ResourceExt::name_any).collect();
    ensure!(
        after.iter().all(|pod| !old.contains(&pod.name_any())),
        "surge creates new pods"
    );
    Ok(())
}

pub async fn advanced_daemonset_updates_in_place_within_max_unavailable(
    cluster: &Cluster,
) -> Result<()> {
    let env = DaemonSetEnv::start(cluster, "e2e-ads-inplace", 3).await?;
    let result = in_place(&env).await;
    env.stop(result).await
}

/// Pod identity an in-place update must keep: name -> (uid, node).
fn identities(pods: &[Pod]) -> BTreeMap<String, (String, String)> {
    pods.iter()
        .map(|pod| {
            (
                pod.name_any(),
                (pod.uid().unwrap_or_default(), node_of(pod)),
            )
        })
        .collect()
}

async fn in_place(env: &DaemonSetEnv) -> Result<()> {
    env.create(
        "agent",
        "agent:1",
        json!({"updateStrategy": {"rollingUpdate": {
            "rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 1}}}),
    )
    .await?;
    let before = env
        .wait_rolled_out("agent", "app=agent", "main", "agent:1")
        .await?;
    let watch = DaemonPodWatch::start(env.pods_api(), "app=agent");
    tokio::time::sleep(SETTLE).await;
    env.set_image("agent", "main", "agent:2").await?;
    let after = env
        .wait_rolled_out("agent", "app=agent", "main", "agent:2")
        .await;
    let seen = watch.stop();
    let after = after?;
    ensure!(
        identities(&before) == identities(&after),
        "pods changed identity:\nbefore {:?}\nafter  {:?}",
        identities(&before),
        identities(&after)
    );
    for (old, new) in before.iter().zip(&after) {
        ensure!(
            restarts(new, "main") == restarts(old, "main") + 1,
            "restartCount of {}",
            describe(new)
        );
    }
    ensure!(
        seen.max_unavailable_nodes <= 1,
        "{} nodes without a Ready pod at once (maxUnavailable 1)",
        seen.max_unavailable_nodes
    );
    ensure!(
        seen.max_unavailable_nodes == 1,
        "the watch never saw a pod updating"
    );
    ensure!(
        seen.max_pods_on_a_node == 1,
        "an in-place update adds no pod"
    );
    let reasons = env
        .events_when("agent", |r| count(r, "SuccessfulUpdatePodInPlace") >= 3)
        .await?;
    ensure!(
        count(&reasons, "SuccessfulUpdatePodInPlace") == 3
            && count(&reasons, "SuccessfulDelete") == 0,
        "Events {reasons:?}"
    );
    Ok(())
}

pub async fn advanced_daemonset_selector_and_partition_hold_old_pods(
    cluster: &Cluster,
) -> Result<()> {
    let env = DaemonSetEnv::start(cluster, "e2e-ads-canary", 3).await?;
    let result = canary(&env).await;
    env.stop(result).await
}

/// The pods at `image`, and at any other image, once the status has observed the latest generation.
async fn split_by_image(env: &DaemonSetEnv, image: &str) -> Result<(Vec<Pod>, Vec<Pod>)> {
    let pods = env.pods("app=agent").await?;
    Ok(pods
        .into_iter()
        .partition(|pod| running_image(pod, "main") == Some(image)))
}

async fn canary(env: &DaemonSetEnv) -> Result<()> {
    const CANARY: &str = "e2e-ads/canary";
    let canary_node = env.nodes[0].clone();
    env.label_node(&canary_node, CANARY, Some("true")).await?;
    env.create(
        "agent",
        "agent:1",
        json!({"updateStrategy": {"rollingUpdate": {"selector": {"matchLabels": {CANARY: "true"}}}}}),
    )
    .await?;
    env.wait_rolled_out("agent", "app=agent", "main", "agent:1")
        .await?;
    env.set_image("agent", "main", "agent:2").await?;
    let updated = wait_for("the canary node's pod updated, no other", WAIT, || async {
        let status = env
            .daemonsets()
            .get("agent")
            .await?
            .status
            .unwrap_or_default();
        let (new, old) = split_by_image(env, "agent:2").await?;
        let ready = new.iter().all(kruise_api::pod::is_ready);
        Ok(
            (new.len() == 1 && old.len() == 2 && ready && status.updated_number_scheduled == 1)
                .then_some(new),
        )
    })
    .await?;
    ensure!(
        node_of(&updated[0]) == canary_node,
        "updated {} instead of the canary node {canary_node}",
        describe(&updated[0])
    );
    // The other nodes stay old while the selector holds them (a second look, after more reconciles).
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (new, old) = split_by_image(env, "agent:2").await?;
    ensure!(
        new.len() == 1 && old.len() == 2,
        "the selector let pods through: new {:?}, old {:?}",
        new.iter().map(describe).collect::<Vec<_>>(),
        old.iter().map(describe).collect::<Vec<_>>()
    );

    // Without the selector, partition 1 keeps one node old.
    env.patch(
        "agent",
        json!({"spec": {"updateStrategy": {"rollingUpdate": {"selector": null, "partition": 1}}}}),
    )
    .await?;
    wait_for(
        "two nodes updated, one held by the partition",
        WAIT,
        || async {
            let status = env
                .daemonsets()
                .get("agent")
                .await?
                .status
                .unwrap_or_default();
            let (new, old) = split_by_image(env, "agent:2").await?;
            let ready = new.iter().all(kruise_api::pod::is_ready);
            Ok(
                (new.len() == 2 && old.len() == 1 && ready && status.updated_number_scheduled == 2)
                    .then_some(()),
            )
        },
    )
    .await?;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (new, old) = split_by_image(env, "agent:2").await?;
    ensure!(
        new.len() == 2 && old.len() == 1,
        "partition 1 let the last pod through: new {}, old {}",
        new.len(),
        old.len()
    );
    env.patch(
        "agent",
        json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}}),
    )
    .await?;
    env.wait_rolled_out("agent", "app=agent", "main", "agent:2")
        .await?;
    Ok(())
}

pub async fn advanced_daemonset_node_added_mid_rollout_gets_the_update(
    cluster: &Cluster,
) -> Result<()> {
    let mut env = DaemonSetEnv::start(cluster, "e2e-ads-grow", 2).await?;
    let result = grow(&mut env).await;
    env.stop(result).await
}

async fn grow(env: &mut DaemonSetEnv) -> Result<()> {
    env.create(
        "agent",
        "agent:1",
        json!({"minReadySeconds": 2, "updateStrategy": {"rollingUpdate": {"partition": 1}}}),
    )
    .await?;
    let before = env
        .wait_rolled_out("agent", "app=agent", "main", "agent:1")
        .await?;
    let old_revision = revision(&before[0]);
    let watch = DaemonPodWatch::start(env.pods_api(), "app=agent");
    env.set_image("agent", "main", "agent:2").await?;
    // Mid-rollout: one node updated, the other held by the partition.
    wait_for("one of two nodes updated", WAIT, || async {
        let (new, old) = split_by_image(env, "agent:2").await?;
        Ok((new.len() == 1 && old.len() == 1).then_some(()))
    })
    .await?;
    let added = env.add_nodes("e2e-ads-grow-late", 1).await?;
    let late = added.first().cloned().unwrap_or_default();
    wait_for(
        &format!("a Ready pod on the new node {late}"),
        WAIT,
        || async {
            let pods = env.pods("app=agent").await?;
            Ok(pods
                .iter()
                .any(|pod| node_of(pod) == late && kruise_api::pod::is_ready(pod))
                .then_some(()))
        },
    )
    .await?;
    env.patch(
        "agent",
        json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}}),
    )
    .await?;
    let after = env
        .wait_rolled_out("agent", "app=agent", "main", "agent:2")
        .await;
    let seen = watch.stop();
    let after = after?;
    let update_revision = revision(&after[0]);
    ensure!(
        update_revision != old_revision,
        "the revision did not change"
    );
    let on_late = seen.revisions.get(&late).cloned().unwrap_or_default();
    ensure!(
        on_late == BTreeSet::from([update_revision.clone()]),
        "the new node {late} ran revisions {on_late:?}, not only the update revision {update_revision}"
    );
    ensure!(
        seen.max_unavailable_nodes <= 1,
        "{} nodes without a Ready pod at once (maxUnavailable 1)",
        seen.max_unavailable_nodes
    );
    Ok(())
}

pub async fn advanced_daemonset_pre_delete_hook_holds_deletion(cluster: &Cluster) -> Result<()> {
    let env = DaemonSetEnv::start(cluster, "e2e-ads-hook", 2).await?;
    let result = pre_delete(&env).await;
    env.stop(result).await
}

async fn pre_delete(env: &DaemonSetEnv) -> Result<()> {
    const HOOK: &str = "e2e-ads/block-deleting";
    const STATE: &str = "lifecycle.apps.kruise.io/state";
    env.create(
        "agent",
        "agent:1",
        json!({"lifecycle": {"preDelete": {"labelsHandler": {HOOK: "true"}}},
            "template": {"metadata": {"labels": {HOOK: "true"}}}}),
    )
    .await?;
    let before = env
        .wait_rolled_out("agent", "app=agent", "main", "agent:1")
        .await?;
    // Taking a node out of the pool makes its pod misplaced: the hook holds the deletion.
    let leaving = env.nodes[1].clone();
    let held = before
        .iter()
        .find(|pod| node_of(pod) == leaving)
        .map(ResourceExt::name_any)
        .ok_or_else(|| anyhow!("no pod on {leaving}"))?;
    env.label_node(&leaving, crate::daemonset_env::POOL_LABEL, None)
        .await?;
    let pods = env.pods_api();
    wait_for(&format!("{held} PreparingDelete"), WAIT, || async {
        let pod = pods.get(&held).await?;
        Ok(
            (pod.labels().get(STATE).map(String::as_str) == Some("PreparingDelete")
                && pod.metadata.deletion_timestamp.is_none())
            .then_some(()),
        )
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let pod = pods.get(&held).await?;
    ensure!(
        pod.metadata.deletion_timestamp.is_none(),
        "the hook did not hold the deletion of {held}"
    );
    // Releasing the hook lets the deletion go.
    let patch = json!({"metadata": {"labels": {HOOK: null}}});
    pods.patch(
        &held,
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(&patch),
    )
    .await?;
    wait_for(&format!("{held} deleted once released"), WAIT, || async {
        Ok(pods
            .get_opt(&held)
            .await?
            .is_none_or(|pod| pod.metadata.deletion_timestamp.is_some())
            .then_some(()))
    })
    .await?;
    Ok(())
}

pub async fn advanced_daemonset_follows_taints_and_cordons(cluster: &Cluster) -> Result<()> {
    let env = DaemonSetEnv::start(cluster, "e2e-ads-taints", 3).await?;
    let result = taints(&env).await;
    env.stop(result).await
}

async fn taints(env: &DaemonSetEnv) -> Result<()> {
    const DEDICATED: &str = "e2e-ads/dedicated";
    const EVICT: &str = "e2e-ads/evict";
    let nodes: Vec<&str> = env.nodes.iter().map(String::as_str).collect();
    let [n0, n1, n2] = nodes[..] else {
        return Err(anyhow!("three nodes expected, have {nodes:?}"));
    };
    // A NoSchedule taint keeps the pod off n2; a cordoned n1 still runs it (daemon pods tolerate
    // `node.kubernetes.io/unschedulable`).
    env.taint_node(n2, DEDICATED, Some("NoSchedule")).await?;
    env.cordon(n1, true).await?;
    env.create("agent", "agent:1", json!({})).await?;
    env.wait_pods_on("agent", "app=agent", &[n0, n1]).await?;
    // A NoExecute taint the pod does not tolerate evicts it.
    env.taint_node(n0, EVICT, Some("NoExecute")).await?;
    env.wait_pods_on("agent", "app=agent", &[n1]).await?;
    // A toleration in the template lets the pod onto n2 (and n0 would still refuse it).
    env.patch(
        "agent",
        json!({"spec": {"template": {"spec": {"tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists"},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists"},
            {"key": DEDICATED, "operator": "Exists"}]}}}}),
    )
    .await?;
    env.wait_pods_on("agent", "app=agent", &[n1, n2]).await?;
    // Without the taints and the cordon, every node runs it.
    env.taint_node(n0, EVICT, None).await?;
    env.cordon(n1, false).await?;
    env.wait_rolled_out("agent", "app=agent", "main", "agent:1")
        .await?;
    Ok(())
}
