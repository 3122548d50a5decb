//! The CloneSet controller of kruise-manager: a kube-runtime `Controller` over v1beta1 CloneSets (the
//! storage version) that owns pods, PersistentVolumeClaims and ControllerRevisions, and runs upstream's
//! CloneSet reconcile with the sans-IO planner of `kruise_schedule::cloneset`.
//!
//! * [`watch`]: pods, claims and revisions come from the process's shared informers, found by an index
//!   of the controlling CloneSet's UID (a reconcile reads "the pods of this CloneSet" without scanning
//!   every pod); every change satisfies expectations and triggers the owning CloneSet.
//! * [`reconcile`]: observe, settle the [`revisions`], plan, [`execute`], write the [`status`].
//! * [`request`]: the patches each pod action becomes, each conditional on the `resourceVersion` the plan
//!   was made from (409 means decide again, never overwrite).
//! * [`events`]: upstream's Event reasons (`SuccessfulCreate`, `SuccessfulDelete`,
//!   `SuccessfulUpdatePodInPlace`, `SuccessfulUpdatePodReCreate`, `ScaleUpLimited`, the `Failed*` ones), and
//!   kruise-rs's `InvalidSpec` ([`invalid_spec`]) and `SkippedPod`.
//! * [`context`]: the shared state, with the expectations that keep a reconcile from acting twice on a
//!   cache that has not caught up with its own writes.
//! * [`predownload`]: with the gate `PreDownloadImageForInPlaceUpdate` ([`gates`]), ImagePullJobs for the
//!   new images of an in-place update, created before the pods are updated.
//!
//! The controller reports its queue depth ([`QueueDepth`](crate::queue_depth::QueueDepth)):
//! the CloneSets with a trigger not yet served or a reconcile running.
//!
//! ```no_run
//! use kruise_manager::cloneset::{CloneSetConfig, CloneSetController};
//! use kruise_runtime::controllers::ControllerSet;
//!
//! let mut controllers = ControllerSet::new();
//! controllers.register(CloneSetController::new(CloneSetConfig::default()));
//! assert_eq!(controllers.names(), ["cloneset"]);
//! ```

pub mod context;
pub mod error;
pub mod events;
pub mod execute;
pub mod gates;
pub mod invalid_spec;
pub mod predownload;
pub mod reconcile;
pub mod request;
pub mod revisions;
pub mod status;
pub mod watch;
pub mod whole_pods;

use std::sync::Arc;

use futures::TryStreamExt;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kruise_api::apps::v1beta1::CloneSet;
use kruise_schedule::cloneset::{DEFAULT_MAX_CREATIONS_PER_PLAN, Options};
use kube::runtime::Controller;
use kube::runtime::controller::Config;
use kube::runtime::reflector::{self, ObjectRef, reflector};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use self::context::Shared;
use self::events::COMPONENT;
use self::gates::CloneSetGates;
use crate::workload::watch::owned;
use kruise_runtime::harness::{self, reference_key};

use super::controllers::{ControllerContext, ControllerError, ControllerFuture, ManagedController};

pub use self::error::ReconcileError;

/// How the CloneSet controller runs.
#[derive(Clone, Debug)]
pub struct CloneSetConfig {
    /// Watch only this namespace (default: all).
    pub namespace: Option<String>,
    /// Upstream's feature gates and flags that change decisions.
    pub options: Options,
    /// Gate `PreDownloadImageForInPlaceUpdate` (default off): create ImagePullJobs for the new images of an
    /// in-place update.
    pub pre_download_image: bool,
    /// CloneSets reconciled at the same time (upstream `--cloneset-workers`, default 3).
    pub workers: u16,
}

impl Default for CloneSetConfig {
    fn default() -> Self {
        Self {
            namespace: None,
            options: Options::default(),
            pre_download_image: false,
            workers: 3,
        }
    }
}

/// The CloneSet controller's flags of kruise-manager.
#[derive(Clone, Debug, clap::Args)]
pub struct CloneSetArgs {
    /// CloneSets reconciled at the same time.
    #[arg(long, default_value_t = 3)]
    pub cloneset_workers: u16,
    /// Watch CloneSets and their pods in this namespace only (default: all namespaces).
    #[arg(long)]
    pub cloneset_namespace: Option<String>,
    /// Leave `PreparingDelete` pods out when counting pods for scaling, for every CloneSet.
    #[arg(long)]
    pub cloneset_scaling_exclude_preparing_delete: bool,
    /// The most pods one reconcile of a CloneSet creates (in slow-start batches 1, 2, 4, ...); the next
    /// reconciles create the rest. Bounds the memory and time of a reconcile whatever `replicas` says.
    #[arg(long, default_value_t = DEFAULT_MAX_CREATIONS_PER_PLAN,
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub cloneset_max_creations_per_reconcile: usize,
    /// Upstream feature gates of the CloneSet controller, `Name=true|false,...`
    /// (`CloneSetPartitionRollback`, `PreparingUpdateAsUpdate`, `CloneSetShortHash`,
    /// `InPlaceUpdateEnvFromMetadata`, `InPlaceWorkloadVerticalScaling`,
    /// `RecreatePodWhenChangeVCTInCloneSetGate`, `PreDownloadImageForInPlaceUpdate`), all off by default.
    #[arg(long, default_value = "", value_parser = parse_gates)]
    pub cloneset_feature_gates: CloneSetGates,
}

