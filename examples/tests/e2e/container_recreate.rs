//! ContainerRecreateRequests on real containerd: kruise-manager's webhook fills the request, kruise-daemon
//! stops exactly the named containers through CRI, the simulator restarts them as kubelet would, and the
//! manager's controller syncs the snapshot and holds the pod not-ready for the unready grace.
//!
//! * a request restarts exactly the named container (restartCount + 1, new containerID), the other one is
//!   untouched; its end-to-end latency (create → Completed with every container Succeeded) is printed;
//! * `orderedRecreate`: the second container is killed only once the first one succeeded;
//! * `failurePolicy: Fail`: a kill that fails completes the request at once, the next container untouched;
//! * `unreadyGracePeriodSeconds`: the pod is NotReady before its container is stopped, Ready again after;
//! * an HTTP preStop hook without a host never reaches the node's loopback address (a listener there gets no
//!   connection): it goes to the pod's IP, which a host-network pod does not have, so it fails and the
//!   container is recreated all the same;
//! * a request whose pod-UID label points at a pod of another namespace (created where the webhook does not
//!   look, with kruise-manager stopped so only the daemon acts) is refused, and that pod's container is left
//!   alone.

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, ensure};
use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use kruise_api::apps::v1beta1::{ContainerRecreateRequest, ContainerRecreateRequestPhase as Phase};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::{Value, json};

use crate::node_agents::{BADSTOP, BUSYBOX, NodeAgents, SERVE};
use crate::support::{Cluster, wait_for};

const NAMESPACE: &str = "e2e-crr";
const WAIT: Duration = Duration::from_secs(60);

pub async fn daemon_recreates_containers(cluster: &Cluster) -> Result<()> {
    let Some(mut agents) = NodeAgents::start(cluster, "e2e-crr", 1, NAMESPACE).await? else {
        return Ok(());
    };
    let mut result = scenarios(&cluster.client).await;
    if result.is_ok() {
        result = http_hook_without_host(&cluster.client, &agents)
            .await
            .context("an HTTP preStop hook without host");
    }
    if result.is_ok() {
        result = foreign_pod_is_refused(&cluster.client, &mut agents)
            .await
            .context("a request naming another namespace's pod");
    }
    let rss = agents.daemon_rss_kib();
    eprintln!("    kruise-daemon RSS after the CRR scenarios: {rss:?} KiB");
    agents.finish(result).await
}

async fn scenarios(client: &Client) -> Result<()> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    restarts_exactly_the_named_container(client)
        .await
        .context("restart one container")?;
    let bystander = pods.get("one").await?;
    ordered_recreate(client).await.context("orderedRecreate")?;
    failure_policy_fail(client)
        .await
        .context("failurePolicy Fail")?;
    unready_grace(client)
        .await
        .context("unreadyGracePeriodSeconds")?;
    // The requests on the other pods of the node left this pod's containers alone.
    let after = pods.get("one").await?;
    for name in ["main", "side"] {
        ensure!(
            id(&after, name)? == id(&bystander, name)?,
            "container {name} of pod one was touched"
        );
    }
    Ok(())
}

/// A preStop hook that writes to the container's log (PID 1's standard output).
fn with_pre_stop(mut container: Value) -> Value {
    container["lifecycle"] = json!({"preStop": {"exec": {"command":
        ["sh", "-c", "echo prestop-ran > /proc/1/fd/1"]}}});
    container
}

pub(crate) fn container(name: &str, image: &str) -> Value {
    json!({"name": name, "image": image, "command": ["sh", "-c", SERVE]})
}

pub(crate) async fn running_pod(
    client: &Client,
    namespace: &str,
    name: &str,
    containers: Value,
    extra: Value,
) -> Result<Pod> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let mut spec = json!({"containers": containers, "terminationGracePeriodSeconds": 5});
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    let pod: Pod = serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec}))?;
    pods.create(&PostParams::default(), &pod).await?;
    wait_for(&format!("pod {name} Running and Ready"), WAIT, || async {
        let pod = pods.get(name).await?;
        Ok(
            (kruise_api::pod::phase(&pod) == "Running" && kruise_api::pod::is_ready(&pod))
                .then_some(pod),
        )
    })
    .await
}

pub(crate) fn status<'a>(pod: &'a Pod, name: &str) -> Result<&'a ContainerStatus> {
    pod.status
        .as_ref()
        .and_then(|status| status.container_statuses.as_ref())
        .and_then(|statuses| statuses.iter().find(|status| status.name == name))
        .with_context(|| format!("no status for container {name}"))
}

