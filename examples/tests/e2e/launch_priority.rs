//! Container launch priority on real containerd: kruise-manager's pod webhook makes every container of an
//! ordered pod read `KRUISE_CONTAINER_BARRIER` from the pod's `<pod>-barrier` ConfigMap, the simulator (as
//! kubelet) cannot create a container until its `p_<priority>` key exists (it reports the container waiting
//! with `CreateContainerConfigError`), and kruise-manager's launch priority controller adds the keys one
//! priority at a time as the containers of the priority before get ready.
//!
//! * a pod with `apps.kruise.io/container-launch-priority: Ordered` and 3 containers, and a pod whose
//!   containers carry `KRUISE_CONTAINER_PRIORITY` (1, 10, 5): containerd's start times are strictly in
//!   priority order (highest first);
//! * the last container was seen waiting with `CreateContainerConfigError` on its missing key;
//! * each barrier ConfigMap ends with every key, is owned by its pod, and the pod is marked
//!   `apps.kruise.io/container-launch-priority-completed: "true"`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, ensure};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kruise_runtime::cri::{CriClient, labels};
use kube::api::PostParams;
use kube::{Api, Client, ResourceExt};
use serde_json::{Value, json};

use crate::node_agents::{BUSYBOX, NodeAgents, SERVE};
use crate::support::wait_for;

const NAMESPACE: &str = "e2e-launch";
const WAIT: Duration = Duration::from_secs(60);

pub async fn launch_priority_starts_containers_in_order(
    cluster: &crate::support::Cluster,
) -> Result<()> {
    let Some(agents) = NodeAgents::start(cluster, "e2e-launch", 1, NAMESPACE).await? else {
        return Ok(());
    };
    let endpoint = agents
        .runtime
        .endpoints
        .first()
        .map(|(_, endpoint)| endpoint.clone())
        .unwrap_or_default();
    let result = scenario(&cluster.client, &endpoint).await;
    agents.finish(result).await
}

fn container(name: &str, priority: Option<&str>) -> Value {
    let mut container = json!({"name": name, "image": BUSYBOX, "command": ["sh", "-c", SERVE]});
    if let Some(priority) = priority {
        container["env"] = json!([{"name": "KRUISE_CONTAINER_PRIORITY", "value": priority}]);
    }
    container
}

