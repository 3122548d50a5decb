//! ImageListPullJobs on real containerd: kruise-manager turns a list of images into one ImagePullJob per image
//! (named `<list>-<suffix>`, labelled with the hash of the list's pull parameters, controlled by the list),
//! kruise-daemon pulls them from the local registry through the CRI ImageService, and the list reports the
//! images that succeeded, completed and failed, then goes after its TTL. A running list whose image is dropped
//! loses that image's ImagePullJob, and one whose parameters change gets new ImagePullJobs. An AdvancedCronJob
//! with an `imageListPullJobTemplate` creates ImageListPullJobs, which finish, without a warning.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use k8s_openapi::api::events::v1::Event;
use kruise_api::apps::v1beta1::{
    AdvancedCronJob, ImageListPullJob, ImagePullJob, ImagePullPhase, NodeImage, TemplateKind,
};
use kruise_api::keys::cronjob::SCHEDULED_AT_ANNOTATION;
use kruise_api::keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL;
use kruise_runtime::cri::CriClient;
use kruise_schedule::image_pull::list_job;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use crate::node_agents::NodeAgents;
use crate::support::{Cluster, wait_for};

const NAMESPACE: &str = "e2e-imagelistpull";
const WAIT: Duration = Duration::from_secs(60);
/// The TTL of the pulling list; short, so the scenario sees it deleted.
const TTL_SECONDS: u64 = 8;

pub async fn image_list_pull_job_pulls_every_image(cluster: &Cluster) -> Result<()> {
    let started = Instant::now();
    let Some(agents) = NodeAgents::start(cluster, "e2e-listpull", 1, NAMESPACE).await? else {
        return Ok(());
    };
    let result = scenario(&cluster.client, &agents).await;
    let result = agents.finish(result).await;
    eprintln!(
        "    ImageListPullJob scenario took {:.1}s",
        started.elapsed().as_secs_f64()
    );
    result
}

async fn scenario(client: &Client, agents: &NodeAgents) -> Result<()> {
    pulls_and_reports(client, agents).await?;
    follows_the_list(client, agents).await?;
    cron_job_creates_lists(client, agents).await
}

/// The ImagePullJobs `list` controls, as the API server has them now.
async fn children(client: &Client, list: &ImageListPullJob) -> Result<Vec<ImagePullJob>> {
    let pulls: Api<ImagePullJob> = Api::namespaced(client.clone(), NAMESPACE);
    let uid = list.uid().context("list uid")?;
    Ok(pulls
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|child| list_job::list_owner(child).is_some_and(|owner| owner.uid == uid))
        .filter(|child| child.metadata.deletion_timestamp.is_none())
        .collect())
}

