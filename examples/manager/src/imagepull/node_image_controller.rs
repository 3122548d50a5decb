//! kruise-manager's NodeImage controller: one NodeImage per Ready node, created
//! [`node_image::creation`]-delay after the node became Ready (30 s, or the duration in the
//! environment variable `KRUISE_NODEIMAGE_CREATION_DELAY`, e.g. `0s`), with the node's labels; tags of
//! deleted ImagePullJobs or past their TTL are dropped ([`node_image::clean_spec`]); unanswered and
//! overdue pulls are marked failed ([`node_image::refresh_status`]). NodeImages of nodes that no
//! longer exist are deleted by a sweep every 30 s.

use kruise_runtime::actions::is_conflict;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{ImagePullJob, NodeImage, NodeImageSpec};
use kube::api::{ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use crate::actions::{self, ActionError};
use crate::controllers::{ControllerContext, ControllerError, ControllerSet};
use kruise_runtime::duration::parse_duration;
use kruise_runtime::harness;
use kruise_schedule::image_pull::node_image::{self, Creation, DEFAULT_CREATION_DELAY, LiveJobs};

/// The controller's name.
pub const NAME: &str = "nodeimage";
/// The environment variable that overrides the creation delay.
pub const CREATION_DELAY_ENV: &str = "KRUISE_NODEIMAGE_CREATION_DELAY";

struct Context {
    client: Client,
    delay: Duration,
}

/// Adds the controller to `controllers`.
pub fn register(controllers: &mut ControllerSet) {
    controllers.register_fn(NAME, run);
}

/// The creation delay: [`CREATION_DELAY_ENV`] when set and valid, else 30 s.
#[must_use]
pub fn creation_delay() -> Duration {
    std::env::var(CREATION_DELAY_ENV)
        .ok()
        .and_then(|text| parse_duration(&text).ok())
        .unwrap_or(DEFAULT_CREATION_DELAY)
}

/// Runs the controller until the context's shutdown.
///
/// # Errors
/// Never; the signature is the controller set's.
pub async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let shared = Arc::new(Context {
        client: context.client.clone(),
        delay: creation_delay(),
    });
    let sweeper = tokio::spawn(sweep(context.client.clone(), context.shutdown.clone()));
    let nodes = context.informers.get::<Node>();
    let node_images = context.informers.get::<NodeImage>();
    let Some(store) = harness::synced_store(&nodes, &context).await else {
        sweeper.abort();
        return Ok(());
    };
    let controller = Controller::for_shared_stream(nodes.applied(), store)
        .watches_shared_stream(node_images.objects(), |node_image: Arc<NodeImage>| {
            Some(ObjectRef::<Node>::new(&node_image.name_any()))
        });
    harness::drive(controller, &context, reconcile, shared).await;
    sweeper.abort();
    Ok(())
}

async fn reconcile(node: Arc<Node>, context: Arc<Context>) -> Result<Action, ActionError> {
    sync(&node, &context).await
}

fn api_error(name: &str) -> impl FnOnce(kube::Error) -> ActionError + '_ {
    move |error| ActionError::from_kube(name.to_owned(), error)
}

async fn sync(node: &Node, context: &Context) -> Result<Action, ActionError> {
    let name = node.name_any();
    let api: Api<NodeImage> = Api::all(context.client.clone());
    let now = Timestamp::now();
    let Some(existing) = api.get_opt(&name).await.map_err(api_error(&name))? else {
        return match node_image::creation(node, now, context.delay) {
            Creation::NotReady => Ok(Action::await_change()),
            Creation::After(wait) => Ok(Action::requeue(wait)),
            Creation::Now => {
                let object = NodeImage {
                    metadata: ObjectMeta {
                        name: Some(name.clone()),
                        labels: node.metadata.labels.clone(),
                        ..ObjectMeta::default()
                    },
                    spec: NodeImageSpec::default(),
                    status: None,
                };
                match api.create(&PostParams::default(), &object).await {
                    Ok(_) => tracing::info!(node = %name, "created the NodeImage"),
                    Err(error) if is_conflict(&error) => {}
                    Err(error) => return Err(api_error(&name)(error)),
                }
                Ok(Action::await_change())
            }
        };
    };
    let jobs: Api<ImagePullJob> = Api::all(context.client.clone());
    let live: LiveJobs = jobs
        .list(&ListParams::default())
        .await
        .map_err(api_error("imagepulljobs"))?
        .items
        .into_iter()
        .map(|job| {
            (
                (job.namespace().unwrap_or_default(), job.name_any()),
                job.uid().unwrap_or_default(),
            )
        })
        .collect();
    let change = node_image::clean_spec(&existing, node.metadata.labels.as_ref(), &live, now);
    if change.labels.is_some() || change.images.is_some() {
        let mut metadata = serde_json::Map::new();
        metadata.insert("resourceVersion".into(), json!(existing.resource_version()));
        if let Some(labels) = &change.labels {
            metadata.insert("labels".into(), json!(labels));
        }
        let mut patch = serde_json::Map::new();
        patch.insert("metadata".into(), serde_json::Value::Object(metadata));
        if let Some(images) = &change.images {
            // A merge patch merges maps: name the images that went away with null.
            let mut value = serde_json::Map::new();
            for name in existing.spec.images.keys() {
                value.insert(name.clone(), serde_json::Value::Null);
            }
            for (name, image) in images {
                value.insert(name.clone(), json!(image));
            }
            patch.insert("spec".into(), json!({"images": value}));
        }
        let patch = serde_json::Value::Object(patch);
        tracing::info!(node = %name, reasons = ?change.reasons, "cleaning the NodeImage spec");
        api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(api_error(&name))?;
        return Ok(Action::requeue(Duration::from_millis(100)));
    }
    let (status, requeue) = node_image::refresh_status(&existing, now);
    if let Some(status) = status {
        actions::replace_status(&api, &existing, &status).await?;
    }
    let next = [change.requeue_after, requeue].into_iter().flatten().min();
    Ok(next.map_or_else(Action::await_change, Action::requeue))
}

/// Deletes NodeImages whose node is gone, every 30 s.
async fn sweep(client: Client, shutdown: kruise_runtime::shutdown::Shutdown) {
    let nodes: Api<Node> = Api::all(client.clone());
    let node_images: Api<NodeImage> = Api::all(client);
    loop {
        tokio::select! {
            () = shutdown.clone().wait() => return,
            () = tokio::time::sleep(Duration::from_secs(30)) => {}
        }
        let Ok(list) = node_images.list(&ListParams::default()).await else {
            continue;
        };
        for node_image in list.items {
            let name = node_image.name_any();
            if let Ok(None) = nodes.get_opt(&name).await
                && actions::delete(&node_images, &node_image).await.is_ok()
            {
                tracing::info!(node = %name, "deleted the NodeImage of a deleted node");
            }
        }
    }
}
