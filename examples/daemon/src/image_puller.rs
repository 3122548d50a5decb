//! kruise-daemon's NodeImage worker: watches the NodeImage named after its node and pulls the tags that
//! `kruise_schedule::image_pull::node_pulls::pending` lists, one after another, through the CRI ImageService: with
//! the credentials of the tag's pull secrets for the image's registry (the copies kruise-manager keeps in
//! `kruise-daemon-config`, the only namespace whose Secrets the daemon's Role lets it read), each attempt bounded by the tag's
//! timeout, retried with backoff up to its `backoffLimit`. Each tag's status is written when its pull starts
//! (`Pulling`) and when it ends (`Succeeded` with the image ID, or `Failed` with the last error) by
//! [`report`]: merged into the NodeImage as the API server has it now, conditional on that copy's
//! `resourceVersion` (a conflict: read it again and merge again), and not written at all when that copy
//! shows the report is stale. A pull is only started once its `Pulling` report was written, so a pass
//! decided on a watch cache that has not yet seen this daemon's last `Succeeded` neither undoes it nor
//! pulls again. A daemon that died during a pull leaves the tag `Pulling`: started again, it reads that as
//! still to do and pulls it again (see the crate's "Restart and resume").

use kruise_runtime::actions::is_conflict;
use kruise_runtime::harness::{self, Driver, Retry};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
use kruise_runtime::cri::CriClient;
use kruise_runtime::shutdown::Shutdown;
use kruise_schedule::image_pull::node_pulls::{self, Credentials, PullTask, StaleReport};

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
    /// Every attempt to write a report met a newer NodeImage (409).
    #[error("NodeImage {node}: the status write conflicted {attempts} times in a row")]
    Conflicts {
        /// The NodeImage (node) name.
        node: String,
        /// How many writes were tried.
        attempts: u32,
    },
}

/// How many times a report is merged and written again after conflicts before the pass fails (and is
/// retried from a fresh read).
pub const REPORT_ATTEMPTS: u32 = 10;

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
    let driver = Driver::new("node-image-puller", metrics.worker("node-image"), shutdown);
    let context = Arc::new(Context {
        client,
        cri,
        node,
        metrics,
    });
    harness::drive_with(
        Controller::new(api, config),
        driver,
        reconcile,
        context,
        |_| {},
    )
    .await;
}

/// A failed pass is tried again after 5 s, from a fresh read.
impl Retry for PullerError {
    fn retry_after(&self) -> Duration {
        Duration::from_secs(5)
    }
}

fn now() -> Time {
    let now = Timestamp::now();
    Time(Timestamp::from_second(now.as_second()).unwrap_or(now))
}

async fn reconcile(
    node_image: Arc<NodeImage>,
    context: Arc<Context>,
) -> Result<Action, PullerError> {
    let api: Api<NodeImage> = Api::all(context.client.clone());
    let tasks = node_pulls::pending(&node_image);
    for task in tasks {
        let started = node_pulls::pulling(&task, now());
        if let Err(stale) = report(&api, &context.node, &task.name, &started).await? {
            tracing::debug!(%stale, "not pulling: the watch cache was behind");
            continue;
        }
        let outcome = pull(&context, &task).await;
        match &outcome {
            Ok(image_id) => tracing::info!(image = %task.reference(), %image_id, "pulled"),
            Err(error) => tracing::warn!(image = %task.reference(), %error, "pull failed"),
        }
        let finished = node_pulls::finished(&started, outcome, now());
        if let Err(stale) = report(&api, &context.node, &task.name, &finished).await? {
            tracing::info!(%stale, "result not reported");
        }
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

/// Writes `tag`, the status of one tag of image `name`, into the status of NodeImage `node`: read, merged
/// by [`node_pulls::merge_report`], written with the `resourceVersion` it was read at; on a conflict read
/// and merge again, up to [`REPORT_ATTEMPTS`] times. `Ok(Err(_))` when the NodeImage as read shows the
/// report is stale (nothing written).
///
/// # Errors
/// [`PullerError`] when the API server cannot be read or written, or every write conflicted.
pub async fn report(
    api: &Api<NodeImage>,
    node: &str,
    name: &str,
    tag: &ImageTagStatus,
) -> Result<Result<(), StaleReport>, PullerError> {
    let kube_error = |source| PullerError::Kube {
        node: node.to_owned(),
        source,
    };
    for _ in 0..REPORT_ATTEMPTS {
        let current = api.get(node).await.map_err(kube_error)?;
        let status = match node_pulls::merge_report(&current, name, tag) {
            Ok(status) => status,
            Err(stale) => return Ok(Err(stale)),
        };
        let patch = json!({
            "metadata": {"resourceVersion": current.resource_version()},
            "status": status,
        });
        match api
            .patch_status(node, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => return Ok(Ok(())),
            Err(error) if is_conflict(&error) => {}
            Err(source) => return Err(kube_error(source)),
        }
    }
    Err(PullerError::Conflicts {
        node: node.to_owned(),
        attempts: REPORT_ATTEMPTS,
    })
}
