//! PersistentPodState on the real API server: kruise-manager as a child process (its controllers and the
//! pod webhook over real HTTPS), the node simulator with six nodes, two in each of zone-a, zone-b and
//! zone-c (`--node-label`), binding pods only where their `nodeSelector` allows.
//!
//! * `persistent_pod_state_returns_pods_to_their_zone`: an Advanced StatefulSet of 3 annotated
//!   `kruise.io/auto-generate-persistent-pod-state: "true"` with the zone as its required topology gets
//!   a PersistentPodState of its name, owned by it, whose status records each pod's node and that node's
//!   zone (and the `ip` annotation asked for). A deleted pod is recreated by the StatefulSet with the
//!   `kruise.io/injected-persistent-pod-state` annotation and a `nodeSelector` on its recorded zone, and
//!   runs on a node of that zone. Scaled down to 2, the record of web-2 is removed (`WhenScaled`), and
//!   nothing rewrites the PersistentPodState once settled (2 s without a new resourceVersion).

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context as _, Result, bail, ensure};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1alpha1::PersistentPodState;
use kruise_api::apps::v1beta1::StatefulSet;
use kube::api::{DeleteParams, ListParams};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use crate::asts_env::{create, patch, statefulset, wait_for_api};
use crate::cloneset_env::{Env, ZONE_LABEL, is_ready, node, zoned_simulator_config};
use crate::support::{Cluster, wait_for};

const NAMESPACE: &str = "e2e-pps";
const MANAGER_NAMESPACE: &str = "e2e-pps-system";
const INJECTED: &str = "kruise.io/injected-persistent-pod-state";
const WAIT: Duration = Duration::from_secs(60);
const PODS: [&str; 3] = ["web-0", "web-1", "web-2"];

pub async fn persistent_pod_state_returns_pods_to_their_zone(cluster: &Cluster) -> Result<()> {
    if cluster.external {
        eprintln!(
            "    (skipped on KRUISE_E2E_KUBECONFIG: the cluster cannot call a webhook on loopback)"
        );
        return Ok(());
    }
    let zones: Vec<&str> = (0..6).map(zone_of_index).collect();
    let (env, mut manager) = crate::manager_process::with_served_manager(
        cluster,
        NAMESPACE,
        MANAGER_NAMESPACE,
        NAMESPACE,
        zoned_simulator_config(NAMESPACE, &zones),
        &[format!("--statefulset-namespace={NAMESPACE}")],
    )
    .await?;
    let result = async {
        crate::manager_process::wait_ready(manager.metrics_port).await?;
        wait_for_api(&env).await?;
        returns_pods_to_their_zone(&env).await
    }
    .await;
    let cleaned = cleanup(&env.client).await;
    let stopped = manager.terminate().await;
    let env_stopped = env.stop().await;
    result
        .and(cleaned)
        .and(stopped)
        .and(env_stopped)
        .with_context(|| manager.log_tail())
}

/// Nodes 0 and 1 are in zone-a, 2 and 3 in zone-b, 4 and 5 in zone-c.
fn zone_of_index(index: usize) -> &'static str {
    match index / 2 {
        0 => "zone-a",
        1 => "zone-b",
        _ => "zone-c",
    }
}

/// The zone of a simulated node of this scenario (`<namespace>-<index>`).
fn zone_of(node: &str) -> Option<&'static str> {
    let index: usize = node.strip_prefix(&format!("{NAMESPACE}-"))?.parse().ok()?;
    Some(zone_of_index(index))
}

async fn cleanup(client: &Client) -> Result<()> {
    let _ = Api::<StatefulSet>::namespaced(client.clone(), NAMESPACE)
        .delete_collection(&DeleteParams::default(), &ListParams::default())
        .await;
    let _ = Api::<PersistentPodState>::namespaced(client.clone(), NAMESPACE)
        .delete_collection(&DeleteParams::default(), &ListParams::default())
        .await;
    Api::<Pod>::namespaced(client.clone(), NAMESPACE)
        .delete_collection(
            &DeleteParams::default().grace_period(0),
            &ListParams::default(),
        )
        .await?;
    Ok(())
}

/// The live (not terminating) pods of `web`, by name.
async fn pods(env: &Env) -> Result<BTreeMap<String, Pod>> {
    Ok(env
        .pods("web")
        .await?
        .into_iter()
        .map(|pod| (pod.name_any(), pod))
        .collect())
}