async fn pulls_and_reports(client: &Client, agents: &NodeAgents) -> Result<()> {
    let node = agents.nodes.first().context("one node")?;
    let node_images: Api<NodeImage> = Api::all(client.clone());
    wait_for(&format!("the NodeImage of {node}"), WAIT, || async {
        Ok(node_images.get_opt(node).await?)
    })
    .await?;
    let (_, endpoint) = agents.runtime.endpoints.first().context("endpoint")?;
    let runtime = CriClient::connect_lazy(endpoint)?;
    let registry = &agents.runtime.registry;
    let present = [
        format!("{registry}/kruise-test/busybox:v1"),
        format!("{registry}/kruise-test/busybox:v2"),
    ];
    let missing = format!("{registry}/kruise-test/no-such-image:v9");
    for image in &present {
        ensure!(
            runtime.image_status(image).await?.is_none(),
            "{image} is there before the job"
        );
    }
    let lists: Api<ImageListPullJob> = Api::namespaced(client.clone(), NAMESPACE);
    let list: ImageListPullJob = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "ImageListPullJob",
        "metadata": {"name": "warm"},
        "spec": {"images": [&present[0], &present[1], &missing], "parallelism": 1,
            "selector": {"names": [node]},
            "pullPolicy": {"timeoutSeconds": 30, "backoffLimit": 0},
            "completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": TTL_SECONDS}},
    }))?;
    let list = lists.create(&PostParams::default(), &list).await?;
    let made = wait_for("an ImagePullJob per image", WAIT, || async {
        let made = children(client, &list).await?;
        Ok((made.len() == 3).then_some(made))
    })
    .await?;
    let hash = list_job::template_hash(&list);
    let images: BTreeSet<&str> = made.iter().map(|child| child.spec.image.as_str()).collect();
    ensure!(
        images == BTreeSet::from([present[0].as_str(), present[1].as_str(), missing.as_str()]),
        "children pull {images:?}"
    );
    for child in &made {
        // The list's parameters, as the ImagePullJob webhook defaults them (`imagePullPolicy`).
        let mut expected = list.spec.template.clone();
        expected.image_pull_policy = child.spec.template.image_pull_policy.clone();
        ensure!(
            child.name_any().starts_with("warm-")
                && child.labels().get(CONTROLLER_REVISION_HASH_LABEL) == Some(&hash)
                && child.spec.template == expected,
            "child {} is not the list's: {:?} {:?}",
            child.name_any(),
            child.labels(),
            child.spec.template
        );
    }
    let done = wait_for("the list to complete", WAIT, || async {
        let list = lists.get("warm").await?;
        Ok(list
            .status
            .filter(|status| status.completion_time.is_some()))
    })
    .await?;
    let completed_at = Instant::now();
    ensure!(
        (done.desired, done.succeeded, done.completed, done.active) == (3, 2, 3, 0),
        "status {done:?}"
    );
    let failed_child = made
        .iter()
        .find(|child| child.spec.image == missing)
        .map(ResourceExt::name_any);
    ensure!(
        done.failed_image_statuses.len() == 1
            && done
                .failed_image_statuses
                .first()
                .map(|failed| &failed.name)
                == Some(&missing)
            && done
                .failed_image_statuses
                .first()
                .map(|failed| failed.image_pull_job.clone())
                == failed_child,
        "failedImageStatuses {:?}",
        done.failed_image_statuses
    );
    for image in &present {
        ensure!(
            runtime.image_status(image).await?.is_some(),
            "{image} not on {node}"
        );
    }
    ensure!(
        runtime.image_status(&missing).await?.is_none(),
        "{missing} cannot exist"
    );
    let node_image = node_images.get(node).await?;
    let statuses = node_image.status.clone().unwrap_or_default().image_statuses;
    for (name, tag, phase) in [
        (
            format!("{registry}/kruise-test/busybox"),
            "v1",
            ImagePullPhase::Succeeded,
        ),
        (
            format!("{registry}/kruise-test/busybox"),
            "v2",
            ImagePullPhase::Succeeded,
        ),
        (
            format!("{registry}/kruise-test/no-such-image"),
            "v9",
            ImagePullPhase::Failed,
        ),
    ] {
        let reported = statuses
            .get(&name)
            .and_then(|image| image.tags.iter().find(|status| status.tag == tag))
            .with_context(|| format!("no status of {name}:{tag} in {statuses:?}"))?;
        ensure!(reported.phase == phase, "{name}:{tag}: {reported:?}");
    }
    wait_for("the finished list to go after its TTL", WAIT, || async {
        Ok(lists.get_opt("warm").await?.is_none().then_some(()))
    })
    .await?;
    let gone_after = completed_at.elapsed();
    // The list completed at most a poll before it was seen; it goes TTL seconds after its completionTime.
    ensure!(
        gone_after >= Duration::from_secs(TTL_SECONDS - 2),
        "deleted {gone_after:?} after completing, TTL {TTL_SECONDS}s"
    );
    eprintln!("    list deleted {gone_after:.1?} after it was seen complete (TTL {TTL_SECONDS}s)");
    Ok(())
}

/// A list that never completes (`Never`, on a node that does not exist, so nothing pulls): dropping an image
/// deletes its child and keeps the other; new pull parameters replace the child.
async fn follows_the_list(client: &Client, agents: &NodeAgents) -> Result<()> {
    let registry = &agents.runtime.registry;
    let (v1, v2) = (
        format!("{registry}/kruise-test/busybox:v1"),
        format!("{registry}/kruise-test/busybox:v2"),
    );
    let lists: Api<ImageListPullJob> = Api::namespaced(client.clone(), NAMESPACE);
    let list: ImageListPullJob = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "ImageListPullJob",
        "metadata": {"name": "hold"},
        "spec": {"images": [&v1, &v2], "selector": {"names": ["no-such-node"]},
            "completionPolicy": {"type": "Never"}},
    }))?;
    let list = lists.create(&PostParams::default(), &list).await?;
    let first = wait_for("two children of the held list", WAIT, || async {
        let made = children(client, &list).await?;
        Ok((made.len() == 2).then_some(made))
    })
    .await?;
    let name_of = |jobs: &[ImagePullJob], image: &str| {
        jobs.iter()
            .find(|child| child.spec.image == image)
            .map(ResourceExt::name_any)
    };
    let (v1_child, v2_child) = (name_of(&first, &v1), name_of(&first, &v2));
    let patch = json!({"spec": {"images": [&v1]}});
    lists
        .patch("hold", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    wait_for("the dropped image's child to go", WAIT, || async {
        let now = children(client, &list).await?;
        Ok((now.len() == 1 && name_of(&now, &v2).is_none()).then_some(()))
    })
    .await?;
    let kept = children(client, &list).await?;
    ensure!(
        name_of(&kept, &v1) == v1_child,
        "the kept image's child changed: {:?} then {:?} (v2's was {v2_child:?})",
        v1_child,
        name_of(&kept, &v1)
    );
    let patch = json!({"spec": {"parallelism": 2}});
    let changed = lists
        .patch("hold", &PatchParams::default(), &Patch::Merge(&patch))
        .await?;
    let new_hash = list_job::template_hash(&changed);
    let replaced = wait_for("the child made from the new parameters", WAIT, || async {
        let now = children(client, &list).await?;
        Ok(match now.as_slice() {
            [only] if only.labels().get(CONTROLLER_REVISION_HASH_LABEL) == Some(&new_hash) => {
                Some(only.clone())
            }
            _ => None,
        })
    })
    .await?;
    ensure!(
        Some(replaced.name_any()) != v1_child
            && replaced.spec.template.parallelism == changed.spec.template.parallelism,
        "not replaced: {replaced:?}"
    );
    lists.delete("hold", &DeleteParams::default()).await?;
    Ok(())
}

