//! Container meta on real containerd: kruise-daemon reports what the runtime runs in the pod annotation
//! `apps.kruise.io/runtime-containers-meta`, and an in-place update that changes only a label read by an env
//! var (`fieldRef: metadata.labels['tier']`) restarts the container with the new value.
//!
//! * the annotation names the running container (ID, restart count 0) with kubelet v1.20's hash of its spec
//!   (the simulator writes it on the container as kubelet does) and the env-from-metadata hash of the value
//!   the container really has (read by `env` inside it);
//! * the container's environment is built as kubelet does: it logs `TIER=gold`;
//! * the CloneSet template's label changes to `silver`: the pod is updated in place (same UID), the daemon
//!   stops the container, the simulator starts it again (restart count 1, new containerID) and it logs
//!   `TIER=silver`; the annotation follows, and the CloneSet reports the pod updated and ready. The daemon's
//!   log shows exactly one such stop.

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, ensure};
use k8s_openapi::api::core::v1::{Container, Pod};
use kruise_api::apps::v1beta1::CloneSet;
use kruise_inplace::state::read_runtime_meta;
use kruise_inplace::{container_hash, env_from_metadata};
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use crate::node_agents::{BUSYBOX, NodeAgents, pod_log_dir};
use crate::support::wait_for;

const NAMESPACE: &str = "e2e-meta";
const NAME: &str = "meta";
const WAIT: Duration = Duration::from_secs(60);

pub async fn container_meta_restarts_on_env_from_metadata(
    cluster: &crate::support::Cluster,
) -> Result<()> {
    let Some(agents) = NodeAgents::start(cluster, "e2e-meta", 1, NAMESPACE).await? else {
        return Ok(());
    };
    let daemon_log = agents
        .daemons
        .first()
        .map(|(daemon, _)| daemon.log.clone())
        .unwrap_or_default();
    let mut result = scenario(&cluster.client).await;
    if result.is_ok() {
        // The restart was the daemon's doing (nothing else stops a container on a label change).
        let log = std::fs::read_to_string(&daemon_log).unwrap_or_default();
        result = ensure_stopped_by_daemon(&log);
    }
    agents.finish(result).await
}

fn ensure_stopped_by_daemon(log: &str) -> Result<()> {
    let stops = log
        .lines()
        .filter(|line| line.contains("stopped a container whose env from pod metadata changed"))
        .count();
    ensure!(
        stops == 1,
        "the daemon stopped {stops} containers for their env from metadata, expected exactly 1"
    );
    Ok(())
}

fn main_container(pod: &Pod) -> Result<&Container> {
    pod.spec
        .as_ref()
        .and_then(|spec| spec.containers.iter().find(|c| c.name == "main"))
        .context("no container main")
}

fn main_status(pod: &Pod) -> Option<(String, i32)> {
    let status = pod
        .status
        .as_ref()?
        .container_statuses
        .as_ref()?
        .iter()
        .find(|status| status.name == "main")?;
    Some((status.container_id.clone()?, status.restart_count))
}

/// Whether the annotation reports the container `main` has now, with the expected hashes.
fn meta_matches(pod: &Pod) -> Result<bool> {
    let Some((id, restarts)) = main_status(pod) else {
        return Ok(false);
    };
    let Some(meta) = read_runtime_meta(pod)? else {
        return Ok(false);
    };
    let Some(entry) = meta.containers.iter().find(|c| c.name == "main") else {
        return Ok(false);
    };
    let container = main_container(pod)?;
    let expected_env = env_from_metadata::expected_hash(
        container,
        pod.metadata.labels.as_ref(),
        pod.metadata.annotations.as_ref(),
    );
    Ok(entry.container_id == id
        && entry.restart_count == restarts
        && Some(entry.hashes.plain_hash) == container_hash::hash_before_v1_31(container)
        && entry.hashes.extracted_env_from_metadata_hash == expected_env)
}

fn log_of(pod: &Pod, restart: i32) -> String {
    let dir = format!(
        "{NAMESPACE}_{}_{}",
        pod.name_any(),
        pod.metadata.uid.as_deref().unwrap_or_default()
    );
    std::fs::read_to_string(pod_log_dir().join(dir).join(format!("main_{restart}.log")))
        .unwrap_or_default()
}

async fn scenario(client: &Client) -> Result<()> {
    let clonesets: Api<CloneSet> = Api::namespaced(client.clone(), NAMESPACE);
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let cloneset: CloneSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
        "metadata": {"name": NAME},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": NAME}},
            "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": {"app": NAME, "tier": "gold"}},
                "spec": {"terminationGracePeriodSeconds": 1, "containers": [{
                    "name": "main", "image": BUSYBOX,
                    "command": ["sh", "-c", "echo TIER=$TIER; trap 'exit 0' TERM; while true; do sleep 1; done"],
                    "env": [{"name": "TIER", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['tier']"}}}],
                }]},
            },
        },
    }))?;
    clonesets.create(&PostParams::default(), &cloneset).await?;
    let selector = ListParams::default().labels(&format!("app={NAME}"));
    let started = Instant::now();
    let first = wait_for("the pod ready with its container meta", WAIT, || async {
        let list = pods.list(&selector).await?;
        let Some(pod) = list.items.into_iter().next() else {
            return Ok(None);
        };
        Ok((kruise_api::pod::is_ready(&pod) && meta_matches(&pod)?).then_some(pod))
    })
    .await?;
    eprintln!(
        "    pod ready with its container meta after {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let (first_id, first_restarts) = main_status(&first).context("no status for main")?;
    ensure!(first_restarts == 0, "main restarted before the update");
    let log = log_of(&first, 0);
    ensure!(
        log.contains("TIER=gold"),
        "the first container did not see TIER=gold: {log:?}"
    );

    let updated = Instant::now();
    clonesets
        .patch(
            NAME,
            &PatchParams::default(),
            &Patch::Merge(
                &json!({"spec": {"template": {"metadata": {"labels": {"tier": "silver"}}}}}),
            ),
        )
        .await?;
    let second = wait_for(
        "the container restarted with the new label",
        WAIT,
        || async {
            let pod = pods.get(&first.name_any()).await?;
            let Some((id, restarts)) = main_status(&pod) else {
                return Ok(None);
            };
            let label = pod.labels().get("tier").cloned().unwrap_or_default();
            let in_place_ready = pod
                .status
                .iter()
                .flat_map(|status| status.conditions.iter().flatten())
                .any(|c| c.type_ == "InPlaceUpdateReady" && c.status == "True");
            Ok((label == "silver"
                && id != first_id
                && restarts == 1
                && kruise_api::pod::is_ready(&pod)
                && in_place_ready
                && meta_matches(&pod)?)
            .then_some(pod))
        },
    )
    .await?;
    ensure!(
        second.metadata.uid == first.metadata.uid,
        "the pod was recreated, not updated in place"
    );
    let log = log_of(&second, 1);
    ensure!(
        log.contains("TIER=silver"),
        "the restarted container did not see TIER=silver: {log:?}"
    );
    let done = wait_for("the CloneSet to report the update", WAIT, || async {
        let cloneset = clonesets.get(NAME).await?;
        let status = cloneset.status.clone().unwrap_or_default();
        Ok(
            (status.observed_generation == cloneset.metadata.generation.unwrap_or_default()
                && status.updated_replicas == 1
                && status.updated_ready_replicas == 1
                && status.ready_replicas == 1)
                .then_some(()),
        )
    })
    .await;
    done?;
    eprintln!(
        "    label-only in-place update done (container restarted, CloneSet updated) after {:.1}s",
        updated.elapsed().as_secs_f64()
    );
    Ok(())
}
