//! PodProbeMarker on real containerd: kruise-manager (gate `PodProbeMarkerGate`, on by default) writes the
//! marker's exec probe into the NodePodProbe of the pod's node, kruise-daemon runs it through CRI
//! `ExecSync` and reports the result, and the manager carries the result to the pod.
//!
//! * the probe (`cat /tmp/healthy`) succeeds: the pod gets the `Succeeded` label and the marker's
//!   condition `True`; the marker counts the pod in `status.matchedPods`;
//! * the file is removed inside the container (through CRI): the label goes, the `Failed` annotation comes
//!   and the condition turns `False`;
//! * the marker is deleted: its probe leaves the NodePodProbe and the marker is gone (its finalizer
//!   removed);
//! * the validating webhook refuses a marker whose probe name holds `#`, naming the field.

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, ensure};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1alpha1::{NodePodProbe, PodProbeMarker};
use kruise_runtime::cri::CriClient;
use kube::api::{DeleteParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

use crate::node_agents::{BUSYBOX, NodeAgents, SERVE};
use crate::support::wait_for;

const NAMESPACE: &str = "e2e-ppm";
const WAIT: Duration = Duration::from_secs(40);
const CONDITION: &str = "game.kruise.io/healthy";
const LABEL: &str = "probe.kruise.io/healthy";
const ANNOTATION: &str = "probe.kruise.io/unhealthy";

pub async fn pod_probe_marker_marks_pods_by_probe(cluster: &crate::support::Cluster) -> Result<()> {
    let Some(agents) = NodeAgents::start(cluster, "e2e-ppm", 1, NAMESPACE).await? else {
        return Ok(());
    };
    let result = marks_pods(&cluster.client, &agents).await;
    agents.finish(result).await
}

async fn marks_pods(client: &Client, agents: &NodeAgents) -> Result<()> {
    let started = Instant::now();
    let node = agents.nodes.first().context("no node")?.clone();
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let pod: Pod = serde_json::from_value(json!({
        "metadata": {"name": "probed", "labels": {"app": "probed"}},
        "spec": {"terminationGracePeriodSeconds": 1, "containers": [{"name": "main", "image": BUSYBOX,
            "command": ["sh", "-c", format!("touch /tmp/healthy; {SERVE}")]}]}
    }))?;
    pods.create(&PostParams::default(), &pod).await?;
    let running = wait_for("pod probed Running and Ready", WAIT, || async {
        let pod = pods.get("probed").await?;
        Ok(
            (kruise_api::pod::phase(&pod) == "Running" && kruise_api::pod::is_ready(&pod))
                .then_some(pod),
        )
    })
    .await?;
    let uid = running.metadata.uid.clone().unwrap_or_default();
    let markers: Api<PodProbeMarker> = Api::namespaced(client.clone(), NAMESPACE);
    let marker: PodProbeMarker = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
        "metadata": {"name": "healthy"},
        "spec": {"selector": {"matchLabels": {"app": "probed"}}, "probes": [{
            "name": "file", "containerName": "main", "podConditionType": CONDITION,
            "probe": {"exec": {"command": ["cat", "/tmp/healthy"]}, "periodSeconds": 1},
            "markerPolicy": [
                {"state": "Succeeded", "labels": {LABEL: "true"}},
                {"state": "Failed", "annotations": {ANNOTATION: "true"}}
            ]}]}
    }))?;
    markers.create(&PostParams::default(), &marker).await?;
    let node_probes: Api<NodePodProbe> = Api::all(client.clone());
    wait_for(
        &format!("the NodePodProbe of {node} to hold healthy#file"),
        WAIT,
        || async {
            let Some(probe) = node_probes.get_opt(&node).await? else {
                return Ok(None);
            };
            Ok(probe_names(&probe, &uid)
                .contains(&"healthy#file".to_owned())
                .then_some(()))
        },
    )
    .await?;
    wait_for("the Succeeded label and condition True", WAIT, || async {
        let pod = pods.get("probed").await?;
        Ok(
            (label(&pod).as_deref() == Some("true") && condition(&pod).as_deref() == Some("True"))
                .then_some(()),
        )
    })
    .await?;
    wait_for("status.matchedPods 1", WAIT, || async {
        let marker = markers.get("healthy").await?;
        Ok(marker
            .status
            .is_some_and(|status| status.matched_pods == 1)
            .then_some(()))
    })
    .await?;
    eprintln!(
        "    marked Succeeded {:?} after the pod was created",
        started.elapsed()
    );
    remove_health_file(agents, &running).await?;
    wait_for(
        "the label removed, the Failed annotation and condition False",
        WAIT,
        || async {
            let pod = pods.get("probed").await?;
            let annotated = kruise_api::pod::annotation(&pod, ANNOTATION) == Some("true");
            Ok(
                (label(&pod).is_none() && annotated && condition(&pod).as_deref() == Some("False"))
                    .then_some(()),
            )
        },
    )
    .await?;
    // The daemon's report behind it: the NodePodProbe status holds the failure with cat's error.
    let probe = node_probes.get(&node).await?;
    let state = probe
        .status
        .iter()
        .flat_map(|status| status.pod_probe_statuses.iter())
        .filter(|pod| pod.uid == uid)
        .flat_map(|pod| pod.probe_states.iter())
        .find(|state| state.name == "healthy#file")
        .context("no result for healthy#file in the NodePodProbe status")?;
    ensure!(
        state.state.as_str() == "Failed" && state.message.contains("/tmp/healthy"),
        "unexpected result: {state:?}"
    );
    markers.delete("healthy", &DeleteParams::default()).await?;
    wait_for(
        "the marker's probe out of the NodePodProbe and the marker gone",
        WAIT,
        || async {
            let probe = node_probes.get(&node).await?;
            let gone = markers.get_opt("healthy").await?.is_none();
            Ok((gone
                && !probe_names(&probe, &uid)
                    .iter()
                    .any(|name| name.starts_with("healthy#")))
            .then_some(()))
        },
    )
    .await?;
    invalid_marker_is_refused(&markers).await?;
    eprintln!("    whole scenario body took {:?}", started.elapsed());
    Ok(())
}