async fn scenario(client: &Client, endpoint: &str) -> Result<()> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let ordered: Pod = serde_json::from_value(json!({
        "metadata": {"name": "ordered",
            "annotations": {"apps.kruise.io/container-launch-priority": "Ordered"}},
        "spec": {"terminationGracePeriodSeconds": 1, "containers": [
            container("first", None), container("second", None), container("third", None),
        ]},
    }))?;
    let by_env: Pod = serde_json::from_value(json!({
        "metadata": {"name": "by-env"},
        "spec": {"terminationGracePeriodSeconds": 1, "containers": [
            container("low", Some("1")), container("high", Some("10")), container("mid", Some("5")),
        ]},
    }))?;
    // The API server picks the webhook configuration up asynchronously: dry-run until it injects.
    wait_for(
        "the pod webhook to inject barriers",
        Duration::from_secs(30),
        || async {
            let params = PostParams {
                dry_run: true,
                ..PostParams::default()
            };
            let created = pods.create(&params, &ordered).await?;
            Ok(created
                .spec
                .iter()
                .flat_map(|spec| spec.containers.iter())
                .any(|c| {
                    c.env
                        .iter()
                        .flatten()
                        .any(|e| e.name == "KRUISE_CONTAINER_BARRIER")
                })
                .then_some(()))
        },
    )
    .await?;
    let started = Instant::now();
    pods.create(&PostParams::default(), &ordered).await?;
    pods.create(&PostParams::default(), &by_env).await?;
    // Every waiting reason seen, per pod and container, while the pods come up.
    let mut waiting: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    let deadline = Instant::now() + WAIT;
    loop {
        let mut ready = 0;
        for name in ["ordered", "by-env"] {
            let pod = pods.get(name).await?;
            for status in pod
                .status
                .iter()
                .flat_map(|status| status.container_statuses.iter().flatten())
            {
                if let Some(state) = status.state.as_ref().and_then(|s| s.waiting.as_ref()) {
                    waiting
                        .entry((name.to_owned(), status.name.clone()))
                        .or_default()
                        .insert(format!(
                            "{}: {}",
                            state.reason.as_deref().unwrap_or(""),
                            state.message.as_deref().unwrap_or("")
                        ));
                }
            }
            if kruise_api::pod::is_ready(&pod) && completed(&pod) {
                ready += 1;
            }
        }
        if ready == 2 {
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "the pods did not start every container within {WAIT:?}; waiting states seen: {waiting:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    eprintln!(
        "    both pods ready and complete after {:.1}s",
        started.elapsed().as_secs_f64()
    );

    let cri = CriClient::connect_lazy(endpoint)?;
    for (name, order, keys) in [
        (
            "ordered",
            ["first", "second", "third"],
            ["p_0", "p_-1", "p_-2"],
        ),
        ("by-env", ["high", "mid", "low"], ["p_10", "p_5", "p_1"]),
    ] {
        let pod = pods.get(name).await?;
        let injected = pod
            .spec
            .iter()
            .flat_map(|spec| spec.containers.iter())
            .all(|c| {
                c.env
                    .iter()
                    .flatten()
                    .any(|e| e.name == "KRUISE_CONTAINER_BARRIER")
            });
        ensure!(
            injected,
            "pod {name}: the webhook did not inject the barrier env into every container"
        );
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let mut starts = BTreeMap::new();
        for container in cri.list_containers(labels::pod_filter(&uid)).await? {
            let status = cri.container_status(&container.id).await?;
            let container_name = container
                .labels
                .get(labels::CONTAINER_NAME)
                .cloned()
                .unwrap_or_default();
            ensure!(
                starts
                    .insert(container_name.clone(), status.started_at)
                    .is_none(),
                "pod {name}: container {container_name} was created more than once"
            );
        }
        let times: Vec<i64> = order
            .iter()
            .map(|container| starts.get(*container).copied().unwrap_or_default())
            .collect();
        eprintln!(
            "    pod {name}: containerd start times (ns) in priority order {order:?}: {times:?}"
        );
        ensure!(
            times.iter().all(|time| *time > 0) && times.windows(2).all(|pair| pair[0] < pair[1]),
            "pod {name}: containers did not start strictly in priority order {order:?}: {starts:?}"
        );

        let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
        let barrier = config_maps
            .get(&format!("{name}-barrier"))
            .await
            .with_context(|| format!("pod {name}: no barrier ConfigMap"))?;
        let data = barrier.data.clone().unwrap_or_default();
        let have: BTreeSet<&str> = data.keys().map(String::as_str).collect();
        ensure!(
            have == keys.iter().copied().collect(),
            "pod {name}: barrier keys {have:?}, expected {keys:?}"
        );
        ensure!(
            data.values().all(|value| value == "true"),
            "pod {name}: barrier values {data:?}"
        );
        let owned = barrier
            .owner_references()
            .iter()
            .any(|owner| owner.kind == "Pod" && owner.uid == uid);
        ensure!(owned, "pod {name}: the barrier is not owned by the pod");
    }

    // The lowest priority waited on its key: kubelet's CreateContainerConfigError.
    let third = waiting
        .get(&("ordered".to_owned(), "third".to_owned()))
        .cloned()
        .unwrap_or_default();
    ensure!(
        third
            .iter()
            .any(|seen| seen.starts_with("CreateContainerConfigError: ")
                && (seen
                    .contains("couldn't find key p_-2 in ConfigMap e2e-launch/ordered-barrier")
                    || seen.contains("configmap \"ordered-barrier\" not found"))),
        "container third was never seen waiting on its barrier key: {third:?}"
    );
    Ok(())
}

fn completed(pod: &Pod) -> bool {
    pod.annotations()
        .get("apps.kruise.io/container-launch-priority-completed")
        .is_some_and(|value| value == "true")
}
