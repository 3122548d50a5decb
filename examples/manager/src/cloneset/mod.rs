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

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kruise_api::apps::v1beta1::CloneSet;
use kruise_schedule::cloneset::{DEFAULT_MAX_CREATIONS_PER_PLAN, Options};
use kube::ResourceExt;

use self::context::Shared;
use self::events::COMPONENT;
use self::gates::CloneSetGates;
use crate::options::FeatureGates;
use crate::workload::controller::{WorkloadController, WorkloadState};

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
    /// Gate `PodUnavailableBudgetUpdateGate` of `--feature-gates` (default off): spend a unit of the pod's
    /// PodUnavailableBudget before each in-place update, and wait when there is none.
    pub pod_unavailable_budget_update: bool,
}

impl Default for CloneSetConfig {
    fn default() -> Self {
        Self {
            namespace: None,
            options: Options::default(),
            pre_download_image: false,
            workers: 3,
            pod_unavailable_budget_update: false,
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
    /// `RecreatePodWhenChangeVCTInCloneSetGate`, `PreDownloadImageForInPlaceUpdate`), all off by default
    /// but `InPlaceUpdateEnvFromMetadata`. `--feature-gates` takes them too; these settings win.
    #[arg(long, default_value = "", value_parser = checked_gates)]
    pub cloneset_feature_gates: String,
}

fn parse_gates(text: &str) -> Result<CloneSetGates, String> {
    text.parse()
        .map_err(|error: gates::GateError| error.to_string())
}

fn checked_gates(text: &str) -> Result<String, String> {
    parse_gates(text).map(|_| text.to_owned())
}

impl CloneSetArgs {
    /// The controller configuration these flags describe, with the CloneSet gates of the manager's
    /// `--feature-gates` (`manager_gates`) under this controller's own.
    ///
    /// # Errors
    /// `--cloneset-feature-gates` does not parse (only when these arguments were not made by clap, which
    /// checks it).
    pub fn config(&self, manager_gates: &FeatureGates) -> Result<CloneSetConfig, String> {
        let gates =
            parse_gates(&manager_gates.list_for(&gates::GATE_NAMES, &self.cloneset_feature_gates))?;
        let mut options = gates.options;
        options.exclude_preparing_delete |= self.cloneset_scaling_exclude_preparing_delete;
        options.max_creations_per_plan = self.cloneset_max_creations_per_reconcile;
        Ok(CloneSetConfig {
            namespace: self.cloneset_namespace.clone(),
            options,
            pre_download_image: gates.pre_download_image,
            workers: self.cloneset_workers.max(1),
            pod_unavailable_budget_update: manager_gates.pod_unavailable_budget_update,
        })
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

impl WorkloadState for Shared {
    type Owner = CloneSet;

    /// Drops the CloneSet's pod facts and expectations.
    fn forget_deleted(&self, cloneset: &CloneSet) {
        if let Some(uid) = cloneset.uid() {
            self.forget_cloneset(&uid);
        }
    }
}

async fn run(config: CloneSetConfig, context: ControllerContext) -> Result<(), ControllerError> {
    let mut state = Shared::new(
        context.client.clone(),
        context.event_sink(COMPONENT),
        config.options.clone(),
        context.metrics.clone(),
    )
    .with_pre_download_image(config.pre_download_image)
    .with_informers(&context.informers);
    if config.pod_unavailable_budget_update {
        state = state.with_pod_unavailable_budget(&context.informers);
    }
    let shared = Arc::new(state);
    tracing::info!(
        namespace = config.namespace.as_deref().unwrap_or("(all)"),
        workers = config.workers,
        pre_download_image = config.pre_download_image,
        "CloneSet controller starting"
    );
    let namespace = config.namespace;
    WorkloadController::new(watch::OWNER, &context, namespace, &shared.expectations)
        .owns::<Pod>("pod", &shared.synced.pods)
        .owns::<PersistentVolumeClaim>("pvc", &shared.synced.claims)
        .owns::<ControllerRevision>("rev", &shared.synced.revisions)
        .run(config.workers, reconcile::reconcile, shared)
        .await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::metrics::Metrics;
    use crate::workload::offline_client::offline_client;

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
        assert_eq!(shared.kept_pod_facts(), 2);
        shared.forget_deleted(&cloneset("a"));
        assert_eq!(shared.kept_pod_facts(), 1, "a delete drops them");
        assert!(shared.take_pod_facts("a").is_empty());
    }

    #[test]
    fn the_gate_flags_reach_the_config() {
        #[derive(clap::Parser)]
        struct Cli {
            #[arg(long, value_parser = crate::options::parse_feature_gates, default_value = "")]
            feature_gates: FeatureGates,
            #[command(flatten)]
            cloneset: CloneSetArgs,
        }
        let parse = |args: &[&str]| {
            <Cli as clap::Parser>::try_parse_from(
                std::iter::once("kruise-manager").chain(args.iter().copied()),
            )
            .map_err(|error| error.to_string())
            .and_then(|cli| cli.cloneset.config(&cli.feature_gates))
        };
        let default = parse(&[]).unwrap();
        assert!(!default.pre_download_image, "off by default, as upstream");
        let on = parse(&[
            "--cloneset-feature-gates=PreDownloadImageForInPlaceUpdate=true,CloneSetShortHash=true",
        ])
        .unwrap();
        assert!(on.pre_download_image && on.options.short_hash);
        assert!(parse(&["--cloneset-feature-gates=Nope=true"]).is_err());

        // Upstream's one list reaches the CloneSet controller; its own flag wins.
        let shared = parse(&[
            "--feature-gates=CloneSetShortHash=true,PreDownloadImageForInPlaceUpdate=true,\
             PodUnavailableBudgetUpdateGate=true,StatefulSetStartOrdinal=true",
        ])
        .unwrap();
        assert!(shared.options.short_hash && shared.pre_download_image);
        assert!(shared.pod_unavailable_budget_update);
        let overridden = parse(&[
            "--feature-gates=CloneSetShortHash=true",
            "--cloneset-feature-gates=CloneSetShortHash=false",
        ])
        .unwrap();
        assert!(
            !overridden.options.short_hash,
            "the controller's own flag wins"
        );

        assert_eq!(
            default.options.max_creations_per_plan,
            DEFAULT_MAX_CREATIONS_PER_PLAN
        );
        let capped = parse(&["--cloneset-max-creations-per-reconcile=7"]).unwrap();
        assert_eq!(capped.options.max_creations_per_plan, 7);
        assert!(parse(&["--cloneset-max-creations-per-reconcile=0"]).is_err());
    }
}