/// Waits until the PersistentPodState `web` records exactly `names`, each on the node its pod runs on
/// with that node's zone; returns the records' zones.
async fn wait_recorded(
    env: &Env,
    states: &Api<PersistentPodState>,
    names: &[&str],
) -> Result<BTreeMap<String, String>> {
    wait_for(
        &format!("PersistentPodState web recording {names:?}"),
        WAIT,
        || async {
            let Some(state) = states.get_opt("web").await? else {
                bail!("no PersistentPodState web yet");
            };
            let recorded = state.status.unwrap_or_default().pod_states;
            let keys: Vec<&str> = recorded.keys().map(String::as_str).collect();
            ensure!(keys == names, "records {keys:?}");
            let live = pods(env).await?;
            let mut zones = BTreeMap::new();
            for (name, record) in &recorded {
                let pod = live.get(name).context(format!("no pod {name}"))?;
                let zone = record.node_topology_labels.get(ZONE_LABEL).cloned();
                ensure!(
                    record.node_name == node(pod) && zone.as_deref() == zone_of(&record.node_name),
                    "{name} runs on {} but is recorded on {} in {zone:?}",
                    node(pod),
                    record.node_name
                );
                ensure!(
                    record.annotations.get("ip") == pod.annotations().get("ip"),
                    "{name}: recorded annotations {:?}",
                    record.annotations
                );
                zones.insert(name.clone(), zone.unwrap_or_default());
            }
            Ok(Some(zones))
        },
    )
    .await
}

async fn returns_pods_to_their_zone(env: &Env) -> Result<()> {
    let mut set = statefulset(
        "web",
        3,
        "nginx:1.25",
        json!({
            "podManagementPolicy": "Parallel",
            "template": {"metadata": {"annotations": {"ip": "10.0.0.1"}}},
        }),
    );
    set["metadata"]["annotations"] = json!({
        "kruise.io/auto-generate-persistent-pod-state": "true",
        "kruise.io/required-persistent-topology": ZONE_LABEL,
        "kruise.io/persistent-pod-annotations": "ip",
    });
    let created = create(env, set).await?;
    let states: Api<PersistentPodState> = Api::namespaced(env.client.clone(), NAMESPACE);
    let zones = wait_recorded(env, &states, &PODS).await?;
    let generated = states.get("web").await?;
    let owner = generated.owner_references().first().cloned();
    ensure!(
        owner.as_ref().map(|owner| (&owner.uid, owner.controller))
            == Some((&created.uid().unwrap_or_default(), Some(true))),
        "the generated PersistentPodState is not controlled by the StatefulSet: {owner:?}"
    );
    let keys = generated
        .spec
        .required_persistent_topology
        .map(|term| term.node_topology_keys)
        .unwrap_or_default();
    ensure!(keys == [ZONE_LABEL], "required keys {keys:?}");

    // Recreate web-1: it comes back with its zone required, and runs there.
    let before = pods(env).await?;
    let old_uid = before.get("web-1").and_then(ResourceExt::uid);
    env.pods_api()
        .delete("web-1", &DeleteParams::default().grace_period(0))
        .await?;
    let expected_zone = zones.get("web-1").cloned().unwrap_or_default();
    let recreated = wait_for("web-1 recreated and Ready", WAIT, || async {
        let live = pods(env).await?;
        Ok(live
            .get("web-1")
            .filter(|pod| pod.uid() != old_uid && is_ready(pod))
            .cloned())
    })
    .await?;
    ensure!(
        recreated.annotations().get(INJECTED).map(String::as_str) == Some("web"),
        "web-1 annotations {:?}",
        recreated.annotations()
    );
    let selector = recreated
        .spec
        .as_ref()
        .and_then(|spec| spec.node_selector.clone())
        .unwrap_or_default();
    ensure!(
        selector.get(ZONE_LABEL) == Some(&expected_zone),
        "web-1 nodeSelector {selector:?}, recorded zone {expected_zone}"
    );
    ensure!(
        zone_of(&node(&recreated)) == Some(expected_zone.as_str()),
        "web-1 runs on {} outside {expected_zone}",
        node(&recreated)
    );
    // A pod created for the first time (web-0 kept) has no injection.
    ensure!(
        before
            .get("web-0")
            .is_some_and(|pod| pod.annotations().get(INJECTED).is_none()),
        "web-0 was injected at its first creation"
    );

    // Scale down to 2: web-2's record goes once the pod is gone.
    patch(env, "web", json!({"spec": {"replicas": 2}})).await?;
    wait_recorded(env, &states, &PODS[..2]).await?;
    // Settled: nothing rewrites the status (a write per reconcile would show here).
    let settled = states.get("web").await?.resource_version();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let later = states.get("web").await?.resource_version();
    ensure!(
        settled == later,
        "the PersistentPodState was rewritten after settling: {settled:?} -> {later:?}"
    );
    Ok(())
}
