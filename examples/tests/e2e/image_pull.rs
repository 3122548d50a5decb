//! ImagePullJobs on real containerd: kruise-manager creates a NodeImage per node and hands the job's tag to
//! at most `parallelism` nodes at a time; each node's kruise-daemon pulls it from a local registry through
//! the CRI ImageService (with the credentials of the job's pull secret for the registry with basic auth: the
//! copy kruise-manager keeps in `kruise-daemon-config`, the only namespace whose Secrets the daemon, acting as
//! its ServiceAccount, may read; the copy is deleted once no job needs it) and reports the tag's status; the job reports its progress and completes. A report the daemon decided on
//! a stale copy of its NodeImage is refused instead of undoing a finished pull.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, ensure};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{ImagePullJob, ImagePullPhase, NodeImage, ReferenceObject};
use kruise_api::keys::image_pull::{DAEMON_CONFIG_NAMESPACE, SECRET_MODE_BATCH};
use kruise_daemon::image_puller;
use kruise_runtime::cri::CriClient;
use kruise_schedule::image_pull::node_pulls::{self, StaleReport};
use kruise_schedule::image_pull::pull_secret_copies;
use kube::api::{DeleteParams, ListParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

use crate::node_agents::NodeAgents;
use crate::support::{Cluster, wait_for};

const NAMESPACE: &str = "e2e-imagepull";
const WAIT: Duration = Duration::from_secs(90);

pub async fn daemon_pulls_images(cluster: &Cluster) -> Result<()> {
    let Some(agents) = NodeAgents::start(cluster, "e2e-pull", 2, NAMESPACE).await? else {
        return Ok(());
    };
    let result = scenario(&cluster.client, &agents).await;
    let rss = agents.daemon_rss_kib();
    eprintln!("    kruise-daemon RSS after the pulls: {rss:?} KiB");
    agents.finish(result).await
}

async fn scenario(client: &Client, agents: &NodeAgents) -> Result<()> {
    let node_images: Api<NodeImage> = Api::all(client.clone());
    for node in &agents.nodes {
        wait_for(&format!("the NodeImage of {node}"), WAIT, || async {
            Ok(node_images.get_opt(node).await?)
        })
        .await?;
    }
    let runtimes: Vec<CriClient> = agents
        .runtime
        .endpoints
        .iter()
        .map(|(_, endpoint)| CriClient::connect_lazy(endpoint))
        .collect::<Result<_, _>>()?;
    let image = format!("{}/kruise-test/busybox:v2", agents.runtime.registry);
    for runtime in &runtimes {
        ensure!(
            runtime.image_status(&image).await?.is_none(),
            "{image} is there before the job"
        );
    }

    let jobs: Api<ImagePullJob> = Api::namespaced(client.clone(), NAMESPACE);
    let job: ImagePullJob = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob",
        "metadata": {"name": "busybox-v2"},
        "spec": {"image": image, "parallelism": 1, "selector": {"names": agents.nodes},
            "pullPolicy": {"timeoutSeconds": 60, "backoffLimit": 1},
            "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 600}},
    }))?;
    jobs.create(&PostParams::default(), &job).await?;
    let deadline = Instant::now() + WAIT;
    let mut messages = BTreeSet::new();
    let mut most_active = 0;
    let done = loop {
        let job = jobs.get("busybox-v2").await?;
        let status = job.status.clone().unwrap_or_default();
        most_active = most_active.max(status.active);
        if !status.message.is_empty() {
            messages.insert(status.message.clone());
        }
        if status.completion_time.is_some() {
            break status;
        }
        ensure!(
            Instant::now() < deadline,
            "job not complete after {WAIT:?}: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    ensure!(
        (done.desired, done.succeeded, done.failed) == (2, 2, 0),
        "status {done:?}"
    );
    ensure!(
        done.message == "job has completed",
        "message {:?}",
        done.message
    );
    ensure!(
        most_active <= 1,
        "parallelism 1 but {most_active} nodes pulled at once"
    );
    ensure!(
        messages.contains("job is running, progress 50.0%"),
        "no progress reported on the way: {messages:?}"
    );
    for (runtime, node) in runtimes.iter().zip(&agents.nodes) {
        ensure!(
            runtime.image_status(&image).await?.is_some(),
            "{image} not on {node}"
        );
        let node_image = node_images.get(node).await?;
        let tag = node_image
            .status
            .as_ref()
            .and_then(|status| {
                status
                    .image_statuses
                    .get(&format!("{}/kruise-test/busybox", agents.runtime.registry))
            })
            .and_then(|image| image.tags.iter().find(|tag| tag.tag == "v2"))
            .with_context(|| format!("no v2 status on {node}: {:?}", node_image.status))?;
        ensure!(
            tag.phase == ImagePullPhase::Succeeded && tag.progress == 100,
            "{node}: {tag:?}"
        );
        ensure!(
            tag.image_id.starts_with("sha256:"),
            "{node}: imageID {:?}",
            tag.image_id
        );
    }
    eprintln!("    ImagePullJob progress messages seen: {messages:?}");
    stale_reports_are_refused(&node_images, agents).await?;
    private_image_with_a_pull_secret(client, agents, &runtimes).await
}