/// An AdvancedCronJob running an ImageListPullJob every 2 s: the validating webhook admits a v1beta1 cron job
/// whose only template is `imageListPullJobTemplate` and refuses one that has a second template; the
/// admitted one creates lists (no warning), which complete at once (their ImagePullJobs target no node),
/// and it records them.
async fn cron_job_creates_lists(client: &Client, agents: &NodeAgents) -> Result<()> {
    let image = format!("{}/kruise-test/busybox:v1", agents.runtime.registry);
    let crons: Api<AdvancedCronJob> = Api::namespaced(client.clone(), NAMESPACE);
    let mut cron: AdvancedCronJob = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "AdvancedCronJob",
        "metadata": {"name": "warm-often"},
        "spec": {"schedule": "@every 2s", "concurrencyPolicy": "Forbid",
            "template": {"imageListPullJobTemplate": {"metadata": {"labels": {"cron": "warm-often"}},
                "spec": {"images": [image], "selector": {"names": ["no-such-node"]},
                    "completionPolicy": {"type": "Always"}}},
                "broadcastJobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "main", "image": "busybox"}]}}}}}},
    }))?;
    match crons.create(&PostParams::default(), &cron).await {
        Err(kube::Error::Api(status))
            if status.message.contains("spec can have only one template") => {}
        other => bail!("a cron job with two templates: {other:?}"),
    }
    cron.spec.template.broadcast_job_template = None;
    let cron = crons.create(&PostParams::default(), &cron).await?;
    let lists: Api<ImageListPullJob> = Api::namespaced(client.clone(), NAMESPACE);
    let finished = wait_for(
        "a finished ImageListPullJob of the cron job",
        WAIT,
        || async {
            Ok(lists
                .list(&ListParams::default().labels("cron=warm-often"))
                .await?
                .items
                .into_iter()
                .find(|list| {
                    list.status
                        .as_ref()
                        .is_some_and(|status| status.completion_time.is_some())
                }))
        },
    )
    .await?;
    let owner = finished
        .owner_references()
        .iter()
        .find(|owner| owner.controller == Some(true))
        .context("no controller")?;
    ensure!(
        owner.kind == "AdvancedCronJob" && Some(&owner.uid) == cron.metadata.uid.as_ref(),
        "owner {owner:?}"
    );
    ensure!(
        finished.name_any().starts_with("warm-often-")
            && finished.annotations().contains_key(SCHEDULED_AT_ANNOTATION),
        "child {} {:?}",
        finished.name_any(),
        finished.annotations()
    );
    let status = finished.status.clone().unwrap_or_default();
    ensure!(
        (status.desired, status.succeeded, status.completed) == (1, 1, 1),
        "cron child status {status:?}"
    );
    wait_for("the cron job to record its run", WAIT, || async {
        let status = crons.get("warm-often").await?.status.unwrap_or_default();
        Ok((status.type_ == Some(TemplateKind::ImageListPullJob)
            && status.last_schedule_time.is_some())
        .then_some(()))
    })
    .await?;
    let pause = json!({"spec": {"paused": true}});
    crons
        .patch("warm-often", &PatchParams::default(), &Patch::Merge(&pause))
        .await?;
    let events: Api<Event> = Api::namespaced(client.clone(), NAMESPACE);
    let warnings: Vec<(String, String)> = events
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|event| {
            event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("warm-often")
                && event.type_.as_deref() == Some("Warning")
        })
        .map(|event| {
            (
                event.reason.unwrap_or_default(),
                event.note.unwrap_or_default(),
            )
        })
        .collect();
    ensure!(
        warnings.is_empty(),
        "the cron job recorded warnings: {warnings:?}"
    );
    crons.delete("warm-often", &DeleteParams::default()).await?;
    Ok(())
}
