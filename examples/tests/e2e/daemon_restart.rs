//! kruise-daemon killed (SIGKILL) in the middle of a request, then started again with the same arguments:
//! the request completes, nothing is done twice that must not be.
//!
//! * a ContainerRecreateRequest whose container has a slow exec preStop hook: the daemon is killed while the
//!   hook runs (seen in the container's log), before anything was stopped. The restarted daemon runs the
//!   interrupted hook again, once, to its end, then stops the container: the request completes with the
//!   container `Succeeded`, the container was recreated exactly once (restartCount + 1), the other container
//!   of the pod is untouched, and the restarted daemon counts exactly one kill;
//! * a `forceRecreate` request: the daemon is killed while the container's stop runs (the container got
//!   SIGTERM and takes seconds to exit), the container exits and is restarted while no daemon runs; the
//!   restarted daemon finds the stop recorded and does not kill the new incarnation (restartCount + 1);
//! * an ImagePullJob whose image is served through a gate ([`RegistryGate`]) that holds the runtime's
//!   connections: the daemon is killed while its pull waits there (the NodeImage says `Pulling`). The
//!   restarted daemon pulls again (a new connection reaches the gate), the gate opens, the NodeImage reports
//!   the tag `Succeeded` with the image's ID, the image is in the runtime and the job completes.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context as _, Result, ensure};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::{
    ContainerRecreateRequest, ContainerRecreateRequestPhase as Phase, ImagePullJob, ImagePullPhase,
    ImageTagStatus, NodeImage,
};
use kruise_runtime::cri::CriClient;
use kube::api::PostParams;
use kube::{Api, Client};
use serde_json::json;

use crate::container_recreate::{
    completed, container, create_crr, id, running_pod, states, status,
};
use crate::node_agents::{BUSYBOX, NodeAgents, pod_log_dir};
use crate::registry_gate::RegistryGate;
use crate::support::{Cluster, http_get, wait_for};

const NAMESPACE: &str = "e2e-daemon-restart";
const WAIT: Duration = Duration::from_secs(60);
/// How long the preStop hook sleeps: long enough to see it running and kill the daemon meanwhile.
const HOOK_SECONDS: u32 = 12;

pub async fn daemon_killed_mid_request_resumes(cluster: &Cluster) -> Result<()> {
    let Some(mut agents) = NodeAgents::start(cluster, "e2e-restart", 1, NAMESPACE).await? else {
        return Ok(());
    };
    let mut result = killed_during_the_pre_stop_hook(&cluster.client, &mut agents)
        .await
        .context("kruise-daemon killed while a preStop hook runs");
    if result.is_ok() {
        result = killed_during_a_forced_stop(&cluster.client, &mut agents)
            .await
            .context("kruise-daemon killed while a forceRecreate stop runs");
    }
    if result.is_ok() {
        result = killed_during_an_image_pull(&cluster.client, &mut agents)
            .await
            .context("kruise-daemon killed while an image pull runs");
    }
    agents.finish(result).await
}

/// The log of the first incarnation of `container` of `pod` (the simulator's pod log layout).
fn first_log(pod: &Pod, container: &str) -> PathBuf {
    pod_log_dir()
        .join(format!(
            "{NAMESPACE}_{}_{}",
            pod.metadata.name.clone().unwrap_or_default(),
            pod.metadata.uid.clone().unwrap_or_default()
        ))
        .join(format!("{container}_0.log"))
}