fn parse_gates(text: &str) -> Result<CloneSetGates, String> {
    text.parse()
        .map_err(|error: gates::GateError| error.to_string())
}

impl CloneSetArgs {
    /// The controller configuration these flags describe.
    #[must_use]
    pub fn config(&self) -> CloneSetConfig {
        let mut options = self.cloneset_feature_gates.options.clone();
        options.exclude_preparing_delete |= self.cloneset_scaling_exclude_preparing_delete;
        options.max_creations_per_plan = self.cloneset_max_creations_per_reconcile;
        CloneSetConfig {
            namespace: self.cloneset_namespace.clone(),
            options,
            pre_download_image: self.cloneset_feature_gates.pre_download_image,
            workers: self.cloneset_workers.max(1),
        }
    }
}

/// The CloneSet controller, registered in kruise-manager's [`ControllerSet`](super::controllers::ControllerSet).
#[derive(Clone, Debug, Default)]
pub struct CloneSetController {
    config: CloneSetConfig,
}

impl CloneSetController {
    /// A controller with `config`.
    #[must_use]
    pub fn new(config: CloneSetConfig) -> Self {
        Self { config }
    }
}

impl ManagedController for CloneSetController {
    fn name(&self) -> &str {
        "cloneset"
    }

    fn run(&self, context: ControllerContext) -> ControllerFuture {
        Box::pin(run(self.config.clone(), context))
    }
}

/// The trigger mapper of an owned kind: the owning CloneSet, counted as queued.
fn queued_owner<K: Resource>(
    shared: &Arc<Shared>,
) -> impl Fn(&K) -> Option<ObjectRef<CloneSet>> + Send + Sync + 'static {
    let shared = Arc::clone(shared);
    move |object| {
        let owner = watch::OWNER.reference_to(object)?;
        shared.queue.triggered(&reference_key(&owner));
        Some(owner)
    }
}

fn api<K>(client: &Client, namespace: Option<&str>) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    match namespace {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    }
}

/// A deleted CloneSet is not reconciled again: drop its pod facts and expectations when the watch says so.
fn forget_deleted(shared: &Shared, event: &watcher::Event<CloneSet>) {
    if let watcher::Event::Delete(cloneset) = event
        && let Some(uid) = cloneset.uid()
    {
        shared.forget_cloneset(&uid);
    }
}