pub(crate) fn id(pod: &Pod, name: &str) -> Result<String> {
    Ok(status(pod, name)?.container_id.clone().unwrap_or_default())
}

/// Creates the request once the webhook acts on it; returns it and when it was created.
pub(crate) async fn create_crr(
    client: &Client,
    namespace: &str,
    name: &str,
    spec: Value,
) -> Result<(ContainerRecreateRequest, Instant)> {
    let api: Api<ContainerRecreateRequest> = Api::namespaced(client.clone(), namespace);
    let crr: ContainerRecreateRequest = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "ContainerRecreateRequest",
        "metadata": {"name": name}, "spec": spec,
    }))?;
    // The API server picks a new webhook configuration up asynchronously: dry-run until the webhook acts.
    wait_for(
        "the ContainerRecreateRequest webhook",
        Duration::from_secs(30),
        || async {
            let params = PostParams {
                dry_run: true,
                ..PostParams::default()
            };
            let created = api.create(&params, &crr).await?;
            Ok(created
                .metadata
                .labels
                .is_some_and(|labels| labels.contains_key("crr.apps.kruise.io/node-name"))
                .then_some(()))
        },
    )
    .await?;
    let created = Instant::now();
    Ok((api.create(&PostParams::default(), &crr).await?, created))
}