async fn killed_during_the_pre_stop_hook(client: &Client, agents: &mut NodeAgents) -> Result<()> {
    let mut main = container("main", BUSYBOX);
    main["lifecycle"] = json!({"preStop": {"exec": {"command": ["sh", "-c", format!(
        "echo prestop-start > /proc/1/fd/1; sleep {HOOK_SECONDS}; echo prestop-done > /proc/1/fd/1"
    )]}}});
    let before = running_pod(
        client,
        NAMESPACE,
        "slow-hook",
        json!([main, container("side", BUSYBOX)]),
        json!({"terminationGracePeriodSeconds": 60}),
    )
    .await?;
    let log = first_log(&before, "main");
    let crrs: Api<ContainerRecreateRequest> = Api::namespaced(client.clone(), NAMESPACE);
    create_crr(
        client,
        NAMESPACE,
        "slow-hook",
        json!({"podName": "slow-hook", "containers": [{"name": "main"}]}),
    )
    .await?;
    let hook_running = wait_for("the preStop hook to start", WAIT, || async {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if !text.contains("prestop-start") {
            return Ok(None);
        }
        Ok(Some(crrs.get("slow-hook").await?))
    })
    .await?;
    agents.kill_daemon(0).await?;
    let text = std::fs::read_to_string(&log)?;
    ensure!(
        !text.contains("prestop-done"),
        "the hook ended before the daemon was killed: {text:?}"
    );
    ensure!(
        hook_running
            .status
            .as_ref()
            .is_some_and(|status| status.phase == Phase::Recreating),
        "the request was not Recreating while its hook ran: {:?}",
        hook_running.status
    );
    ensure!(
        states(&hook_running) == [("main".to_owned(), "Pending".to_owned(), false)],
        "states while the hook ran {:?}",
        states(&hook_running)
    );
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let killed_at = pods.get("slow-hook").await?;
    ensure!(
        id(&killed_at, "main")? == id(&before, "main")?,
        "main was stopped before the daemon was killed"
    );

    agents.restart_daemon(0).await?;
    let after = main_recreated_once(client, &before).await?;
    ensure!(
        id(&after, "main")? != id(&before, "main")?,
        "main kept its containerID"
    );
    ensure!(
        id(&after, "side")? == id(&before, "side")?
            && status(&after, "side")?.restart_count == status(&before, "side")?.restart_count,
        "side was touched"
    );
    let text = std::fs::read_to_string(&log)?;
    let starts = text.matches("prestop-start").count();
    ensure!(
        starts == 2,
        "the hook started {starts} times (expected: the interrupted run and one run after the restart): {text:?}"
    );
    let ends = text.matches("prestop-done").count();
    ensure!(
        ends >= 1,
        "the hook did not run to its end before the stop: {text:?}"
    );
    eprintln!("    preStop hook runs: {starts} started, {ends} ran to their end");
    let metrics = daemon_metrics(agents).await?;
    ensure!(
        metrics
            .lines()
            .any(|line| line == "kruise_daemon_container_kills_total{result=\"success\"} 1"),
        "the restarted daemon did not stop exactly one container:\n{metrics}"
    );
    Ok(())
}

/// `forceRecreate` kills even a container that is not the incarnation the request was made for, unless the
/// request records that it killed it. The daemon is killed while its stop runs (the container got SIGTERM
/// and takes a few seconds to exit); the container exits and is restarted while no daemon runs. The
/// restarted daemon must see from the request that this container's stop was made, and not kill the new
/// incarnation: restartCount + 1, not + 2.
async fn killed_during_a_forced_stop(client: &Client, agents: &mut NodeAgents) -> Result<()> {
    let main = json!({"name": "main", "image": BUSYBOX, "command": ["sh", "-c",
        "trap 'echo got-term; sleep 4; exit 0' TERM; while true; do sleep 1; done"]});
    let before = running_pod(
        client,
        NAMESPACE,
        "slow-stop",
        json!([main]),
        json!({"terminationGracePeriodSeconds": 60}),
    )
    .await?;
    let log = first_log(&before, "main");
    create_crr(
        client,
        NAMESPACE,
        "slow-stop",
        json!({"podName": "slow-stop", "containers": [{"name": "main"}],
            "strategy": {"forceRecreate": true}}),
    )
    .await?;
    wait_for("the container to get SIGTERM", WAIT, || async {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        Ok(text.contains("got-term").then_some(()))
    })
    .await?;
    agents.kill_daemon(0).await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    wait_for(
        "the container to exit and be restarted while no daemon runs",
        WAIT,
        || async {
            let pod = pods.get("slow-stop").await?;
            let restarted = status(&pod, "main")?.restart_count
                > status(&before, "main")?.restart_count
                && kruise_api::pod::is_ready(&pod);
            Ok(restarted.then_some(()))
        },
    )
    .await?;
    agents.restart_daemon(0).await?;
    main_recreated_once(client, &before).await?;
    let metrics = daemon_metrics(agents).await?;
    ensure!(
        !metrics
            .lines()
            .any(|line| line.starts_with("kruise_daemon_container_kills_total")),
        "the restarted daemon stopped a container:\n{metrics}"
    );
    Ok(())
}

/// Waits for the request named like pod `before` (for its container `main`) to complete with `main`
/// `Succeeded`, and for the pod to be Ready again; checks that `main` was recreated exactly once. The pod
/// as it is then.
async fn main_recreated_once(client: &Client, before: &Pod) -> Result<Pod> {
    let name = before.metadata.name.clone().unwrap_or_default();
    let done = completed(client, NAMESPACE, &name, |_| Ok(())).await?;
    ensure!(
        states(&done) == [("main".to_owned(), "Succeeded".to_owned(), true)],
        "states {:?}",
        states(&done)
    );
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let after = wait_for(&format!("pod {name} Ready again"), WAIT, || async {
        let pod = pods.get(&name).await?;
        Ok(kruise_api::pod::is_ready(&pod).then_some(pod))
    })
    .await?;
    ensure!(
        status(&after, "main")?.restart_count == status(before, "main")?.restart_count + 1,
        "main restartCount {} -> {}: not recreated exactly once",
        status(before, "main")?.restart_count,
        status(&after, "main")?.restart_count
    );
    Ok(after)
}

