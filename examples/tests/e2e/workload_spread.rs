//! WorkloadSpread on the real API server: kruise-manager as a child process (webhooks over real HTTPS,
//! gate `WorkloadSpread` on by default), the node simulator with two nodes in zone-a and two in zone-b
//! (`--node-label`), honouring the required node affinity the webhook injects.
//!
//! * `workload_spread_spreads_a_cloneset_over_zones`: a CloneSet of 6 with subset-a (zone-a, maxReplicas
//!   4) and subset-b (zone-b, no limit): 4 pods run in zone-a and 2 in zone-b, each annotated with its
//!   subset; the status says replicas 4 / missing 0 and 2 / -1 with nothing left in `creatingPods`; the
//!   deletion costs are 200 (subset-a, first of two subsets) and 100 (subset-b), and nothing rewrites the
//!   WorkloadSpread once settled (3 s without a new resourceVersion). Scaled down to 4, the
//!   CloneSet removes the two lowest-cost pods, the zone-b ones: the 4 zone-a pods stay, and the status
//!   says subset-b has 0 replicas.
//! * `workload_spread_adaptive_reschedules_unschedulable_pods`: an `Adaptive` WorkloadSpread whose first
//!   subset names a zone without nodes (maxReplicas 2) and `rescheduleCriticalSeconds: 10`: its two pods
//!   are marked Unschedulable by the simulator, deleted by the controller after 10 s, the subset becomes
//!   `Schedulable=False`, and the CloneSet's replacements go to zone-b: all 3 pods Running there.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context as _, Result, ensure};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::WorkloadSpread;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::{Api, Client, ResourceExt};
use serde_json::{Value, json};

use crate::cloneset_env::{Env, ZONE_LABEL, is_ready, zoned_simulator_config};
use crate::support::{Cluster, wait_for};

const FIXED_NAMESPACE: &str = "e2e-workloadspread";
const ADAPTIVE_NAMESPACE: &str = "e2e-workloadspread-adaptive";
const MANAGER_NAMESPACE: &str = "e2e-workloadspread-system";
const MATCHED: &str = "apps.kruise.io/matched-workloadspread";
const COST: &str = "controller.kubernetes.io/pod-deletion-cost";
const WAIT: Duration = Duration::from_secs(120);

pub async fn workload_spread_spreads_a_cloneset_over_zones(cluster: &Cluster) -> Result<()> {
    with_manager(cluster, FIXED_NAMESPACE, |env| Box::pin(fixed(env))).await
}

pub async fn workload_spread_adaptive_reschedules_unschedulable_pods(
    cluster: &Cluster,
) -> Result<()> {
    with_manager(cluster, ADAPTIVE_NAMESPACE, |env| Box::pin(adaptive(env))).await
}

type Body =
    for<'a> fn(&'a Env) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<()>> + 'a>>;

/// The simulator (nodes 0 and 1 in zone-a, 2 and 3 in zone-b) and a manager serving its webhooks.
async fn with_manager(cluster: &Cluster, namespace: &str, body: Body) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: the cluster cannot call a webhook on loopback)"
        );
        return Ok(());
    }
    let (env, mut manager) = crate::manager_process::with_served_manager(
        cluster,
        namespace,
        MANAGER_NAMESPACE,
        namespace,
        zoned_simulator_config(namespace, &["zone-a", "zone-a", "zone-b", "zone-b"]),
        &[format!("--cloneset-namespace={namespace}")],
    )
    .await?;
    let result = async {
        crate::manager_process::wait_ready(manager.metrics_port).await?;
        body(&env).await
    }
    .await;
    let cleaned = cleanup(&env.client, namespace).await;
    let stopped = manager.terminate().await;
    let env_stopped = env.stop().await;
    result
        .and(cleaned)
        .and(stopped)
        .and(env_stopped)
        .with_context(|| manager.log_tail())
}

async fn cleanup(client: &Client, namespace: &str) -> Result<()> {
    let _ = spreads(client, namespace)
        .delete_collection(&DeleteParams::default(), &ListParams::default())
        .await;
    let _ = Api::<kruise_api::apps::v1beta1::CloneSet>::namespaced(client.clone(), namespace)
        .delete_collection(&DeleteParams::default(), &ListParams::default())
        .await;
    Api::<Pod>::namespaced(client.clone(), namespace)
        .delete_collection(
            &DeleteParams::default().grace_period(0),
            &ListParams::default(),
        )
        .await?;
    Ok(())
}

fn spreads(client: &Client, namespace: &str) -> Api<WorkloadSpread> {
    Api::namespaced(client.clone(), namespace)
}

