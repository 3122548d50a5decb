//! The Advanced StatefulSet controller of kruise-manager: a kube-runtime `Controller` over v1beta1
//! StatefulSets of `apps.kruise.io` (the storage version; v1alpha1 objects are the same objects through
//! the conversion webhook) that owns pods and ControllerRevisions, creates the pods' claims, and runs
//! upstream's reconcile with the sans-IO planner of `kruise_schedule::statefulset`.
//!
//! * [`watch`]: pods and revisions come from the process's shared informers, found by an index of the
//!   controlling StatefulSet's UID; claims are looked up by name; every pod or revision change satisfies
//!   expectations and triggers the owning StatefulSet.
//! * [`reconcile`]: observe, settle the [`revisions`], plan, [`execute`], write the [`status`].
//! * [`request`]: the patches each pod action becomes, each conditional on the `resourceVersion` the plan
//!   was made from (409 means decide again, never overwrite).
//! * [`events`]: upstream's Event reasons (`SuccessfulCreate`, `SuccessfulDelete`, `SuccessfulUpdate`,
//!   `SuccessfulUpdatePodInPlace`, the `Failed*` ones), and kruise-rs's `InvalidSpec`.
//! * [`context`]: the shared state, with the expectations that keep a reconcile from acting twice on a
//!   cache that has not caught up with its own writes.
//!
//! ```no_run
//! use kruise_manager::statefulset::{StatefulSetConfig, StatefulSetController};
//! use kruise_runtime::controllers::ControllerSet;
//!
//! let mut controllers = ControllerSet::new();
//! controllers.register(StatefulSetController::new(StatefulSetConfig::default()));
//! assert_eq!(controllers.names(), ["statefulset"]);
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
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::StatefulSet;
use kruise_schedule::statefulset::Options;

use crate::options::FeatureGates;
use kube::ResourceExt;

use self::context::Shared;
use self::events::COMPONENT;
use crate::workload::controller::{WorkloadController, WorkloadState};

use super::controllers::{ControllerContext, ControllerError, ControllerFuture, ManagedController};

pub use self::error::ReconcileError;

/// How the Advanced StatefulSet controller runs.
#[derive(Clone, Debug)]
pub struct StatefulSetConfig {
    /// Watch only this namespace (default: all).
    pub namespace: Option<String>,
    /// Upstream's feature gates that change decisions.
    pub options: Options,
    /// StatefulSets reconciled at the same time (upstream `--statefulset-workers`, default 3).
    pub workers: u16,
}

impl Default for StatefulSetConfig {
    fn default() -> Self {
        Self {
            namespace: None,
            options: Options::default(),
            workers: 3,
        }
    }
}

/// The Advanced StatefulSet controller's flags of kruise-manager.
#[derive(Clone, Debug, clap::Args)]
pub struct StatefulSetArgs {
    /// Advanced StatefulSets reconciled at the same time.
    #[arg(long, default_value_t = 3)]
    pub statefulset_workers: u16,
    /// Watch Advanced StatefulSets and their pods in this namespace only (default: all namespaces).
    #[arg(long)]
    pub statefulset_namespace: Option<String>,
    /// Upstream feature gates of the Advanced StatefulSet controller, `Name=true|false,...`
    /// (`StatefulSetStartOrdinal` off, `PodIndexLabel` on, `StatefulSetAutoDeletePVC` on,
    /// `PreparingUpdateAsUpdate` off, `InPlaceUpdateEnvFromMetadata`, `InPlaceWorkloadVerticalScaling`,
    /// `RecreatePodWhenChangeVCTInCloneSetGate`).
    /// `StatefulSetAutoResizePVCGate` (off) expands claims with `volumeClaimUpdateStrategy: OnPodRollingUpdate`.
    /// `--feature-gates` takes them too; these settings win.
    #[arg(long, default_value = "", value_parser = checked_gates)]
    pub statefulset_feature_gates: String,
}

fn parse_gates(text: &str) -> Result<Options, String> {
    Options::default()
        .with_feature_gates(text)
        .map_err(|error| error.to_string())
}

fn checked_gates(text: &str) -> Result<String, String> {
    parse_gates(text).map(|_| text.to_owned())
}