async fn run(config: CloneSetConfig, context: ControllerContext) -> Result<(), ControllerError> {
    let client = context.client.clone();
    let events = context.event_sink(COMPONENT);
    let shared = Arc::new(
        Shared::new(
            client.clone(),
            events,
            config.options.clone(),
            context.metrics.clone(),
        )
        .with_pre_download_image(config.pre_download_image)
        .with_informers(&context.informers),
    );
    let namespace = config.namespace.as_deref();
    let pods = owned(
        watch::OWNER,
        &context.informers.get::<Pod>(),
        "pod",
        config.namespace.clone(),
        Arc::clone(&shared.synced.pods),
        Arc::clone(&shared),
    );
    let claims = owned(
        watch::OWNER,
        &context.informers.get::<PersistentVolumeClaim>(),
        "pvc",
        config.namespace.clone(),
        Arc::clone(&shared.synced.claims),
        Arc::clone(&shared),
    );
    let revisions = owned(
        watch::OWNER,
        &context.informers.get::<ControllerRevision>(),
        "rev",
        config.namespace.clone(),
        Arc::clone(&shared.synced.revisions),
        Arc::clone(&shared),
    );
    // The CloneSet watch is built here (not by `Controller::new`) so that its triggers count in the
    // queue depth, like those of the owned objects below.
    let (reader, writer) = reflector::store();
    let queued = Arc::clone(&shared);
    let forgetting = Arc::clone(&shared);
    let clonesets = reflector(
        writer,
        watcher(
            api::<CloneSet>(&client, namespace),
            watcher::Config::default(),
        ),
    )
    .inspect_ok(move |event| forget_deleted(&forgetting, event))
    .applied_objects()
    .inspect_ok(move |cloneset| queued.queue.triggered(&harness::object_key(cloneset)));
    tracing::info!(
        namespace = namespace.unwrap_or("(all)"),
        workers = config.workers,
        pre_download_image = config.pre_download_image,
        "CloneSet controller starting"
    );
    let completed = Arc::clone(&shared);
    let controller = Controller::for_stream(clonesets, reader)
        .with_config(Config::default().concurrency(config.workers))
        .watches_shared_stream(pods, {
            let owner = queued_owner(&shared);
            move |pod: Arc<Pod>| owner(pod.as_ref())
        })
        .watches_shared_stream(claims, {
            let owner = queued_owner(&shared);
            move |claim: Arc<PersistentVolumeClaim>| owner(claim.as_ref())
        })
        .watches_shared_stream(revisions, {
            let owner = queued_owner(&shared);
            move |revision: Arc<ControllerRevision>| owner(revision.as_ref())
        });
    harness::drive_with(
        controller,
        harness::Driver::from(&context),
        reconcile::reconcile,
        Arc::clone(&shared),
        |key| completed.queue.finished(key),
    )
    .await;
    shared.queue.clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use axum::http::{Request, Response};
    use serde_json::json;

    use super::*;
    use crate::metrics::Metrics;

    /// A client whose API server answers 404 to everything (the mappers never call it).
    fn offline_client() -> Client {
        let service = tower::service_fn(|_: Request<kube::client::Body>| async {
            Ok::<_, std::convert::Infallible>(
                Response::builder()
                    .status(404)
                    .body(kube::client::Body::empty())
                    .unwrap(),
            )
        });
        Client::new(service, "default")
    }

    #[tokio::test]
    async fn owned_object_events_count_their_cloneset_as_queued() {
        let metrics = Metrics::new();
        let shared = Arc::new(Shared::new(
            offline_client(),
            events::EventSink::disabled(),
            Options::default(),
            metrics.controller("cloneset"),
        ));
        let pod = |name: &str, owner: &str| -> Pod {
            serde_json::from_value(json!({"metadata": {"name": name, "namespace": "ns",
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": owner,
                    "name": "web", "uid": "cs-uid", "controller": true}]}}))
            .unwrap()
        };
        let map = queued_owner::<Pod>(&shared);
        let owner = map(&pod("web-a", "CloneSet")).unwrap();
        assert_eq!(reference_key(&owner), "ns/web");
        assert!(map(&pod("web-b", "CloneSet")).is_some());
        assert!(map(&pod("other", "StatefulSet")).is_none());
        assert_eq!(shared.queue.depth(), 1, "two events for one CloneSet");
        let cloneset: CloneSet = serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"selector": {}, "template": {}},
        }))
        .unwrap();
        assert_eq!(
            harness::object_key(&cloneset),
            reference_key(&owner),
            "the same key"
        );
        assert!(
            metrics
                .encode()
                .contains("kruise_manager_queue_depth{controller=\"cloneset\"} 1")
        );
        shared.queue.started(&harness::object_key(&cloneset));
        shared.queue.finished(&harness::object_key(&cloneset));
        assert!(
            metrics
                .encode()
                .contains("kruise_manager_queue_depth{controller=\"cloneset\"} 0")
        );
    }

    #[tokio::test]
    async fn a_deleted_clonesets_pod_facts_are_dropped() {
        let shared = Shared::new(
            offline_client(),
            events::EventSink::disabled(),
            Options::default(),
            Metrics::new().controller("cloneset"),
        );
        let cloneset = |uid: &str| -> CloneSet {
            serde_json::from_value(json!({
                "metadata": {"name": "web", "namespace": "ns", "uid": uid},
                "spec": {"selector": {}, "template": {}},
            }))
            .unwrap()
        };
        let mut facts = shared.take_pod_facts("a");
        facts.apply(Pod::default());
        shared.keep_pod_facts("a", facts);
        shared.keep_pod_facts("b", kruise_schedule::cloneset::PodFactsCache::new());
        assert_eq!(
            shared.take_pod_facts("a").len(),
            1,
            "kept between reconciles"
        );
        shared.keep_pod_facts("a", shared.take_pod_facts("a"));
        forget_deleted(&shared, &watcher::Event::Apply(cloneset("a")));
        assert_eq!(shared.kept_pod_facts(), 2, "an update keeps them");
        forget_deleted(&shared, &watcher::Event::Delete(cloneset("a")));
        assert_eq!(shared.kept_pod_facts(), 1, "a delete drops them");
        assert!(shared.take_pod_facts("a").is_empty());
    }

    #[test]
    fn the_gate_flag_reaches_the_config() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            cloneset: CloneSetArgs,
        }
        let parse = |args: &[&str]| {
            <Cli as clap::Parser>::try_parse_from(
                std::iter::once("kruise-manager").chain(args.iter().copied()),
            )
            .map(|cli| cli.cloneset.config())
        };
        let default = parse(&[]).unwrap();
        assert!(!default.pre_download_image, "off by default, as upstream");
        let on = parse(&[
            "--cloneset-feature-gates=PreDownloadImageForInPlaceUpdate=true,CloneSetShortHash=true",
        ])
        .unwrap();
        assert!(on.pre_download_image && on.options.short_hash);
        assert!(parse(&["--cloneset-feature-gates=Nope=true"]).is_err());
        assert_eq!(
            default.options.max_creations_per_plan,
            DEFAULT_MAX_CREATIONS_PER_PLAN
        );
        let capped = parse(&["--cloneset-max-creations-per-reconcile=7"]).unwrap();
        assert_eq!(capped.options.max_creations_per_plan, 7);
        assert!(parse(&["--cloneset-max-creations-per-reconcile=0"]).is_err());
    }
}