/// Waits for the request to complete, calling `observe` on every version seen.
pub(crate) async fn completed(
    client: &Client,
    namespace: &str,
    name: &str,
    mut observe: impl FnMut(&ContainerRecreateRequest) -> Result<()>,
) -> Result<ContainerRecreateRequest> {
    let api: Api<ContainerRecreateRequest> = Api::namespaced(client.clone(), namespace);
    let deadline = Instant::now() + WAIT;
    loop {
        let crr = api.get(name).await?;
        observe(&crr)?;
        if crr
            .status
            .as_ref()
            .is_some_and(|status| status.phase == Phase::Completed)
        {
            return Ok(crr);
        }
        ensure!(
            Instant::now() < deadline,
            "request {name} not Completed after {WAIT:?}: {:?}",
            crr.status
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

pub(crate) fn states(crr: &ContainerRecreateRequest) -> Vec<(String, String, bool)> {
    crr.status
        .iter()
        .flat_map(|status| status.container_recreate_states.iter())
        .map(|state| {
            (
                state.name.clone(),
                state.phase.as_str().to_owned(),
                state.is_killed,
            )
        })
        .collect()
}

async fn restarts_exactly_the_named_container(client: &Client) -> Result<()> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let before = running_pod(
        client,
        NAMESPACE,
        "one",
        json!([
            with_pre_stop(container("main", BUSYBOX)),
            container("side", BUSYBOX)
        ]),
        json!({}),
    )
    .await?;
    let (crr, started) = create_crr(
        client,
        NAMESPACE,
        "restart-main",
        json!({"podName": "one", "containers": [{"name": "main"}]}),
    )
    .await?;
    ensure!(
        crr.spec.containers[0].pre_stop.is_some(),
        "the webhook did not copy the preStop hook"
    );
    let labels = crr.metadata.labels.clone().unwrap_or_default();
    ensure!(
        labels.get("crr.apps.kruise.io/pod-uid") == before.metadata.uid.as_ref(),
        "labels {labels:?}"
    );
    let context = crr.spec.containers[0]
        .status_context
        .clone()
        .context("no statusContext")?;
    ensure!(
        context.container_id == id(&before, "main")?,
        "statusContext {context:?}"
    );
    let done = completed(client, NAMESPACE, "restart-main", |_| Ok(())).await?;
    let latency = started.elapsed();
    ensure!(
        states(&done) == [("main".to_owned(), "Succeeded".to_owned(), true)],
        "states {:?}",
        states(&done)
    );
    eprintln!(
        "    CRR latency, create -> Completed (main Succeeded): {} ms",
        latency.as_millis()
    );
    let after = pods.get("one").await?;
    ensure!(
        status(&after, "main")?.restart_count == status(&before, "main")?.restart_count + 1,
        "main restartCount"
    );
    ensure!(
        id(&after, "main")? != id(&before, "main")?,
        "main kept its containerID"
    );
    ensure!(
        id(&after, "main")?.starts_with("containerd://")
            && status(&after, "main")?.image_id.starts_with("sha256:"),
        "not the runtime's IDs: {:?} {:?}",
        id(&after, "main")?,
        status(&after, "main")?.image_id
    );
    ensure!(
        id(&after, "side")? == id(&before, "side")?,
        "side was touched"
    );
    ensure!(
        status(&after, "side")?.restart_count == status(&before, "side")?.restart_count,
        "side restarted"
    );
    let log = crate::node_agents::pod_log_dir()
        .join(format!(
            "{NAMESPACE}_one_{}",
            before.metadata.uid.clone().unwrap_or_default()
        ))
        .join("main_0.log");
    let text =
        std::fs::read_to_string(&log).with_context(|| format!("reading {}", log.display()))?;
    ensure!(
        text.contains("prestop-ran"),
        "the preStop hook did not run before the stop: {text:?}"
    );
    // The manager drops the active label of a completed request.
    let api: Api<ContainerRecreateRequest> = Api::namespaced(client.clone(), NAMESPACE);
    wait_for(
        "the active label removed",
        Duration::from_secs(20),
        || async {
            let crr = api.get("restart-main").await?;
            Ok((!crr
                .metadata
                .labels
                .unwrap_or_default()
                .contains_key("crr.apps.kruise.io/active"))
            .then_some(()))
        },
    )
    .await
}

async fn ordered_recreate(client: &Client) -> Result<()> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let before = running_pod(
        client,
        NAMESPACE,
        "ordered",
        json!([container("a", BUSYBOX), container("b", BUSYBOX)]),
        json!({}),
    )
    .await?;
    create_crr(
        client,
        NAMESPACE,
        "ordered",
        json!({"podName": "ordered", "containers": [{"name": "a"}, {"name": "b"}],
            "strategy": {"orderedRecreate": true}}),
    )
    .await?;
    let mut b_killed_while_a_unfinished = false;
    let mut a_succeeded_seen = false;
    let done = completed(client, NAMESPACE, "ordered", |crr| {
        let states = states(crr);
        let phase = |name: &str| {
            states
                .iter()
                .find(|s| s.0 == name)
                .map(|s| (s.1.clone(), s.2))
        };
        if let (Some((a, _)), Some((b, b_killed))) = (phase("a"), phase("b")) {
            a_succeeded_seen |= a == "Succeeded";
            if (b_killed || b != "Pending") && a != "Succeeded" {
                b_killed_while_a_unfinished = true;
            }
        }
        Ok(())
    })
    .await?;
    ensure!(
        !b_killed_while_a_unfinished,
        "b was killed before a succeeded"
    );
    ensure!(a_succeeded_seen, "never saw a Succeeded with b pending");
    ensure!(
        states(&done)
            == [
                ("a".to_owned(), "Succeeded".to_owned(), true),
                ("b".to_owned(), "Succeeded".to_owned(), true)
            ],
        "states {:?}",
        states(&done)
    );
    let after = pods.get("ordered").await?;
    for name in ["a", "b"] {
        ensure!(
            id(&after, name)? != id(&before, name)?,
            "{name} kept its containerID"
        );
    }
    let a_started = status(&after, "a")?
        .state
        .as_ref()
        .and_then(|state| state.running.as_ref())
        .and_then(|running| running.started_at.clone())
        .context("a not running")?;
    let b_stopped = status(&after, "b")?
        .last_state
        .as_ref()
        .and_then(|state| state.terminated.as_ref())
        .and_then(|terminated| terminated.finished_at.clone())
        .context("b has no lastState")?;
    ensure!(
        b_stopped.0 >= a_started.0,
        "b stopped at {b_stopped:?}, before a restarted at {a_started:?}"
    );
    Ok(())
}

async fn failure_policy_fail(client: &Client) -> Result<()> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let before = running_pod(
        client,
        NAMESPACE,
        "failing",
        json!([container("bad", BADSTOP), container("good", BUSYBOX)]),
        json!({}),
    )
    .await?;
    create_crr(
        client,
        NAMESPACE,
        "failing",
        json!({"podName": "failing", "containers": [{"name": "bad"}, {"name": "good"}],
            "strategy": {"failurePolicy": "Fail"}}),
    )
    .await?;
    let done = completed(client, NAMESPACE, "failing", |_| Ok(())).await?;
    let recreate = &done
        .status
        .as_ref()
        .context("no status")?
        .container_recreate_states;
    let bad = recreate
        .iter()
        .find(|s| s.name == "bad")
        .context("no state for bad")?;
    ensure!(bad.phase == Phase::Failed, "bad: {bad:?}");
    ensure!(
        bad.message.starts_with("kill container error"),
        "bad message {:?}",
        bad.message
    );
    let good = recreate
        .iter()
        .find(|s| s.name == "good")
        .context("no state for good")?;
    ensure!(
        good.phase == Phase::Pending && !good.is_killed,
        "good: {good:?}"
    );
    let after = pods.get("failing").await?;
    ensure!(
        id(&after, "good")? == id(&before, "good")?,
        "good was touched after the failure"
    );
    ensure!(
        id(&after, "bad")? == id(&before, "bad")?,
        "bad was restarted although its kill failed"
    );
    Ok(())
}