/// Creates a v1alpha1 WorkloadSpread (the storage version, v1alpha1 field names) and waits until the
/// controller has written its first status and the webhook admits pods into it (dry runs of a pod of the
/// target).
async fn create_spread(env: &Env, name: &str, target: &str, spec: Value) -> Result<()> {
    let alpha = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apps.kruise.io", "v1alpha1", "WorkloadSpread"),
        "workloadspreads",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.namespace, &alpha);
    wait_for("the WorkloadSpread API", WAIT, || async {
        Ok(api
            .list(&ListParams::default().limit(1))
            .await
            .ok()
            .map(|_| ()))
    })
    .await?;
    let mut object = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "WorkloadSpread",
        "metadata": {"name": name, "namespace": env.namespace},
        "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": target}}});
    crate::cloneset_env::merge(&mut object["spec"], spec);
    api.create(&PostParams::default(), &serde_json::from_value(object)?)
        .await?;
    wait_for(
        &format!("the first status of WorkloadSpread {name}"),
        WAIT,
        || async {
            let spread = spreads(&env.client, &env.namespace).get(name).await?;
            let status = spread.status.unwrap_or_default();
            Ok((status.observed_generation >= 1
                && status.subset_statuses.len() == spread.spec.subsets.len())
            .then_some(()))
        },
    )
    .await?;
    // The API server picks the webhook configuration up asynchronously.
    let probe: Pod = serde_json::from_value(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": format!("{target}-probe"), "namespace": env.namespace, "ownerReferences": [
            {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": target,
             "uid": "00000000-0000-0000-0000-000000000000", "controller": true}]},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}))?;
    wait_for("the WorkloadSpread webhook", WAIT, || async {
        let created = env
            .pods_api()
            .create(
                &PostParams {
                    dry_run: true,
                    ..PostParams::default()
                },
                &probe,
            )
            .await?;
        Ok(created.annotations().contains_key(MATCHED).then_some(()))
    })
    .await
}

/// The subset of each of `pods` and the zone of its node.
fn placement(pods: &[Pod]) -> Vec<(String, String, Option<String>)> {
    pods.iter()
        .map(|pod| {
            let matched: Value = pod
                .annotations()
                .get(MATCHED)
                .and_then(|value| serde_json::from_str(value).ok())
                .unwrap_or(Value::Null);
            (
                pod.name_any(),
                matched["subset"].as_str().unwrap_or_default().to_owned(),
                pod.spec.as_ref().and_then(|spec| spec.node_name.clone()),
            )
        })
        .collect()
}

/// The zone of a simulated node of this scenario (`<namespace>-<index>`).
fn zone_of(node: &str) -> &'static str {
    if node.ends_with("-0") || node.ends_with("-1") {
        "zone-a"
    } else {
        "zone-b"
    }
}

fn subset_counts(pods: &[Pod]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for (_, subset, _) in placement(pods) {
        *counts.entry(subset).or_default() += 1;
    }
    counts
}

async fn fixed(env: &Env) -> Result<()> {
    create_spread(
        env,
        "spread",
        "web",
        json!({"subsets": [
            {"name": "subset-a", "maxReplicas": 4,
             "requiredNodeSelectorTerm": {"matchExpressions": [{"key": ZONE_LABEL, "operator": "In", "values": ["zone-a"]}]},
             "patch": {"metadata": {"labels": {"spread-zone": "a"}}}},
            {"name": "subset-b",
             "requiredNodeSelectorTerm": {"matchExpressions": [{"key": ZONE_LABEL, "operator": "In", "values": ["zone-b"]}]}}]}),
    )
    .await?;
    env.create("web", 6, "nginx:1.25", json!({})).await?;
    let pods = env.wait_rolled_out("web", 6, "nginx:1.25").await?;
    let counts = subset_counts(&pods);
    ensure!(
        counts == BTreeMap::from([("subset-a".to_owned(), 4), ("subset-b".to_owned(), 2)]),
        "subsets {counts:?}: {:?}",
        placement(&pods)
    );
    for (name, subset, node) in placement(&pods) {
        let node = node.with_context(|| format!("{name} has no node"))?;
        let expected = if subset == "subset-a" {
            "zone-a"
        } else {
            "zone-b"
        };
        ensure!(
            zone_of(&node) == expected,
            "{name} of {subset} runs on {node}"
        );
    }
    ensure!(
        pods.iter()
            .filter(|pod| pod.labels().get("spread-zone").map(String::as_str) == Some("a"))
            .count()
            == 4,
        "the subset patch labels the zone-a pods"
    );
    // The controller settles: replicas counted, nothing in flight, deletion costs written.
    wait_for(
        "the WorkloadSpread status and deletion costs",
        WAIT,
        || async {
            let spread = spreads(&env.client, &env.namespace).get("spread").await?;
            let status = spread.status.unwrap_or_default();
            let entries: Vec<_> = status
                .subset_statuses
                .iter()
                .map(|s| {
                    (
                        s.name.as_str(),
                        s.replicas,
                        s.missing_replicas,
                        s.creating_pods.len(),
                    )
                })
                .collect();
            let pods = env.pods("web").await?;
            let costs: Vec<_> = placement(&pods)
                .into_iter()
                .zip(&pods)
                .map(|((_, subset, _), pod)| (subset, pod.annotations().get(COST).cloned()))
                .collect();
            let costs_ok = costs.iter().all(|(subset, cost)| {
                cost.as_deref() == Some(if subset == "subset-a" { "200" } else { "100" })
            });
            Ok(
                (entries == [("subset-a", 4, 0, 0), ("subset-b", 2, -1, 0)] && costs_ok)
                    .then_some(()),
            )
        },
    )
    .await?;
    // Settled: nothing rewrites the WorkloadSpread while nothing changes (no status churn).
    let before = spreads(&env.client, &env.namespace)
        .get("spread")
        .await?
        .resource_version();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = spreads(&env.client, &env.namespace)
        .get("spread")
        .await?
        .resource_version();
    ensure!(
        before == after,
        "the WorkloadSpread was written again: {before:?} -> {after:?}"
    );

    // Scale down to 4: the two zone-b pods (cost 100) go, the zone-a ones (cost 200) stay.
    let zone_a: Vec<String> = placement(&env.pods("web").await?)
        .into_iter()
        .filter(|(_, subset, _)| subset == "subset-a")
        .map(|(name, _, _)| name)
        .collect();
    env.patch("web", json!({"spec": {"replicas": 4}})).await?;
    let kept = wait_for("the CloneSet scaled down to 4", WAIT, || async {
        let pods = env.pods("web").await?;
        let all = env
            .pods_api()
            .list(&ListParams::default().labels("app=web"))
            .await?
            .items;
        Ok((pods.len() == 4 && all.len() == 4).then_some(pods))
    })
    .await?;
    let kept_names: Vec<String> = kept.iter().map(ResourceExt::name_any).collect();
    ensure!(
        kept_names == zone_a,
        "kept {kept_names:?}, expected the zone-a pods {zone_a:?}"
    );
    wait_for("subset-b emptied in the status", WAIT, || async {
        let spread = spreads(&env.client, &env.namespace).get("spread").await?;
        let status = spread.status.unwrap_or_default();
        let entries: Vec<_> = status
            .subset_statuses
            .iter()
            .map(|s| (s.name.as_str(), s.replicas, s.missing_replicas))
            .collect();
        Ok((entries == [("subset-a", 4, 0), ("subset-b", 0, -1)]).then_some(()))
    })
    .await
}

