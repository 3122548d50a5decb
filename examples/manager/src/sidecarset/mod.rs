//! The SidecarSet controller of kruise-manager: a kube-runtime `Controller` over v1beta1 SidecarSets that
//! keeps their hash annotations, ControllerRevisions and status, and upgrades the sidecars of the pods they
//! injected (cold in-place upgrades within `partition` / `maxUnavailable` / `selector` / priority /
//! scatter / `paused`, hot upgrade's upgrade → migration → reset, `SidecarSetUpgradable`), deciding with
//! [`kruise_sidecar::plan()`].
//!
//! * [`pod_index`]: the compact facts of the pods, found by the SidecarSets that injected them, following
//!   the shared pod informer (no full scans per reconcile, each pod version read once); a pod change
//!   triggers exactly those SidecarSets, once the index holds it.
//! * [`reconcile`]: hashes, plan, revisions, status, pod patches with optimistic concurrency.
//! * [`events`]: the Events it records.
//!
//! ControllerRevisions live in the manager's namespace (upstream's); the controller finds them through
//! the shared ControllerRevision informer by their `kruise.io/sidecarset-name` label.
//!
//! ```no_run
//! use kruise_runtime::controllers::ControllerSet;
//! use kruise_manager::sidecarset::SidecarSetController;
//!
//! let mut controllers = ControllerSet::new();
//! controllers.register(SidecarSetController::new("kruise-system"));
//! assert_eq!(controllers.names(), ["sidecarset"]);
//! ```

pub mod events;
pub mod pod_index;
pub mod reconcile;

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_api::keys::sidecarset::NAME_LABEL;
use kube::ResourceExt;
use kube::runtime::Controller;
use kube::runtime::reflector::ObjectRef;

use self::pod_index::{InjectedPodIndex, injected_sidecarsets};
use self::reconcile::{Shared, revisions_by_sidecarset};
use kruise_runtime::harness;

use super::controllers::{ControllerContext, ControllerError, ControllerFuture, ManagedController};

/// The component name of the Events.
pub const COMPONENT: &str = "sidecarset-controller";

/// The SidecarSet controller.
#[derive(Clone, Debug)]
pub struct SidecarSetController {
    revision_namespace: String,
    pod_unavailable_budget_update: bool,
}

impl SidecarSetController {
    /// A controller keeping ControllerRevisions in `revision_namespace` (the manager's namespace, where
    /// the pod webhook reads them).
    #[must_use]
    pub fn new(revision_namespace: &str) -> Self {
        Self {
            revision_namespace: revision_namespace.to_owned(),
            pod_unavailable_budget_update: false,
        }
    }

    /// The same controller spending a unit of a pod's PodUnavailableBudget before each in-place sidecar
    /// upgrade when `enabled` (gate `PodUnavailableBudgetUpdateGate`; a pod whose budget has none left
    /// waits).
    #[must_use]
    pub fn with_pod_unavailable_budget_update(mut self, enabled: bool) -> Self {
        self.pod_unavailable_budget_update = enabled;
        self
    }
}

impl ManagedController for SidecarSetController {
    fn name(&self) -> &str {
        "sidecarset"
    }

    fn run(&self, context: ControllerContext) -> ControllerFuture {
        Box::pin(run(
            self.revision_namespace.clone(),
            self.pod_unavailable_budget_update,
            context,
        ))
    }
}

async fn run(
    revision_namespace: String,
    pod_unavailable_budget_update: bool,
    context: ControllerContext,
) -> Result<(), ControllerError> {
    let client = context.client.clone();
    let events = context.event_sink(COMPONENT);
    let pod_informer = context.informers.get::<Pod>();
    let pods = InjectedPodIndex::new(&pod_informer);
    let revision_informer = context.informers.get::<ControllerRevision>();
    let revisions = revisions_by_sidecarset(&revision_informer, &revision_namespace);
    let shared = Arc::new(
        Shared::new(
            client.clone(),
            pods.clone(),
            revisions,
            revision_namespace.clone(),
            events,
            context.metrics.clone(),
        )
        .with_budgets(
            pod_unavailable_budget_update
                .then(|| crate::unavailable_budget::BudgetStores::shared(&context.informers)),
        ),
    );
    let pod_stream = pods.follow();
    let in_namespace = revision_namespace.clone();
    let revision_stream = revision_informer.objects().filter(move |revision| {
        futures::future::ready(
            revision.metadata.namespace.as_deref() == Some(in_namespace.as_str()),
        )
    });
    tracing::info!(%revision_namespace, "SidecarSet controller starting");
    let sidecarsets = context.informers.get::<SidecarSet>();
    let Some(store) = harness::synced_store(&sidecarsets, &context).await else {
        return Ok(());
    };
    let controller = Controller::for_shared_stream(sidecarsets.applied(), store)
        .watches_shared_stream(pod_stream, |pod: Arc<Pod>| {
            injected_sidecarsets(&pod)
                .into_iter()
                .map(|name| ObjectRef::<SidecarSet>::new(&name))
        })
        .watches_shared_stream(revision_stream, |revision: Arc<ControllerRevision>| {
            revision
                .labels()
                .get(NAME_LABEL)
                .map(|name| ObjectRef::<SidecarSet>::new(name))
        });
    harness::drive(controller, &context, reconcile::reconcile, shared).await;
    Ok(())
}
