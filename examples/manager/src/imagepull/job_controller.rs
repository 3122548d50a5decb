//! kruise-manager's ImagePullJob controller: runs the decisions of [`job`] for every job. It finds
//! the target NodeImages (node selector, pod selector or all), computes the status from their tags, adds
//! the job's image tag to at most `parallelism - active` more NodeImages per pass, writes the status
//! (progress message included), and deletes a finished job after its TTL. NodeImage changes requeue the
//! jobs owning their tags.
//!
//! The job's pull secrets are copied into the `kruise-daemon-config` namespace, the only one whose Secrets
//! kruise-daemon may read, and the NodeImages reference the copies ([`super::pull_secrets`]); copies no job
//! needs are deleted by a sweep that runs next to the controller.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{ImagePullJob, NodeImage};
use kube::api::{ListParams, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use super::pull_secrets::{self, PullSecretError};
use crate::actions::{self, ActionError};
use crate::controllers::{ControllerContext, ControllerError, ControllerSet};
use kruise_runtime::harness::{self, Retry, object_key};
use kruise_schedule::image_pull::job::{self, Finished};

/// The controller's name.
pub const NAME: &str = "imagepulljob";
/// How often a running job is looked at without events.
pub const RESYNC: Duration = Duration::from_secs(5);

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JobError {
    /// A read or write failed.
    #[error(transparent)]
    Action(#[from] ActionError),
    /// The job's selectors are invalid.
    #[error(transparent)]
    Target(#[from] job::TargetError),
    /// The job's pull secrets could not be copied for kruise-daemon.
    #[error(transparent)]
    PullSecrets(#[from] PullSecretError),
    /// The job's image does not parse.
    #[error("ImagePullJob {job}: {source}")]
    Image {
        /// `namespace/name`.
        job: String,
        /// The failure.
        #[source]
        source: kruise_schedule::image_pull::reference::InvalidImage,
    },
}

impl Retry for JobError {
    fn retry_after(&self) -> Duration {
        match self {
            Self::Action(action) | Self::PullSecrets(PullSecretError::Action(action)) => {
                action.requeue_after()
            }
            Self::Target(_) | Self::Image { .. } | Self::PullSecrets(_) => Duration::from_secs(30),
        }
    }

    fn is_conflict(&self) -> bool {
        matches!(
            self,
            Self::Action(ActionError::Conflict { .. })
                | Self::PullSecrets(PullSecretError::Action(ActionError::Conflict { .. }))
        )
    }
}

struct Context {
    client: Client,
}

/// Adds the controller to `controllers`.
pub fn register(controllers: &mut ControllerSet) {
    controllers.register_fn(NAME, run);
}

/// Runs the controller until the context's shutdown.
///
/// # Errors
/// Never; the signature is the controller set's.
pub async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let shared = Arc::new(Context {
        client: context.client.clone(),
    });
    let jobs = context.informers.get::<ImagePullJob>();
    let node_images = context.informers.get::<NodeImage>();
    let Some(store) = harness::synced_store(&jobs, &context).await else {
        return Ok(());
    };
    let sweeper = tokio::spawn(pull_secrets::sweep(
        context.client.clone(),
        store.clone(),
        context.shutdown.clone(),
    ));
    let controller = Controller::for_shared_stream(jobs.applied(), store).watches_shared_stream(
        node_images.objects(),
        |node_image: Arc<NodeImage>| {
            let mut owners: Vec<ObjectRef<ImagePullJob>> = node_image
                .spec
                .images
                .values()
                .flat_map(|image| image.tags.iter())
                .flat_map(|tag| tag.owner_references.iter())
                .filter(|owner| owner.kind.as_deref() == Some("ImagePullJob"))
                .filter_map(|owner| {
                    Some(
                        ObjectRef::new(owner.name.as_deref()?)
                            .within(owner.namespace.as_deref().unwrap_or_default()),
                    )
                })
                .collect();
            owners.dedup();
            owners
        },
    );
    harness::drive(controller, &context, reconcile, shared).await;
    sweeper.abort();
    Ok(())
}

async fn reconcile(job: Arc<ImagePullJob>, context: Arc<Context>) -> Result<Action, JobError> {
    sync(&job, &context).await
}

/// A stable spread (0..) for the TTL of the tags a job adds to one node, in place of upstream's random one.
fn spread(job: &ImagePullJob, node: &str) -> u32 {
    let mut hasher = DefaultHasher::new();
    job.uid().hash(&mut hasher);
    node.hash(&mut hasher);
    u32::try_from(hasher.finish() % 1_000_000).unwrap_or_default()
}

async fn sync(job: &ImagePullJob, context: &Context) -> Result<Action, JobError> {
    let now = Timestamp::now();
    let namespace = job.namespace().unwrap_or_default();
    let jobs: Api<ImagePullJob> = Api::namespaced(context.client.clone(), &namespace);
    if job.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    if job
        .status
        .as_ref()
        .is_some_and(|status| status.completion_time.is_some())
    {
        return match job::after_completion(job, now) {
            Finished::Delete => {
                actions::delete(&jobs, job).await?;
                tracing::info!(job = %object_key(job), "deleted after its TTL");
                Ok(Action::await_change())
            }
            Finished::Wait(wait) => Ok(Action::requeue(wait)),
            Finished::Keep => Ok(Action::await_change()),
        };
    }
    let node_images_api: Api<NodeImage> = Api::all(context.client.clone());
    let node_images = node_images_api
        .list(&ListParams::default())
        .await
        .map_err(|error| ActionError::from_kube("nodeimages".into(), error))?
        .items;
    let pods: Vec<Pod> = if job.spec.template.pod_selector.is_some() {
        let api: Api<Pod> = Api::namespaced(context.client.clone(), &namespace);
        api.list(&ListParams::default())
            .await
            .map_err(|error| ActionError::from_kube(format!("{namespace}/pods"), error))?
            .items
    } else {
        Vec::new()
    };
    let all: Vec<&NodeImage> = node_images.iter().collect();
    let pod_refs: Vec<&Pod> = pods.iter().collect();
    let targets = job::targets(job, &all, &pod_refs)?;
    let targeted: Vec<&NodeImage> = all
        .iter()
        .copied()
        .filter(|node_image| targets.contains(&node_image.name_any()))
        .collect();
    let secrets = pull_secrets::sync(&context.client, job).await?;
    let image_error = |source| JobError::Image {
        job: object_key(job),
        source,
    };
    let (status, mut not_synced) =
        job::calculate_status(job, &targeted, &secrets, now).map_err(image_error)?;
    not_synced.sort();
    let room = job::to_sync_now(job, &status, not_synced.len());
    for name in not_synced.iter().take(room) {
        let Some(node_image) = targeted
            .iter()
            .find(|node_image| node_image.name_any() == *name)
        else {
            continue;
        };
        let policy = job::tag_pull_policy(job, spread(job, name));
        let Some((image, spec)) =
            job::sync_node_image(node_image, job, &secrets, &policy, now).map_err(image_error)?
        else {
            continue;
        };
        let patch = json!({
            "metadata": {"resourceVersion": node_image.resource_version()},
            "spec": {"images": {image: spec}},
        });
        node_images_api
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|error| ActionError::from_kube(name.clone(), error))?;
        tracing::info!(job = %object_key(job), node = %name, image = %job.spec.image, "asked the node to pull");
    }
    if job.status.as_ref() != Some(&status) {
        actions::replace_status(&jobs, job, &status).await?;
    }
    if status.completion_time.is_some() {
        return Ok(match job::after_completion(job, now) {
            Finished::Wait(wait) => Action::requeue(wait),
            _ => Action::requeue(Duration::from_secs(1)),
        });
    }
    let deadline = job::deadline_requeue(job, &status, now);
    Ok(Action::requeue(
        deadline.map_or(RESYNC, |wait| wait.min(RESYNC)),
    ))
}
