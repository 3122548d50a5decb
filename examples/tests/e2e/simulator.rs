//! The node simulator (in process, as a library) registers Ready nodes, binds pending pods, brings them to
//! Running/Ready honouring readiness gates, keeps never-ready pods unready, restarts just the changed
//! container after an in-place image update, and removes deleted pods.

use std::time::Duration;

use anyhow::{Context as _, Result, ensure};
use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_runtime::shutdown;
use kruise_simulator::identity;
use kruise_simulator::{Simulator, SimulatorConfig};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

use crate::support::{Cluster, ensure_namespace, wait_for};

const NAMESPACE: &str = "e2e-sim";
const WAIT: Duration = Duration::from_secs(30);

pub async fn simulator_runs_pods(cluster: &Cluster) -> Result<()> {
    let client = &cluster.client;
    ensure_namespace(client, NAMESPACE).await?;
    let config = SimulatorConfig {
        nodes: 2,
        node_prefix: "e2e-sim".into(),
        namespace: Some(NAMESPACE.into()),
        ready_delay: Duration::from_millis(500),
        restart_delay: Duration::from_secs(1),
        never_ready: Some(kruise_simulator::selector::parse("e2e=never-ready")?),
        delete_nodes_on_exit: true,
        ..SimulatorConfig::default()
    };
    let (stop, stopped) = shutdown::channel();
    let simulator = tokio::spawn(Simulator::new(client.clone(), config).run(stopped));
    let result = scenario(client).await;
    stop.trigger();
    let finished = tokio::time::timeout(Duration::from_secs(15), simulator).await;
    result?;
    finished
        .context("the simulator did not stop")??
        .context("the simulator failed")?;
    let nodes: Api<Node> = Api::all(client.clone());
    ensure!(
        nodes.get_opt("e2e-sim-0").await?.is_none(),
        "--delete-nodes-on-exit left the nodes"
    );
    Ok(())
}

async fn scenario(client: &Client) -> Result<()> {
    let nodes: Api<Node> = Api::all(client.clone());
    wait_for("two Ready simulated nodes", WAIT, || async {
        let list = nodes
            .list(&ListParams::default().labels("kruise-rs.io/simulated-node=true"))
            .await?;
        let ready = list
            .items
            .iter()
            .filter(|node| {
                node.metadata
                    .name
                    .as_deref()
                    .is_some_and(|n| n.starts_with("e2e-sim-"))
            })
            .filter(|node| {
                node.status
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|conditions| {
                        conditions
                            .iter()
                            .any(|c| c.type_ == "Ready" && c.status == "True")
                    })
            })
            .count();
        Ok((ready == 2).then_some(()))
    })
    .await?;

    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    for (name, labels, gates) in [
        ("plain", json!({}), json!([])),
        (
            "gated",
            json!({}),
            json!([{"conditionType": "InPlaceUpdateReady"}]),
        ),
        ("broken", json!({"e2e": "never-ready"}), json!([])),
    ] {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": labels},
            "spec": {"readinessGates": gates, "containers": [
                {"name": "main", "image": "nginx:1.25"}, {"name": "side", "image": "busybox:1.36"}]}
        }))?;
        pods.create(&PostParams::default(), &pod).await?;
    }

    let plain = wait_for("pod plain Running and Ready", WAIT, || async {
        let pod = pods.get("plain").await?;
        Ok((phase(&pod) == "Running" && condition(&pod, "Ready") == "True").then_some(pod))
    })
    .await?;
    let node = plain
        .spec
        .as_ref()
        .and_then(|s| s.node_name.clone())
        .unwrap_or_default();
    ensure!(node.starts_with("e2e-sim-"), "bound to {node:?}");
    let main = container(&plain, "main").context("no status for main")?;
    ensure!(
        main.image_id == identity::image_id("nginx:1.25"),
        "imageID {}",
        main.image_id
    );
    let plain_uid = plain.metadata.uid.clone().unwrap_or_default();
    ensure!(
        main.container_id == Some(identity::container_id(&plain_uid, "main", 0)),
        "containerID {:?}",
        main.container_id
    );

    let gated = wait_for(
        "pod gated Running with its containers ready",
        WAIT,
        || async {
            let pod = pods.get("gated").await?;
            Ok(
                (phase(&pod) == "Running" && condition(&pod, "ContainersReady") == "True")
                    .then_some(pod),
            )
        },
    )
    .await?;
    ensure!(
        condition(&gated, "Ready") == "False",
        "Ready must wait for the InPlaceUpdateReady gate"
    );
    let status =
        json!({"status": {"conditions": [{"type": "InPlaceUpdateReady", "status": "True"}]}});
    pods.patch_status("gated", &PatchParams::default(), &Patch::Strategic(&status))
        .await?;
    wait_for("pod gated Ready once its gate is True", WAIT, || async {
        Ok((condition(&pods.get("gated").await?, "Ready") == "True").then_some(()))
    })
    .await?;

    let broken = wait_for("pod broken Running", WAIT, || async {
        let pod = pods.get("broken").await?;
        Ok((phase(&pod) == "Running").then_some(pod))
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let broken = pods.get("broken").await.unwrap_or(broken);
    ensure!(
        condition(&broken, "Ready") == "False",
        "a never-ready pod became ready"
    );

    // In-place image update of one container.
    let side_before = container(&plain, "side").context("no status for side")?;
    let patch = json!({"spec": {"containers": [{"name": "main", "image": "nginx:1.26"}]}});
    pods.patch("plain", &PatchParams::default(), &Patch::Strategic(&patch))
        .await?;
    let restarted = wait_for("container main restarted with nginx:1.26", WAIT, || async {
        let pod = pods.get("plain").await?;
        let main = container(&pod, "main");
        Ok(main
            .filter(|m| m.restart_count == 1 && m.ready && m.image == "nginx:1.26")
            .map(|_| pod))
    })
    .await?;
    let main_after = container(&restarted, "main").context("no status for main")?;
    ensure!(
        main_after.image_id == identity::image_id("nginx:1.26"),
        "new imageID {}",
        main_after.image_id
    );
    ensure!(
        main_after.container_id != main.container_id,
        "the container ID must change on restart"
    );
    ensure!(
        container(&restarted, "side") == Some(side_before),
        "the other container must not restart"
    );
    ensure!(
        condition(&restarted, "Ready") == "True",
        "Ready again after the restart"
    );

    // Deleted pods go away (the simulator plays the kubelet's final delete).
    pods.delete("broken", &DeleteParams::default()).await?;
    wait_for("pod broken removed", WAIT, || async {
        Ok(pods.get_opt("broken").await?.is_none().then_some(()))
    })
    .await?;
    Ok(())
}

fn phase(pod: &Pod) -> String {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.clone())
        .unwrap_or_default()
}

fn condition(pod: &Pod, kind: &str) -> String {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|conditions| conditions.iter().find(|c| c.type_ == kind))
        .map(|c| c.status.clone())
        .unwrap_or_default()
}

fn container(pod: &Pod, name: &str) -> Option<k8s_openapi::api::core::v1::ContainerStatus> {
    pod.status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .iter()
        .find(|c| c.name == name)
        .cloned()
}