async fn unready_grace(client: &Client) -> Result<()> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "graceful"},
        "spec": {"containers": [container("main", BUSYBOX)], "terminationGracePeriodSeconds": 5,
            "readinessGates": [{"conditionType": "KruisePodReady"}]},
    }))?;
    pods.create(&PostParams::default(), &pod).await?;
    // What a Kruise controller does for a pod with the KruisePodReady gate: the initial condition, True.
    wait_for("pod graceful Running", WAIT, || async {
        let pod = pods.get("graceful").await?;
        Ok((kruise_api::pod::phase(&pod) == "Running").then_some(()))
    })
    .await?;
    let condition = json!({"status": {"conditions": [{"type": "KruisePodReady", "status": "True",
        "lastTransitionTime": k8s_openapi::jiff::Timestamp::now().to_string()}]}});
    pods.patch_status(
        "graceful",
        &PatchParams::default(),
        &Patch::Strategic(&condition),
    )
    .await?;
    let before = wait_for("pod graceful Ready", WAIT, || async {
        let pod = pods.get("graceful").await?;
        Ok(kruise_api::pod::is_ready(&pod).then_some(pod))
    })
    .await?;
    let old_id = id(&before, "main")?;
    create_crr(
        client,
        NAMESPACE,
        "graceful",
        json!({"podName": "graceful", "containers": [{"name": "main"}],
            "strategy": {"unreadyGracePeriodSeconds": 3}}),
    )
    .await?;
    let not_ready = wait_for(
        "pod graceful NotReady before its container stops",
        WAIT,
        || async {
            let pod = pods.get("graceful").await?;
            Ok((!kruise_api::pod::is_ready(&pod)).then_some(pod))
        },
    )
    .await?;
    ensure!(
        id(&not_ready, "main")? == old_id,
        "the container was stopped before the pod became NotReady"
    );
    ensure!(
        status(&not_ready, "main")?.ready,
        "main was not running when the pod went NotReady"
    );
    let done = completed(client, NAMESPACE, "graceful", |_| Ok(())).await?;
    let grace = done
        .status
        .as_ref()
        .and_then(|status| {
            status
                .conditions
                .iter()
                .find(|c| c.type_ == "PreRecreateGrace")
        })
        .context("no PreRecreateGrace condition")?;
    ensure!(
        states(&done) == [("main".to_owned(), "Succeeded".to_owned(), true)],
        "states {:?}",
        states(&done)
    );
    let after = wait_for("pod graceful Ready again", WAIT, || async {
        let pod = pods.get("graceful").await?;
        Ok(kruise_api::pod::is_ready(&pod).then_some(pod))
    })
    .await?;
    ensure!(id(&after, "main")? != old_id, "main not recreated");
    let restarted = status(&after, "main")?
        .state
        .as_ref()
        .and_then(|state| state.running.as_ref())
        .and_then(|running| running.started_at.clone())
        .context("main not running")?;
    ensure!(
        restarted.0.as_second() >= grace.last_transition_time.0.as_second() + 3,
        "main restarted at {restarted:?}, within the grace from {:?}",
        grace.last_transition_time
    );
    let api: Api<ContainerRecreateRequest> = Api::namespaced(client.clone(), NAMESPACE);
    wait_for(
        "the unready-acquired finalizer released",
        Duration::from_secs(20),
        || async {
            let crr = api.get("graceful").await?;
            Ok((!crr
                .metadata
                .finalizers
                .unwrap_or_default()
                .iter()
                .any(|f| f == "crr.apps.kruise.io/unready-acquired"))
            .then_some(()))
        },
    )
    .await
}

