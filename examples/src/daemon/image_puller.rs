//! kruise-daemon's NodeImage worker: watches the NodeImage named after its node and pulls the tags that
//! [`crate::imagepull::node_pulls::pending`] lists, one after another, through the CRI ImageService: with
//! the credentials of the tag's pull secrets for the image's registry, each attempt bounded by the tag's
//! timeout, retried with backoff up to its `backoffLimit`. Each tag's status is written when its pull starts
//! (`Pulling`) and when it ends (`Succeeded` with the image ID, or `Failed` with the last error), with the
//! NodeImage's `resourceVersion` (a conflict: read it again and retry the write).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_cri::v1 as cri;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{ImageTagStatus, NodeImage};
use kruise_api::keys::image_pull::PULLING_IMAGE_BY_ANNOTATION;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use super::metrics::DaemonMetrics;
use crate::cri::CriClient;
use crate::imagepull::node_image::count;
use crate::imagepull::node_pulls::{self, Credentials, PullTask};
use crate::shutdown::Shutdown;

/// Why a pass failed (retried after a few seconds).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PullerError {
    /// Reading or writing the NodeImage failed.
    #[error("NodeImage {node}: {source}")]
    Kube {
        /// The NodeImage (node) name.
        node: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
}

struct Context {
    client: Client,
    cri: CriClient,
    node: String,
    metrics: DaemonMetrics,
}

/// Runs the worker until `shutdown`.
pub async fn run(
    client: Client,
    cri: CriClient,
    node: String,
    metrics: DaemonMetrics,
    shutdown: Shutdown,
) {
    let api: Api<NodeImage> = Api::all(client.clone());
    let config = watcher::Config::default().fields(&format!("metadata.name={node}"));
    tracing::info!(%node, "watching the NodeImage of this node");
    let context = Arc::new(Context {
        client,
        cri,
        node,
        metrics,
    });
    Controller::new(api, config)
        .graceful_shutdown_on(shutdown.wait())
        .run(reconcile, on_error, context)
        .for_each(|result| async move {
            if let Err(error) = result {
                tracing::debug!(%error, "NodeImage pass failed");
            }
        })
        .await;
}

#[allow(clippy::needless_pass_by_value)] // the signature kube-runtime's Controller::run expects
fn on_error(_node_image: Arc<NodeImage>, error: &PullerError, _context: Arc<Context>) -> Action {
    tracing::warn!(%error, "retrying in 5s");
    Action::requeue(Duration::from_secs(5))
}

fn now() -> Time {
    let now = Timestamp::now();
    Time(Timestamp::from_second(now.as_second()).unwrap_or(now))
}

async fn reconcile(
    node_image: Arc<NodeImage>,
    context: Arc<Context>,
) -> Result<Action, PullerError> {
    let tasks = node_pulls::pending(&node_image);
    for task in tasks {
        let started = node_pulls::pulling(&task, now());
        write_tag(&context, &task.name, started.clone()).await?;
        let outcome = pull(&context, &task).await;
        match &outcome {
            Ok(image_id) => tracing::info!(image = %task.reference(), %image_id, "pulled"),
            Err(error) => tracing::warn!(image = %task.reference(), %error, "pull failed"),
        }
        write_tag(
            &context,
            &task.name,
            node_pulls::finished(&started, outcome, now()),
        )
        .await?;
    }
    Ok(Action::await_change())
}

async fn credentials(context: &Context, task: &PullTask) -> Option<Credentials> {
    for reference in &task.secrets {
        let secrets: Api<Secret> = Api::namespaced(context.client.clone(), &reference.namespace);
        match secrets.get_opt(&reference.name).await {
            Ok(Some(secret)) => {
                let data: BTreeMap<String, Vec<u8>> = secret
                    .data
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(key, value)| (key, value.0))
                    .collect();
                if let Some(found) = node_pulls::credentials(&data, &task.name) {
                    return Some(found);
                }
            }
            Ok(None) => {
                tracing::warn!(secret = %format!("{}/{}", reference.namespace, reference.name), "pull secret not found");
            }
            Err(error) => {
                tracing::warn!(secret = %reference.name, %error, "cannot read a pull secret");
            }
        }
    }
    None
}

/// Pulls one tag: the image ID, or the last error after every attempt failed.
async fn pull(context: &Context, task: &PullTask) -> Result<String, String> {
    let reference = task.reference();
    if task.if_not_present
        && let Ok(Some(image)) = context.cri.image_status(&reference).await
    {
        return Ok(image.id);
    }
    let auth = credentials(context, task)
        .await
        .map(|found| cri::AuthConfig {
            username: found.username,
            password: found.password,
            ..cri::AuthConfig::default()
        });
    let sandbox = task.sandbox_config.as_ref().map(|config| {
        let mut annotations: std::collections::HashMap<String, String> =
            config.annotations.clone().into_iter().collect();
        annotations.insert(
            PULLING_IMAGE_BY_ANNOTATION.to_owned(),
            "kruise-daemon-imagepuller".to_owned(),
        );
        cri::PodSandboxConfig {
            labels: config.labels.clone().into_iter().collect(),
            annotations,
            ..cri::PodSandboxConfig::default()
        }
    });
    let mut last = String::new();
    for attempt in 0..task.attempts {
        tokio::time::sleep(node_pulls::backoff(attempt)).await;
        let began = Instant::now();
        match context
            .cri
            .pull_image(&reference, auth.clone(), sandbox.clone(), task.timeout)
            .await
        {
            Ok(image_ref) => {
                context.metrics.pull(true, began.elapsed());
                return Ok(image_ref);
            }
            Err(error) => {
                context.metrics.pull(false, began.elapsed());
                tracing::info!(image = %reference, attempt, %error, "pull attempt failed");
                last = error.to_string();
            }
        }
    }
    Err(format!(
        "failed to pull image {reference} after {} attempts: {last}",
        task.attempts
    ))
}

/// Writes one tag's status (replacing the entry of the same tag), with fresh counts; retries on conflicts.
async fn write_tag(context: &Context, name: &str, tag: ImageTagStatus) -> Result<(), PullerError> {
    let api: Api<NodeImage> = Api::all(context.client.clone());
    let kube_error = |source| PullerError::Kube {
        node: context.node.clone(),
        source,
    };
    for _ in 0..5 {
        let current = api.get(&context.node).await.map_err(kube_error)?;
        let mut status = current.status.clone().unwrap_or_default();
        let entry = status.image_statuses.entry(name.to_owned()).or_default();
        match entry
            .tags
            .iter_mut()
            .find(|existing| existing.tag == tag.tag)
        {
            Some(existing) => *existing = tag.clone(),
            None => entry.tags.push(tag.clone()),
        }
        entry.tags.sort_by(|a, b| a.tag.cmp(&b.tag));
        let desired: usize = current
            .spec
            .images
            .values()
            .map(|image| image.tags.len())
            .sum();
        count(&mut status, desired);
        let patch = json!({
            "metadata": {"resourceVersion": current.resource_version()},
            "status": status,
        });
        match api
            .patch_status(
                &context.node,
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await
        {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(source) => return Err(kube_error(source)),
        }
    }
    Ok(())
}
