//! A Job whose pod has a long-running sidecar (`KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true`) completes once
//! its main container exits: kruise-manager's sidecar terminator ends the pod (`Succeeded`, condition
//! `SidecarTerminated`) and asks kruise-daemon, through a ContainerRecreateRequest, to stop the sidecar;
//! kube-controller-manager's Job controller then counts the pod as succeeded.

use std::time::Duration;

use anyhow::{Context as _, Result, ensure};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::ContainerRecreateRequest;
use kube::api::{ListParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

use crate::node_agents::{BUSYBOX, NodeAgents, SERVE};
use crate::support::{Cluster, wait_for};

const NAMESPACE: &str = "e2e-sidecar";
const WAIT: Duration = Duration::from_secs(90);

pub async fn job_with_sidecar_completes(cluster: &Cluster) -> Result<()> {
    let Some(agents) = NodeAgents::start(cluster, "e2e-side", 1, NAMESPACE).await? else {
        return Ok(());
    };
    let result = scenario(&cluster.client).await;
    agents.finish(result).await
}

async fn scenario(client: &Client) -> Result<()> {
    let jobs: Api<Job> = Api::namespaced(client.clone(), NAMESPACE);
    let job: Job = serde_json::from_value(json!({
        "metadata": {"name": "with-sidecar"},
        "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never",
            "terminationGracePeriodSeconds": 5,
            "containers": [
                {"name": "main", "image": BUSYBOX, "command": ["sh", "-c", "sleep 3; echo done"]},
                {"name": "proxy", "image": BUSYBOX, "command": ["sh", "-c", SERVE],
                    "env": [{"name": "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT", "value": "true"}]}]}}},
    }))?;
    jobs.create(&PostParams::default(), &job).await?;
    let pods: Api<Pod> = Api::namespaced(client.clone(), NAMESPACE);
    let running = wait_for("the Job's pod running both containers", WAIT, || async {
        let list = pods
            .list(&ListParams::default().labels("job-name=with-sidecar"))
            .await?;
        Ok(list.items.into_iter().find(|pod| {
            pod.status
                .as_ref()
                .and_then(|status| status.container_statuses.as_ref())
                .is_some_and(|statuses| statuses.len() == 2 && statuses.iter().all(|s| s.ready))
        }))
    })
    .await?;
    let name = running.metadata.name.clone().context("pod name")?;
    let uid = running.metadata.uid.clone().context("pod uid")?;
    let complete = wait_for("the Job to complete", WAIT, || async {
        let job = jobs.get("with-sidecar").await?;
        let complete = job
            .status
            .as_ref()
            .and_then(|status| status.conditions.as_ref())
            .is_some_and(|conditions| {
                conditions
                    .iter()
                    .any(|c| c.type_ == "Complete" && c.status == "True")
            });
        Ok(complete.then_some(job))
    })
    .await?;
    ensure!(
        complete.status.as_ref().and_then(|s| s.succeeded) == Some(1),
        "job status {:?}",
        complete.status
    );
    let pod = pods.get(&name).await?;
    ensure!(
        kruise_api::pod::phase(&pod) == "Succeeded",
        "pod phase {}",
        kruise_api::pod::phase(&pod)
    );
    ensure!(
        kruise_api::pod::condition(&pod, "SidecarTerminated").is_some_and(|c| c.status == "True"),
        "no SidecarTerminated condition"
    );
    // The terminator ends the pod first and creates the request after it, so the Job controller can count
    // the pod as succeeded before the request exists: wait for it.
    let crrs: Api<ContainerRecreateRequest> = Api::namespaced(client.clone(), NAMESPACE);
    let request_name = format!("sidecar-termination-{uid}");
    let crr = wait_for(
        "the ContainerRecreateRequest for the sidecar",
        WAIT,
        || async { Ok(crrs.get_opt(&request_name).await?) },
    )
    .await?;
    let names: Vec<&str> = crr
        .spec
        .containers
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    ensure!(names == ["proxy"], "request for {names:?}");
    let strategy = crr.spec.strategy.clone().unwrap_or_default();
    ensure!(strategy.force_recreate, "not forceRecreate");
    // The sidecar stops (whoever stops it first: the daemon for the request, or the node for the ended pod).
    wait_for("the sidecar to stop", Duration::from_secs(30), || async {
        let pod = pods.get(&name).await?;
        let stopped = pod
            .status
            .as_ref()
            .and_then(|status| status.container_statuses.as_ref())
            .and_then(|statuses| statuses.iter().find(|s| s.name == "proxy"))
            .is_some_and(|proxy| {
                proxy
                    .state
                    .as_ref()
                    .is_some_and(|state| state.terminated.is_some())
            });
        Ok(stopped.then_some(()))
    })
    .await
}