/// The daemon decides what to pull from its watch cache, which can lag behind its own last write. A pass
/// decided on a copy that still shows `Pulling` must neither undo the finished pull on the API server nor
/// pull again: its `Pulling` report is refused, and nothing is written.
async fn stale_reports_are_refused(
    node_images: &Api<NodeImage>,
    agents: &NodeAgents,
) -> Result<()> {
    let name = format!("{}/kruise-test/busybox", agents.runtime.registry);
    for node in &agents.nodes {
        let finished = node_images.get(node).await?;
        let mut stale = finished.clone();
        let tag = stale
            .status
            .as_mut()
            .and_then(|status| status.image_statuses.get_mut(&name))
            .and_then(|image| image.tags.iter_mut().find(|tag| tag.tag == "v2"))
            .with_context(|| format!("no v2 status on {node}"))?;
        tag.phase = ImagePullPhase::Pulling;
        tag.progress = 0;
        let task = node_pulls::pending(&stale)
            .into_iter()
            .find(|task| task.name == name && task.tag == "v2")
            .with_context(|| format!("{node}: a Pulling status must read as pending"))?;
        let started = node_pulls::pulling(&task, Time(Timestamp::now()));
        let outcome = image_puller::report(node_images, node, &task.name, &started).await?;
        ensure!(
            matches!(outcome, Err(StaleReport::AlreadyFinished { .. })),
            "{node}: a Pulling report from a stale copy was not refused: {outcome:?}"
        );
        let after = node_images.get(node).await?;
        ensure!(
            after.metadata.resource_version == finished.metadata.resource_version,
            "{node}: the refused report changed the NodeImage: {:?}",
            after.status
        );
    }
    Ok(())
}

async fn private_image_with_a_pull_secret(
    client: &Client,
    agents: &NodeAgents,
    runtimes: &[CriClient],
) -> Result<()> {
    let (user, password) = agents.runtime.auth.split_once(':').context("auth")?;
    let registry = &agents.runtime.auth_registry;
    let config = json!({"auths": {registry.as_str(): {"username": user, "password": password}}});
    let secret: Secret = serde_json::from_value(json!({
        "metadata": {"name": "regcred"}, "type": "kubernetes.io/dockerconfigjson",
        "stringData": {".dockerconfigjson": config.to_string()},
    }))?;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    let source = secrets.create(&PostParams::default(), &secret).await?;
    let image = format!("{registry}/private/busybox:v3");
    let jobs: Api<ImagePullJob> = Api::namespaced(client.clone(), NAMESPACE);
    let job = |name: &str, parallelism: i32| -> Result<ImagePullJob> {
        Ok(serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "ImagePullJob",
            "metadata": {"name": name},
            "spec": {"image": image, "parallelism": parallelism, "pullSecrets": ["regcred"],
                "selector": {"names": agents.nodes},
                "pullPolicy": {"timeoutSeconds": 60, "backoffLimit": 1}, "completionPolicy": {"type": "Always"}},
        }))?)
    };
    // A paused job (parallelism 0) naming the same secret: it pulls nothing but holds the copy, so the copy
    // can be looked at after the other job finished.
    jobs.create(&PostParams::default(), &job("private-holder", 0)?)
        .await?;
    let copies: Api<Secret> = Api::namespaced(client.clone(), DAEMON_CONFIG_NAMESPACE);
    let source_key = format!("{NAMESPACE}/regcred");
    let copy = wait_for(
        "the copy of the pull secret for kruise-daemon",
        WAIT,
        || async {
            Ok(copies
                .list(&ListParams::default())
                .await?
                .items
                .into_iter()
                .find(|copy| pull_secret_copies::source_key(copy) == Some(source_key.as_str())))
        },
    )
    .await?;
    let copy_name = copy.metadata.name.clone().context("copy name")?;
    ensure!(
        copy.data == source.data && copy.type_ == source.type_,
        "the copy {copy_name} does not hold the source's data"
    );
    jobs.create(&PostParams::default(), &job("private-v3", 2)?)
        .await?;
    let status = wait_for("the private image job to complete", WAIT, || async {
        let job = jobs.get("private-v3").await?;
        Ok(job.status.filter(|status| status.completion_time.is_some()))
    })
    .await?;
    ensure!(
        (status.succeeded, status.failed) == (2, 0),
        "status {status:?}"
    );
    for runtime in runtimes {
        ensure!(
            runtime.image_status(&image).await?.is_some(),
            "{image} not pulled"
        );
    }
    // The NodeImages name the copy, never the job's own secret.
    let node_images: Api<NodeImage> = Api::all(client.clone());
    let expected = ReferenceObject {
        namespace: DAEMON_CONFIG_NAMESPACE.to_owned(),
        name: copy_name.clone(),
        mode: SECRET_MODE_BATCH.to_owned(),
    };
    for node in &agents.nodes {
        let node_image = node_images.get(node).await?;
        let spec = node_image
            .spec
            .images
            .get(&format!("{registry}/private/busybox"))
            .with_context(|| format!("{node}: no private/busybox in {:?}", node_image.spec))?;
        ensure!(
            spec.pull_secrets == [expected.clone()],
            "{node}: pull secrets {:?}, expected the copy {expected:?}",
            spec.pull_secrets
        );
    }
    let held = copies.get(&copy_name).await?;
    ensure!(
        pull_secret_copies::referencing_jobs(&held)
            .contains(&format!("{NAMESPACE}/private-holder")),
        "the copy lost the running job: {:?}",
        held.metadata.annotations
    );
    // No job needs it any more: it goes.
    jobs.delete("private-holder", &DeleteParams::default())
        .await?;
    wait_for(
        "the copy to be deleted once no job needs it",
        WAIT,
        || async { Ok(copies.get_opt(&copy_name).await?.is_none().then_some(())) },
    )
    .await?;
    Ok(())
}
