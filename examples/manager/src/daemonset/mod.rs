//! The Advanced DaemonSet controller of kruise-manager: a kube-runtime `Controller` over v1beta1
//! DaemonSets of `apps.kruise.io` (the storage version) that owns pods and ControllerRevisions, reads every
//! Node, and runs upstream's DaemonSet reconcile with the sans-IO planner of `kruise_schedule::daemonset`:
//! one pod per node that should run it (node selector, required node affinity, taints against the
//! tolerations plus the default daemon tolerations), the rolling update (`Standard`, `maxSurge`,
//! `InPlaceIfPossible`) limited by `partition`, `paused` and the node `selector`, `minReadySeconds`, the
//! preDelete lifecycle hook, revisions and status.
//!
//! * [`watch`]: pods and revisions come from the process's shared informers, found by an index of the
//!   controlling DaemonSet's UID; every change satisfies expectations and triggers the owning DaemonSet. A
//!   node change that can move a daemon pod (labels, taints, `unschedulable`, a node added or removed)
//!   triggers every DaemonSet.
//! * [`reconcile`]: observe, settle the [`revisions`], plan, [`execute`], write the [`status`].
//! * [`request`]: the patches each pod action becomes, each conditional on the `resourceVersion` the plan
//!   was made from (409 means decide again, never overwrite).
//! * [`events`]: upstream's Event reasons (`SuccessfulCreate`, `SuccessfulDelete`,
//!   `SuccessfulUpdatePodInPlace`, the `Failed*` ones, `SelectingAll`).
//! * [`context`]: the shared state, with the expectations that keep a reconcile from acting twice on a
//!   cache that has not caught up with its own writes.
//!
//! Pods are created for their node: the planner replaces the template's required node affinity by the
//! single term `metadata.name In [node]` (as upstream and Kubernetes' DaemonSet controller do), so the
//! scheduler binds each pod to its node. Orphan pods matching the selector are not adopted.
//!
//! ```no_run
//! use kruise_manager::daemonset::{DaemonSetConfig, DaemonSetController};
//! use kruise_runtime::controllers::ControllerSet;
//!
//! let mut controllers = ControllerSet::new();
//! controllers.register(DaemonSetController::new(DaemonSetConfig::default()));
//! assert_eq!(controllers.names(), ["daemonset"]);
//! ```

pub mod context;
pub mod error;
pub mod events;
pub mod execute;
pub mod reconcile;
pub mod request;
pub mod revisions;
pub mod status;
pub mod watch;

use std::sync::Arc;

use futures::TryStreamExt;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_api::apps::v1beta1::DaemonSet;
use kruise_api::feature_gate::FeatureGateSet;
use kruise_inplace::FeatureGates;
use kruise_schedule::daemonset::Options;
use kube::runtime::Controller;
use kube::runtime::controller::Config;
use kube::runtime::reflector::{self, ObjectRef, Store, reflector};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};

use self::context::Shared;
use self::events::COMPONENT;
use crate::workload::watch::owned;
use kruise_runtime::harness::{self, reference_key};

use super::controllers::{ControllerContext, ControllerError, ControllerFuture, ManagedController};

pub use self::error::ReconcileError;

/// How the Advanced DaemonSet controller runs.
#[derive(Clone, Debug)]
pub struct DaemonSetConfig {
    /// Watch only this namespace (default: all).
    pub namespace: Option<String>,
    /// Upstream's feature gates that change decisions (the in-place update gates).
    pub options: Options,
    /// DaemonSets reconciled at the same time (upstream `--daemonset-workers`, default 3).
    pub workers: u16,
}

impl Default for DaemonSetConfig {
    fn default() -> Self {
        Self {
            namespace: None,
            options: Options::default(),
            workers: 3,
        }
    }
}

/// The Advanced DaemonSet controller's flags of kruise-manager.
#[derive(Clone, Debug, clap::Args)]
pub struct DaemonSetArgs {
    /// Advanced DaemonSets reconciled at the same time.
    #[arg(long, default_value_t = 3)]
    pub daemonset_workers: u16,
    /// Watch Advanced DaemonSets and their pods in this namespace only (default: all namespaces; nodes are
    /// always read cluster-wide).
    #[arg(long)]
    pub daemonset_namespace: Option<String>,
    /// Upstream in-place update gates of the Advanced DaemonSet controller, `Name=true|false,...`
    /// (`InPlaceUpdateEnvFromMetadata` (default true), `InPlaceWorkloadVerticalScaling`).
    #[arg(long, default_value = "", value_parser = parse_gates)]
    pub daemonset_feature_gates: FeatureGates,
}