async fn adaptive(env: &Env) -> Result<()> {
    create_spread(
        env,
        "adaptive-spread",
        "adaptive",
        json!({
            "scheduleStrategy": {"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 10}},
            "subsets": [
                {"name": "subset-x", "maxReplicas": 2,
                 "requiredNodeSelectorTerm": {"matchExpressions": [{"key": ZONE_LABEL, "operator": "In", "values": ["zone-x"]}]}},
                {"name": "subset-b",
                 "requiredNodeSelectorTerm": {"matchExpressions": [{"key": ZONE_LABEL, "operator": "In", "values": ["zone-b"]}]}}]}),
    )
    .await?;
    env.create("adaptive", 3, "nginx:1.25", json!({})).await?;
    // First two pods go to subset-x and stay pending, marked Unschedulable by the simulator.
    let stuck: Vec<String> = wait_for("two Unschedulable pods in subset-x", WAIT, || async {
        let pods = env.pods("adaptive").await?;
        let stuck: Vec<String> = pods
            .iter()
            .zip(placement(&pods))
            .filter(|(pod, (_, subset, _))| {
                subset == "subset-x"
                    && kruise_api::pod::condition(pod, "PodScheduled").is_some_and(|condition| {
                        condition.status == "False"
                            && condition.reason.as_deref() == Some("Unschedulable")
                    })
            })
            .map(|(pod, _)| pod.name_any())
            .collect();
        Ok((stuck.len() == 2).then_some(stuck))
    })
    .await?;
    // After rescheduleCriticalSeconds the controller deletes them; replacements go to zone-b.
    let pods = wait_for("3 Ready pods, all in zone-b", WAIT, || async {
        let pods = env.pods("adaptive").await?;
        let done = pods.len() == 3
            && pods.iter().all(is_ready)
            && placement(&pods).iter().all(|(_, subset, node)| {
                subset == "subset-b"
                    && node
                        .as_deref()
                        .is_some_and(|node| zone_of(node) == "zone-b")
            });
        Ok(done.then_some(pods))
    })
    .await?;
    for pod in &pods {
        ensure!(
            !stuck.contains(&pod.name_any()),
            "{} was stuck but not rescheduled",
            pod.name_any()
        );
    }
    let spread = spreads(&env.client, &env.namespace)
        .get("adaptive-spread")
        .await?;
    let status = spread.status.unwrap_or_default();
    let x = &status.subset_statuses[0];
    ensure!(
        x.conditions
            .iter()
            .any(|condition| condition.type_ == "Schedulable" && condition.status == "False"),
        "subset-x should be unschedulable: {:?}",
        x.conditions
    );
    Ok(())
}