/// The webhook (configured asynchronously by the API server: retried until it acts) refuses a probe
/// name with `#`.
async fn invalid_marker_is_refused(markers: &Api<PodProbeMarker>) -> Result<()> {
    let invalid: PodProbeMarker = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "PodProbeMarker",
        "metadata": {"name": "invalid"},
        "spec": {"selector": {"matchLabels": {"app": "probed"}}, "probes": [{
            "name": "a#b", "containerName": "main", "podConditionType": CONDITION,
            "probe": {"exec": {"command": ["true"]}}}]}
    }))?;
    let params = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let message = wait_for(
        "the webhook to refuse a probe name with #",
        WAIT,
        || async {
            match markers.create(&params, &invalid).await {
                Ok(_) => Ok(None),
                Err(kube::Error::Api(status)) => Ok(Some(status.message)),
                Err(error) => Err(error.into()),
            }
        },
    )
    .await?;
    ensure!(
        message.contains("spec.probes[0].name: Invalid value: \"a#b\""),
        "unexpected refusal: {message}"
    );
    Ok(())
}

/// Removes `/tmp/healthy` inside the pod's container through CRI, as a user's `kubectl exec` would.
async fn remove_health_file(agents: &NodeAgents, pod: &Pod) -> Result<()> {
    let (_, endpoint) = agents.runtime.endpoints.first().context("no runtime")?;
    let runtime = CriClient::connect_lazy(endpoint)?;
    let id = crate::container_recreate::id(pod, "main")?;
    let id = id.rsplit("://").next().unwrap_or_default().to_owned();
    let command = vec!["rm".to_owned(), "-f".to_owned(), "/tmp/healthy".to_owned()];
    let response = runtime
        .exec_sync(&id, command, Duration::from_secs(5))
        .await?;
    ensure!(
        response.exit_code == 0,
        "rm /tmp/healthy in container {id} exited {}",
        response.exit_code
    );
    Ok(())
}

fn probe_names(probe: &NodePodProbe, uid: &str) -> Vec<String> {
    probe
        .spec
        .pod_probes
        .iter()
        .filter(|pod| pod.uid == uid)
        .flat_map(|pod| pod.probes.iter().map(|probe| probe.name.clone()))
        .collect()
}

fn label(pod: &Pod) -> Option<String> {
    kruise_api::pod::label(pod, LABEL).map(str::to_owned)
}

fn condition(pod: &Pod) -> Option<String> {
    kruise_api::pod::condition(pod, CONDITION).map(|condition| condition.status.clone())
}