impl StatefulSetArgs {
    /// The controller configuration these flags describe, with the Advanced StatefulSet gates of the
    /// manager's `--feature-gates` (`manager_gates`) under this controller's own.
    ///
    /// # Errors
    /// `--statefulset-feature-gates` does not parse (only when these arguments were not made by clap).
    pub fn config(&self, manager_gates: &FeatureGates) -> Result<StatefulSetConfig, String> {
        let list = manager_gates.list_for(&Options::GATE_NAMES, &self.statefulset_feature_gates);
        Ok(StatefulSetConfig {
            namespace: self.statefulset_namespace.clone(),
            options: parse_gates(&list)?,
            workers: self.statefulset_workers.max(1),
        })
    }
}

/// The Advanced StatefulSet controller, registered in kruise-manager's
/// [`ControllerSet`](super::controllers::ControllerSet).
#[derive(Clone, Debug, Default)]
pub struct StatefulSetController {
    config: StatefulSetConfig,
}

impl StatefulSetController {
    /// A controller with `config`.
    #[must_use]
    pub fn new(config: StatefulSetConfig) -> Self {
        Self { config }
    }
}

impl ManagedController for StatefulSetController {
    fn name(&self) -> &str {
        "statefulset"
    }

    fn run(&self, context: ControllerContext) -> ControllerFuture {
        Box::pin(run(self.config.clone(), context))
    }
}

impl WorkloadState for Shared {
    type Owner = StatefulSet;

    /// Drops the StatefulSet's expectations and invalid spec reports.
    fn forget_deleted(&self, set: &StatefulSet) {
        if let Some(uid) = set.uid() {
            self.forget_statefulset(&uid);
        }
    }
}

async fn run(config: StatefulSetConfig, context: ControllerContext) -> Result<(), ControllerError> {
    let shared = Arc::new(Shared::new(
        context.client.clone(),
        &context.informers,
        context.event_sink(COMPONENT),
        config.options.clone(),
        context.metrics.clone(),
    ));
    tracing::info!(
        namespace = config.namespace.as_deref().unwrap_or("(all)"),
        workers = config.workers,
        gates = %config.options,
        "Advanced StatefulSet controller starting"
    );
    let namespace = config.namespace;
    // Claims (bound, expanded, growing): `status.volumeClaims` and `OnPodRollingUpdate` follow them.
    let claims_namespace = namespace.clone();
    WorkloadController::new(watch::OWNER, &context, namespace, &shared.expectations)
        .owns::<Pod>("pod", &shared.synced.pods)
        .owns::<ControllerRevision>("rev", &shared.synced.revisions)
        .triggers_named_owners(shared.claims.objects(), move |claim| {
            watch::claim_owners(claim, claims_namespace.as_deref())
        })
        .run(config.workers, reconcile::reconcile, shared)
        .await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gate_flag_reaches_the_config() {
        #[derive(clap::Parser)]
        struct Cli {
            #[arg(long, value_parser = crate::options::parse_feature_gates, default_value = "")]
            feature_gates: crate::options::FeatureGates,
            #[command(flatten)]
            statefulset: StatefulSetArgs,
        }
        let parse = |args: &[&str]| {
            <Cli as clap::Parser>::try_parse_from(
                std::iter::once("kruise-manager").chain(args.iter().copied()),
            )
            .map_err(|error| error.to_string())
            .and_then(|cli| cli.statefulset.config(&cli.feature_gates))
        };
        let default = parse(&[]).unwrap();
        assert_eq!(default.options, Options::default());
        assert_eq!((default.workers, default.namespace), (3, None));
        let set = parse(&[
            "--statefulset-feature-gates=StatefulSetStartOrdinal=true",
            "--statefulset-namespace=apps",
            "--statefulset-workers=0",
        ])
        .unwrap();
        assert!(set.options.start_ordinal);
        assert_eq!(set.namespace.as_deref(), Some("apps"));
        assert_eq!(set.workers, 1, "at least one worker");
        let error = parse(&["--statefulset-feature-gates=Nope=true"])
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("Nope"), "{error}");
        // Upstream's one list reaches this controller too; its own flag wins.
        let set = parse(&["--feature-gates=StatefulSetStartOrdinal=true"]).unwrap();
        assert!(set.options.start_ordinal);
        let set = parse(&[
            "--feature-gates=StatefulSetStartOrdinal=true",
            "--statefulset-feature-gates=StatefulSetStartOrdinal=false",
        ])
        .unwrap();
        assert!(!set.options.start_ordinal, "the controller's own flag wins");
    }
}
