//! CloneSet image pre-download (gate `PreDownloadImageForInPlaceUpdate`) against the real API server: an
//! image change of a 4-replica in-place CloneSet held by a partition creates the ImagePullJob
//! `<update revision>-<container>` for the new image, owned by the CloneSet, and labels the update
//! revision created; the jobs go when the rollout completes; with 3 replicas there is no job and the
//! revision is labelled ignored.

use anyhow::{Result, anyhow, ensure};
use k8s_openapi::api::apps::v1::ControllerRevision;
use kruise_api::apps::v1beta1::{CloneSet, ImagePullJob};
use kruise_api::keys::inplace::{
    IMAGE_PRE_DOWNLOAD_CREATED_LABEL, IMAGE_PRE_DOWNLOAD_IGNORED_LABEL,
};
use kube::api::ListParams;
use kube::{Api, ResourceExt};
use serde_json::json;

use crate::cloneset_env::{Env, WAIT};
use crate::support::{Cluster, wait_for};

pub async fn cloneset_pre_downloads_images(cluster: &Cluster) -> Result<()> {
    let env = Env::start_with(
        cluster,
        "e2e-cs-predownload",
        &["--cloneset-feature-gates=PreDownloadImageForInPlaceUpdate=true"],
    )
    .await?;
    let result = pre_download(&env).await;
    let stopped = env.stop().await;
    result.and(stopped)
}

fn in_place_with_partition() -> serde_json::Value {
    json!({"updateStrategy": {"rollingUpdate": {
        "podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": 1, "partition": 2}}})
}

/// Waits until the CloneSet's status names an update revision other than the current one.
async fn update_revision(env: &Env, name: &str) -> Result<(CloneSet, String)> {
    wait_for(&format!("{name}: a new update revision"), WAIT, || async {
        let cloneset = env.clonesets().get(name).await?;
        let status = cloneset.status.clone().unwrap_or_default();
        let moved = !status.update_revision.is_empty()
            && status.update_revision != status.current_revision
            && status.observed_generation == cloneset.metadata.generation.unwrap_or(0);
        Ok(moved.then_some((cloneset, status.update_revision)))
    })
    .await
}

/// Waits until the revision carries `label: "true"`.
async fn labelled(env: &Env, revision: &str, label: &str) -> Result<()> {
    let revisions: Api<ControllerRevision> = Api::namespaced(env.client.clone(), &env.namespace);
    wait_for(&format!("{revision} labelled {label}"), WAIT, || async {
        let found = revisions.get(revision).await?;
        match found.labels().get(label).map(String::as_str) {
            Some("true") => Ok(Some(())),
            other => Err(anyhow!("labels {:?} ({label}: {other:?})", found.labels())),
        }
    })
    .await
}

async fn jobs_of(jobs: &Api<ImagePullJob>, uid: &str) -> Result<Vec<ImagePullJob>> {
    Ok(jobs
        .list(&ListParams::default())
        .await?
        .items
        .into_iter()
        .filter(|job| {
            job.owner_references()
                .iter()
                .any(|owner| owner.uid == uid && owner.controller == Some(true))
        })
        .collect())
}

async fn pre_download(env: &Env) -> Result<()> {
    let jobs: Api<ImagePullJob> = Api::namespaced(env.client.clone(), &env.namespace);
    env.create("web", 4, "nginx:1.25", in_place_with_partition())
        .await?;
    env.create("small", 3, "nginx:1.25", in_place_with_partition())
        .await?;
    env.wait_rolled_out("web", 4, "nginx:1.25").await?;
    env.wait_rolled_out("small", 3, "nginx:1.25").await?;
    let web_uid = env.clonesets().get("web").await?.uid().unwrap_or_default();
    ensure!(
        jobs_of(&jobs, &web_uid).await?.is_empty(),
        "a job before any update"
    );

    // 4 replicas: a job for the new image of container `main`, owned by the CloneSet.
    env.set_image("web", "nginx:1.26").await?;
    let (web, revision) = update_revision(env, "web").await?;
    let job_name = format!("{revision}-main");
    let job = wait_for(&format!("ImagePullJob {job_name}"), WAIT, || async {
        Ok(jobs.get_opt(&job_name).await?)
    })
    .await?;
    ensure!(
        job.spec.image == "nginx:1.26",
        "job image {}",
        job.spec.image
    );
    let owner = job
        .owner_references()
        .first()
        .ok_or_else(|| anyhow!("the job has no owner"))?;
    ensure!(
        owner.kind == "CloneSet"
            && owner.name == "web"
            && Some(owner.uid.as_str()) == web.uid().as_deref()
            && owner.controller == Some(true),
        "job owner {owner:?}"
    );
    let selector = job
        .spec
        .template
        .pod_selector
        .as_ref()
        .map(|s| s.label_selector.clone())
        .unwrap_or_default();
    ensure!(
        selector
            .match_expressions
            .unwrap_or_default()
            .iter()
            .any(|e| e.key == "controller-revision-hash"
                && e.operator == "NotIn"
                && e.values.as_deref().unwrap_or_default().contains(&revision)),
        "the job targets pods of every revision"
    );
    labelled(env, &revision, IMAGE_PRE_DOWNLOAD_CREATED_LABEL).await?;
    ensure!(
        jobs_of(&jobs, &web_uid).await?.len() == 1,
        "only the changed container gets a job"
    );

    // 3 replicas: ignored, no job.
    env.set_image("small", "nginx:1.26").await?;
    let (small, small_revision) = update_revision(env, "small").await?;
    labelled(env, &small_revision, IMAGE_PRE_DOWNLOAD_IGNORED_LABEL).await?;
    let small_uid = small.uid().unwrap_or_default();
    ensure!(
        jobs_of(&jobs, &small_uid).await?.is_empty(),
        "a job for 3 replicas"
    );
    ensure!(
        jobs.get_opt(&format!("{small_revision}-main"))
            .await?
            .is_none(),
        "a job for 3 replicas"
    );

    // The rollout completes: the jobs go.
    env.patch(
        "web",
        json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 0}}}}),
    )
    .await?;
    env.wait_rolled_out("web", 4, "nginx:1.26").await?;
    wait_for("the jobs of the completed rollout gone", WAIT, || async {
        let left = jobs_of(&jobs, &web_uid).await?;
        if left
            .iter()
            .all(|job| job.metadata.deletion_timestamp.is_some())
        {
            return Ok(Some(()));
        }
        Err(anyhow!(
            "left: {:?}",
            left.iter().map(ResourceExt::name_any).collect::<Vec<_>>()
        ))
    })
    .await?;
    Ok(())
}
