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

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_api::apps::v1beta1::DaemonSet;
use kruise_api::feature_gate::FeatureGateSet;
use kruise_inplace::FeatureGates;
use kruise_schedule::daemonset::Options;
use kube::ResourceExt;

use self::context::Shared;
use self::events::COMPONENT;
use crate::options::FeatureGates as ManagerGates;
use crate::workload::controller::{WorkloadController, WorkloadState};
use crate::workload::owner::expectation_key;

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
    /// `--feature-gates` takes them too; these settings win.
    #[arg(long, default_value = "", value_parser = checked_gates)]
    pub daemonset_feature_gates: String,
}

fn parse_gates(text: &str) -> Result<FeatureGates, String> {
    let mut gates = FeatureGates::default();
    gates
        .apply_feature_gates(text)
        .map_err(|error| error.to_string())?;
    Ok(gates)
}

fn checked_gates(text: &str) -> Result<String, String> {
    parse_gates(text).map(|_| text.to_owned())
}

impl DaemonSetArgs {
    /// The controller configuration these flags describe, with the in-place gates of the manager's
    /// `--feature-gates` (`manager_gates`) under this controller's own.
    ///
    /// # Errors
    /// `--daemonset-feature-gates` does not parse (only when these arguments were not made by clap).
    pub fn config(&self, manager_gates: &ManagerGates) -> Result<DaemonSetConfig, String> {
        let list = manager_gates.list_for(&FeatureGates::NAMES, &self.daemonset_feature_gates);
        Ok(DaemonSetConfig {
            namespace: self.daemonset_namespace.clone(),
            options: Options::default().with_in_place(parse_gates(&list)?),
            workers: self.daemonset_workers.max(1),
        })
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

impl WorkloadState for Shared {
    type Owner = DaemonSet;

    /// Drops the DaemonSet's expectations and the version of its last status write.
    fn forget_deleted(&self, daemonset: &DaemonSet) {
        self.expectations
            .forget_version(&expectation_key("ds", daemonset));
        if let Some(uid) = daemonset.uid() {
            self.expectations.forget(&uid);
        }
    }
}

async fn run(config: DaemonSetConfig, context: ControllerContext) -> Result<(), ControllerError> {
    let shared = Arc::new(Shared::new(
        context.client.clone(),
        &context.informers,
        context.event_sink(COMPONENT),
        config.options.clone(),
    ));
    let nodes = watch::node_changes(
        &context.informers.get::<Node>(),
        Arc::clone(&shared.synced.nodes),
    );
    tracing::info!(
        namespace = config.namespace.as_deref().unwrap_or("(all)"),
        workers = config.workers,
        "Advanced DaemonSet controller starting"
    );
    let namespace = config.namespace;
    WorkloadController::new(watch::OWNER, &context, namespace, &shared.expectations)
        .owns::<Pod>("pod", &shared.synced.pods)
        .owns::<ControllerRevision>("rev", &shared.synced.revisions)
        .triggers_every_owner(nodes)
        .run(config.workers, reconcile::reconcile, shared)
        .await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::workload::offline_client::offline_client;

    fn daemonset(name: &str) -> DaemonSet {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": "ns", "uid": format!("{name}-uid")},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": {}},
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn a_deleted_daemonsets_expectations_are_dropped() {
        let shared = Shared::offline(offline_client(), events::EventSink::disabled());
        let agent = daemonset("agent");
        let own_key = expectation_key("ds", &agent);
        shared.expectations.expect(
            "agent-uid",
            crate::expectations::Operation::Create,
            "pod/ns/agent-x",
        );
        shared.expectations.expect_version(&own_key, "7");
        assert!(!shared.expectations.satisfied("agent-uid").0);
        shared.forget_deleted(&agent);
        assert!(
            shared.expectations.satisfied("agent-uid").0,
            "a delete drops them"
        );
        assert!(
            shared.expectations.version_satisfied(&own_key, "1"),
            "and the version of its last status write"
        );
    }

    #[test]
    fn the_flags_reach_the_config() {
        #[derive(clap::Parser)]
        struct Cli {
            #[arg(long, value_parser = crate::options::parse_feature_gates, default_value = "")]
            feature_gates: crate::options::FeatureGates,
            #[command(flatten)]
            daemonset: DaemonSetArgs,
        }
        let parse = |args: &[&str]| {
            <Cli as clap::Parser>::try_parse_from(
                std::iter::once("kruise-manager").chain(args.iter().copied()),
            )
            .map_err(|error| error.to_string())
            .and_then(|cli| cli.daemonset.config(&cli.feature_gates))
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
        // Upstream's one list reaches this controller too; its own flag wins.
        let set = parse(&["--feature-gates=InPlaceWorkloadVerticalScaling=true"]).unwrap();
        assert!(set.options.in_place.in_place_workload_vertical_scaling);
        let set = parse(&[
            "--feature-gates=InPlaceWorkloadVerticalScaling=true",
            "--daemonset-feature-gates=InPlaceWorkloadVerticalScaling=false",
        ])
        .unwrap();
        assert!(
            !set.options.in_place.in_place_workload_vertical_scaling,
            "the controller's own flag wins"
        );
    }
}