/// The `/metrics` text of the (only) node's daemon.
async fn daemon_metrics(agents: &NodeAgents) -> Result<String> {
    let port = agents.daemons.first().context("no daemon")?.1;
    Ok(http_get(port, "/metrics").await?.1)
}

/// The status of `tag` of image `name` in node `node`'s NodeImage, if reported.
async fn tag_status(
    node_images: &Api<NodeImage>,
    node: &str,
    name: &str,
    tag: &str,
) -> Result<Option<ImageTagStatus>> {
    let node_image = node_images.get(node).await?;
    Ok(node_image
        .status
        .and_then(|mut status| status.image_statuses.remove(name))
        .and_then(|image| image.tags.into_iter().find(|reported| reported.tag == tag)))
}

async fn killed_during_an_image_pull(client: &Client, agents: &mut NodeAgents) -> Result<()> {
    let node = agents.nodes.first().context("no node")?.clone();
    let node_images: Api<NodeImage> = Api::all(client.clone());
    wait_for(&format!("the NodeImage of {node}"), WAIT, || async {
        Ok(node_images.get_opt(&node).await?)
    })
    .await?;
    let gate = RegistryGate::start(&agents.runtime.registry).await?;
    let name = format!("{}/kruise-test/busybox", gate.address());
    let image = format!("{name}:v1");
    let (_, endpoint) = agents.runtime.endpoints.first().context("no runtime")?;
    let runtime = CriClient::connect_lazy(endpoint)?;
    ensure!(
        runtime.image_status(&image).await?.is_none(),
        "{image} is there before the job"
    );
    let jobs: Api<ImagePullJob> = Api::namespaced(client.clone(), NAMESPACE);
    let job: ImagePullJob = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob",
        "metadata": {"name": "gated"},
        "spec": {"image": image, "parallelism": 1, "selector": {"names": [node]},
            "pullPolicy": {"timeoutSeconds": 300, "backoffLimit": 1},
            "completionPolicy": {"type": "Always"}},
    }))?;
    jobs.create(&PostParams::default(), &job).await?;
    let pulling = wait_for(
        "the pull to be Pulling with the runtime's connection held at the gate",
        Duration::from_secs(90),
        || async {
            let tag = tag_status(&node_images, &node, &name, "v1").await?;
            Ok(tag.filter(|tag| tag.phase == ImagePullPhase::Pulling && gate.connections() > 0))
        },
    )
    .await?;
    agents.kill_daemon(0).await?;
    let held = gate.connections();
    ensure!(
        runtime.image_status(&image).await?.is_none(),
        "{image} was pulled although the gate was closed"
    );
    agents.restart_daemon(0).await?;
    wait_for(
        "the restarted daemon's pull to reach the gate",
        WAIT,
        || async { Ok((gate.connections() > held).then_some(())) },
    )
    .await?;
    eprintln!(
        "    registry connections: {held} held when the daemon was killed, {} once the restarted daemon pulled",
        gate.connections()
    );
    gate.open();
    let job_status = wait_for(
        "the ImagePullJob to complete",
        Duration::from_secs(90),
        || async {
            let job = jobs.get("gated").await?;
            Ok(job.status.filter(|status| status.completion_time.is_some()))
        },
    )
    .await?;
    ensure!(
        (job_status.succeeded, job_status.failed) == (1, 0),
        "job status {job_status:?}"
    );
    let tag = tag_status(&node_images, &node, &name, "v1")
        .await?
        .context("no v1 status")?;
    ensure!(
        tag.phase == ImagePullPhase::Succeeded
            && tag.progress == 100
            && tag.image_id.starts_with("sha256:"),
        "NodeImage tag {tag:?}"
    );
    ensure!(
        tag.version == pulling.version,
        "the tag status answers version {}, the pull began for {}",
        tag.version,
        pulling.version
    );
    let pulled = runtime
        .image_status(&image)
        .await?
        .with_context(|| format!("{image} not in the runtime"))?;
    ensure!(
        pulled.id == tag.image_id,
        "the runtime has {} but the NodeImage reports {}",
        pulled.id,
        tag.image_id
    );
    Ok(())
}