fn parse_gates(text: &str) -> Result<FeatureGates, String> {
    let mut gates = FeatureGates::default();
    gates
        .apply_feature_gates(text)
        .map_err(|error| error.to_string())?;
    Ok(gates)
}

impl DaemonSetArgs {
    /// The controller configuration these flags describe.
    #[must_use]
    pub fn config(&self) -> DaemonSetConfig {
        DaemonSetConfig {
            namespace: self.daemonset_namespace.clone(),
            options: Options::default().with_in_place(self.daemonset_feature_gates),
            workers: self.daemonset_workers.max(1),
        }
    }
}

/// The Advanced DaemonSet controller, registered in kruise-manager's
/// [`ControllerSet`](super::controllers::ControllerSet).
#[derive(Clone, Debug, Default)]
pub struct DaemonSetController {
    config: DaemonSetConfig,
}

impl DaemonSetController {
    /// A controller with `config`.
    #[must_use]
    pub fn new(config: DaemonSetConfig) -> Self {
        Self { config }
    }
}

impl ManagedController for DaemonSetController {
    fn name(&self) -> &str {
        "daemonset"
    }

    fn run(&self, context: ControllerContext) -> ControllerFuture {
        Box::pin(run(self.config.clone(), context))
    }
}

/// The trigger mapper of an owned kind: the owning DaemonSet, counted as queued.
fn queued_owner<K: Resource>(
    shared: &Arc<Shared>,
) -> impl Fn(&K) -> Option<ObjectRef<DaemonSet>> + Send + Sync + 'static {
    let shared = Arc::clone(shared);
    move |object| {
        let owner = watch::OWNER.reference_to(object)?;
        shared.queue.triggered(&reference_key(&owner));
        Some(owner)
    }
}

/// The trigger mapper of nodes: every DaemonSet, counted as queued.
fn every_daemonset(
    shared: &Arc<Shared>,
    daemonsets: Store<DaemonSet>,
) -> impl Fn(Arc<Node>) -> Vec<ObjectRef<DaemonSet>> + Send + Sync + 'static {
    let shared = Arc::clone(shared);
    move |_node| {
        daemonsets
            .state()
            .iter()
            .map(|daemonset| {
                let reference = ObjectRef::from_obj(daemonset.as_ref());
                shared.queue.triggered(&reference_key(&reference));
                reference
            })
            .collect()
    }
}

fn api(client: &Client, namespace: Option<&str>) -> Api<DaemonSet> {
    match namespace {
        Some(namespace) => Api::namespaced(client.clone(), namespace),
        None => Api::all(client.clone()),
    }
}

/// A deleted DaemonSet is not reconciled again: drop its expectations (and the version of its last status
/// write) when the watch says so.
fn forget_deleted(shared: &Shared, event: &watcher::Event<DaemonSet>) {
    if let watcher::Event::Delete(daemonset) = event {
        shared.forget_version(&crate::workload::owner::expectation_key("ds", daemonset));
        if let Some(uid) = daemonset.uid() {
            shared.forget(&uid);
        }
    }
}