/// The pod `hooked` has an HTTP preStop hook without a host on the port of a listener on 127.0.0.1 (the
/// node, where the daemon runs). Recreating its container must not connect there: the hook goes to the pod's
/// IP, and this host-network pod's sandbox has none, so the hook fails (logged) and the stop goes on.
async fn http_hook_without_host(client: &Client, agents: &NodeAgents) -> Result<()> {
    let node_local = std::net::TcpListener::bind("127.0.0.1:0")?;
    node_local.set_nonblocking(true)?;
    let port = node_local.local_addr()?.port();
    let mut main = container("main", BUSYBOX);
    main["lifecycle"] = json!({"preStop": {"httpGet": {"path": "/admin/stop", "port": port}}});
    let before = running_pod(client, NAMESPACE, "hooked", json!([main]), json!({})).await?;
    let (crr, _) = create_crr(
        client,
        NAMESPACE,
        "http-hook",
        json!({"podName": "hooked", "containers": [{"name": "main"}]}),
    )
    .await?;
    ensure!(
        crr.spec.containers[0]
            .pre_stop
            .as_ref()
            .is_some_and(|hook| hook.http_get.is_some()),
        "the webhook did not copy the httpGet hook: {:?}",
        crr.spec.containers
    );
    let done = completed(client, NAMESPACE, "http-hook", |_| Ok(())).await?;
    ensure!(
        states(&done) == [("main".to_owned(), "Succeeded".to_owned(), true)],
        "states {:?}",
        states(&done)
    );
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let after = pods.get("hooked").await?;
    ensure!(
        id(&after, "main")? != id(&before, "main")?,
        "container main was not recreated"
    );
    match node_local.accept() {
        Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok((_, peer)) => {
            anyhow::bail!("the preStop hook connected to the node's 127.0.0.1:{port} (from {peer})")
        }
        Err(error) => return Err(error.into()),
    }
    let logs = agents
        .daemons
        .iter()
        .map(|(daemon, _)| std::fs::read_to_string(&daemon.log).unwrap_or_default())
        .collect::<String>();
    ensure!(
        logs.contains("has no IP"),
        "the daemon did not log why the hook failed:\n{}",
        agents.logs()
    );
    Ok(())
}

/// With kruise-manager stopped (it would complete the request itself, its pod being missing), a request
/// in kruise-system (the webhook leaves that namespace alone) names pod `one` there but carries the UID of
/// pod `one` of the scenario's namespace, with that pod's node and its container's identity. The daemon
/// finds the containers by UID, sees they belong to another pod, and refuses: the request completes with
/// every container failed, and the container is untouched.
async fn foreign_pod_is_refused(client: &Client, agents: &mut NodeAgents) -> Result<()> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let target = pods.get("one").await?;
    let uid = target.metadata.uid.clone().context("uid")?;
    let node = target
        .spec
        .as_ref()
        .and_then(|spec| spec.node_name.clone())
        .context("node")?;
    let main = status(&target, "main")?;
    agents.stop_manager().await?;
    let api: Api<ContainerRecreateRequest> = Api::namespaced(client.clone(), "kruise-system");
    let crr: ContainerRecreateRequest = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "ContainerRecreateRequest",
        "metadata": {"name": "foreign", "labels": {
            "crr.apps.kruise.io/pod-uid": uid,
            "crr.apps.kruise.io/node-name": node,
            "crr.apps.kruise.io/active": "true"}},
        "spec": {"podName": "one", "containers": [{"name": "main", "statusContext": {
            "containerID": main.container_id, "restartCount": main.restart_count}}],
            "strategy": {"failurePolicy": "Fail", "terminationGracePeriodSeconds": 5}},
    }))?;
    api.create(&PostParams::default(), &crr).await?;
    let done = wait_for("the foreign request to be refused", WAIT, || async {
        let crr = api.get("foreign").await?;
        Ok(crr
            .status
            .clone()
            .filter(|status| status.phase == Phase::Completed))
    })
    .await?;
    ensure!(
        done.message.contains(&format!(
            "{NAMESPACE}/one, not the request's pod kruise-system/one"
        )),
        "message {:?}",
        done.message
    );
    ensure!(
        done.container_recreate_states
            .iter()
            .all(|state| state.phase == Phase::Failed && !state.is_killed),
        "states {:?}",
        done.container_recreate_states
    );
    let after = pods.get("one").await?;
    ensure!(
        id(&after, "main")? == main.container_id.clone().unwrap_or_default(),
        "the container of {NAMESPACE}/one was recreated for a request of another namespace"
    );
    Ok(())
}