async fn run(config: DaemonSetConfig, context: ControllerContext) -> Result<(), ControllerError> {
    let client = context.client.clone();
    let shared = Arc::new(Shared::new(
        client.clone(),
        &context.informers,
        context.event_sink(COMPONENT),
        config.options.clone(),
        context.metrics.clone(),
    ));
    let pods = owned(
        watch::OWNER,
        &context.informers.get::<Pod>(),
        "pod",
        config.namespace.clone(),
        Arc::clone(&shared.synced.pods),
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
    let nodes = watch::node_changes(
        &context.informers.get::<Node>(),
        Arc::clone(&shared.synced.nodes),
    );
    // The DaemonSet watch is built here (not by `Controller::new`) so that its triggers count in the
    // queue depth, like those of the owned objects and nodes.
    let (reader, writer) = reflector::store();
    let queued = Arc::clone(&shared);
    let forgetting = Arc::clone(&shared);
    let daemonsets = reflector(
        writer,
        watcher(
            api(&client, config.namespace.as_deref()),
            watcher::Config::default(),
        ),
    )
    .inspect_ok(move |event| forget_deleted(&forgetting, event))
    .applied_objects()
    .inspect_ok(move |daemonset| queued.queue.triggered(&harness::object_key(daemonset)));
    tracing::info!(
        namespace = config.namespace.as_deref().unwrap_or("(all)"),
        workers = config.workers,
        "Advanced DaemonSet controller starting"
    );
    let completed = Arc::clone(&shared);
    let controller = Controller::for_stream(daemonsets, reader.clone())
        .with_config(Config::default().concurrency(config.workers))
        .watches_shared_stream(pods, {
            let owner = queued_owner(&shared);
            move |pod: Arc<Pod>| owner(pod.as_ref())
        })
        .watches_shared_stream(revisions, {
            let owner = queued_owner(&shared);
            move |revision: Arc<ControllerRevision>| owner(revision.as_ref())
        })
        .watches_shared_stream(nodes, every_daemonset(&shared, reader));
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

    fn daemonset(name: &str) -> DaemonSet {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns", "uid": format!("{name}-uid")},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": {}},
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn owned_pods_trigger_their_daemonset_and_nodes_trigger_every_one() {
        let metrics = Metrics::new();
        let shared = Arc::new(Shared::offline(
            offline_client(),
            events::EventSink::disabled(),
            metrics.controller("daemonset"),
        ));
        let pod = |owner_api: &str| -> Pod {
            serde_json::from_value(json!({"metadata": {"name": "agent-x", "namespace": "ns",
                "ownerReferences": [{"apiVersion": owner_api, "kind": "DaemonSet",
                    "name": "agent", "uid": "agent-uid", "controller": true}]}}))
            .unwrap()
        };
        let owner = queued_owner::<Pod>(&shared);
        let reference = owner(&pod("apps.kruise.io/v1alpha1")).unwrap();
        assert_eq!(reference_key(&reference), "ns/agent");
        assert!(
            owner(&pod("apps/v1")).is_none(),
            "an apps/v1 DaemonSet's pod"
        );
        assert_eq!(shared.queue.depth(), 1);

        let (reader, mut writer) = reflector::store::<DaemonSet>();
        for name in ["agent", "logs"] {
            writer.apply_watcher_event(&watcher::Event::Apply(daemonset(name)));
        }
        let every = every_daemonset(&shared, reader);
        let mut triggered: Vec<String> = every(Arc::new(Node::default()))
            .iter()
            .map(reference_key)
            .collect();
        triggered.sort();
        assert_eq!(triggered, ["ns/agent", "ns/logs"]);
        assert_eq!(shared.queue.depth(), 2, "agent once, logs once");
        assert!(
            metrics
                .encode()
                .contains("kruise_manager_queue_depth{controller=\"daemonset\"} 2")
        );
    }

    #[tokio::test]
    async fn a_deleted_daemonsets_expectations_are_dropped() {
        let shared = Shared::offline(
            offline_client(),
            events::EventSink::disabled(),
            Metrics::new().controller("daemonset"),
        );
        shared.expect(
            "agent-uid",
            crate::expectations::Operation::Create,
            "pod/ns/agent-x",
        );
        assert!(!shared.satisfied("agent-uid").0);
        forget_deleted(&shared, &watcher::Event::Apply(daemonset("agent")));
        assert!(!shared.satisfied("agent-uid").0, "an update keeps them");
        forget_deleted(&shared, &watcher::Event::Delete(daemonset("agent")));
        assert!(shared.satisfied("agent-uid").0, "a delete drops them");
    }

    #[test]
    fn the_flags_reach_the_config() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            daemonset: DaemonSetArgs,
        }
        let parse = |args: &[&str]| {
            <Cli as clap::Parser>::try_parse_from(
                std::iter::once("kruise-manager").chain(args.iter().copied()),
            )
            .map(|cli| cli.daemonset.config())
        };
        let default = parse(&[]).unwrap();
        assert_eq!(default.workers, 3);
        assert!(default.namespace.is_none());
        assert_eq!(default.options, Options::default());
        let set = parse(&[
            "--daemonset-workers=0",
            "--daemonset-namespace=agents",
            "--daemonset-feature-gates=InPlaceWorkloadVerticalScaling=true",
        ])
        .unwrap();
        assert_eq!(set.workers, 1, "at least one worker");
        assert_eq!(set.namespace.as_deref(), Some("agents"));
        assert!(set.options.in_place.in_place_workload_vertical_scaling);
        let error = parse(&["--daemonset-feature-gates=NoSuchGate=true"])
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("NoSuchGate"), "{error}");
    }
}
