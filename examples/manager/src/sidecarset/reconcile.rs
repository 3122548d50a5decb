//! One reconcile of a SidecarSet: hash annotations, then [`kruise_sidecar::plan_steps`] over the facts of
//! the pods it injected (from the [`InjectedPodIndex`]) and its ControllerRevisions (from a store), then the
//! writes: revisions, status (through the `status` subresource), and the pod patches, each built from the
//! whole pod of the version the plan was made from ([`kruise_sidecar::pod_outcome`]) and conditional on its
//! `resourceVersion`.
//!
//! A pod just patched is not planned again until the watch shows the write (the update expectation): a
//! stale cache would count it as not yet upgraded and available, and spend the `maxUnavailable` budget
//! twice.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_api::defaults::ApplyDefaults;
use kruise_api::keys::sidecarset as keys;
use kruise_inplace::Subresource;
use kruise_sidecar::pod_facts::PodFacts;
use kruise_sidecar::pod_view::PodView;
use kruise_sidecar::revision::{LatestRevision, RevisionPlan};
use kruise_sidecar::{PlanInput, Reason, Step, StepPlan};
use kube::api::Patch;
use kube::runtime::controller::Action;
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use super::events::{EventSink, Record};
use kruise_runtime::harness::Retry;
use kruise_runtime::{Indexed, Informer};

use super::pod_index::InjectedPodIndex;
use crate::actions::{self, ActionError};
use crate::metrics::ControllerMetrics;
use crate::unavailable_budget::BudgetStores;
use crate::unavailable_budget::update_check::update_allowed;

/// How long to wait for the caches (first lists, in-flight writes).
const CACHE_WAIT: Duration = Duration::from_millis(500);
/// The periodic resync.
const RESYNC: Duration = Duration::from_secs(60);

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReconcileError {
    /// The planner refused (bad selector, unencodable SidecarSet, unparsable pod annotation).
    #[error("SidecarSet {sidecarset}: {source}")]
    Plan {
        /// The SidecarSet.
        sidecarset: String,
        /// The failure.
        #[source]
        source: kruise_sidecar::Error,
    },
    /// A write failed.
    #[error(transparent)]
    Action(#[from] ActionError),
}

impl ReconcileError {
    /// How soon to try again.
    #[must_use]
    pub fn requeue_after(&self) -> Duration {
        match self {
            Self::Plan { .. } => Duration::from_secs(30),
            Self::Action(error) => error.requeue_after(),
        }
    }
}

/// What every reconcile shares.
pub struct Shared {
    /// The client.
    pub client: Client,
    /// The pods by the SidecarSets that injected them.
    pub pods: InjectedPodIndex,
    /// The SidecarSets' ControllerRevisions in `revision_namespace`, by SidecarSet name (an index of the
    /// shared ControllerRevision informer, see [`revisions_by_sidecarset`]).
    pub revisions: Indexed<ControllerRevision>,
    /// Where the revisions live (the manager's namespace).
    pub revision_namespace: String,
    /// Events.
    pub events: EventSink,
    /// Metrics of this controller.
    pub metrics: ControllerMetrics,
    /// The PodUnavailableBudgets a sidecar upgrade spends from (gate `PodUnavailableBudgetUpdateGate`);
    /// `None` with the gate off.
    pub budgets: Option<BudgetStores>,
    /// Pod key → the `resourceVersion` a write was planned from; cleared once the cache shows another.
    pending: Mutex<BTreeMap<String, String>>,
}

/// The index of the ControllerRevision informer that finds a SidecarSet's revisions: the
/// `kruise.io/sidecarset-name` label of the revisions in `namespace`.
#[must_use]
pub fn revisions_by_sidecarset(
    informer: &Informer<ControllerRevision>,
    namespace: &str,
) -> Indexed<ControllerRevision> {
    let namespace = namespace.to_owned();
    informer.index(
        REVISION_INDEX,
        Arc::new(move |revision: &ControllerRevision| {
            if revision.metadata.namespace.as_deref() != Some(namespace.as_str()) {
                return Vec::new();
            }
            revision
                .labels()
                .get(keys::NAME_LABEL)
                .cloned()
                .into_iter()
                .collect()
        }),
    )
}

/// The name of that index.
pub const REVISION_INDEX: &str = "sidecarset-revisions";

impl Shared {
    /// The shared state of a controller.
    #[must_use]
    pub fn new(
        client: Client,
        pods: InjectedPodIndex,
        revisions: Indexed<ControllerRevision>,
        revision_namespace: String,
        events: EventSink,
        metrics: ControllerMetrics,
    ) -> Self {
        Self {
            client,
            pods,
            revisions,
            revision_namespace,
            events,
            metrics,
            budgets: None,
            pending: Mutex::default(),
        }
    }

    /// The same state spending PodUnavailableBudget units from `budgets` before each sidecar upgrade.
    #[must_use]
    pub fn with_budgets(mut self, budgets: Option<BudgetStores>) -> Self {
        self.budgets = budgets;
        self
    }

    /// Whether a write to one of `pods` is not yet visible; forgets the expectations that are.
    fn waiting_for_writes(&self, pods: &[Arc<PodFacts>]) -> bool {
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        let mut waiting = false;
        for pod in pods {
            let key = pod.key();
            if let Some(stale) = pending.get(&key) {
                if pod.resource_version() == Some(stale.as_str()) {
                    waiting = true;
                } else {
                    pending.remove(&key);
                }
            }
        }
        pending.retain(|key, _| self.pods.contains(key));
        waiting
    }

    fn expect_change(&self, pod: &PodFacts) {
        if let Some(version) = pod.resource_version() {
            self.pending
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(pod.key(), version.to_owned());
        }
    }
}

/// The reconcile kube-runtime's `Controller` calls.
///
/// # Errors
/// See [`ReconcileError`].
pub async fn reconcile(
    sidecarset: Arc<SidecarSet>,
    shared: Arc<Shared>,
) -> Result<Action, ReconcileError> {
    // Decide on the object as upstream's SidecarSet webhook would have stored it (this manager has none).
    let mut defaulted = (*sidecarset).clone();
    defaulted.apply_defaults();
    reconcile_once(&defaulted, &shared).await
}

impl Retry for ReconcileError {
    fn retry_after(&self) -> Duration {
        self.requeue_after()
    }
}

async fn reconcile_once(
    sidecarset: &SidecarSet,
    shared: &Shared,
) -> Result<Action, ReconcileError> {
    let name = sidecarset.name_any();
    let plan_error = |source| ReconcileError::Plan {
        sidecarset: name.clone(),
        source,
    };
    let api: Api<SidecarSet> = Api::all(shared.client.clone());
    // 1. The hash annotations (upstream's SidecarSet webhook writes them; pods record them).
    let hashes = kruise_sidecar::hash::compute(sidecarset).map_err(plan_error)?;
    let recorded = |key: &str| {
        sidecarset
            .metadata
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(key))
            .cloned()
    };
    if recorded(keys::HASH_ANNOTATION).as_deref() != Some(hashes.hash.as_str())
        || recorded(keys::HASH_WITHOUT_IMAGE_ANNOTATION).as_deref()
            != Some(hashes.without_image.as_str())
    {
        let patch = json!({"metadata": {
        "resourceVersion": sidecarset.metadata.resource_version,
        "annotations": {
            keys::HASH_ANNOTATION: hashes.hash,
            keys::HASH_WITHOUT_IMAGE_ANNOTATION: hashes.without_image,
        }}});
        actions::patch(&api, &name, &name, None, &Patch::Merge(&patch)).await?;
        // The update brings the SidecarSet back with its hashes.
        return Ok(Action::await_change());
    }
    if !shared.pods.is_synced() || !shared.revisions.is_synced() {
        return Ok(Action::requeue(CACHE_WAIT));
    }
    // The planner reads the pods' facts, kept by the index between reconciles: a SidecarSet may have
    // thousands of pods, and only the ones it patches are decoded whole.
    let pods = shared.pods.pods_of(&name);
    if shared.waiting_for_writes(&pods) {
        return Ok(Action::requeue(CACHE_WAIT));
    }
    let revisions: Vec<ControllerRevision> = shared
        .revisions
        .get(&name)
        .iter()
        .map(|revision| (**revision).clone())
        .collect();
    let now = Timestamp::now();
    let plan = kruise_sidecar::plan_steps(&PlanInput {
        sidecarset,
        pods: &pods,
        revisions: &revisions,
        revision_namespace: &shared.revision_namespace,
        now,
    })
    .map_err(plan_error)?;

    // 2. Revisions.
    if let Some(collision) =
        settle_revisions(sidecarset, &plan.revisions, &revisions, shared).await?
    {
        let mut status = sidecarset.status.clone().unwrap_or_default();
        status.collision_count = Some(collision);
        actions::replace_status(&api, sidecarset, &status).await?;
        return Ok(Action::requeue(Duration::ZERO));
    }

    // 3. Status: replaced whole (counts back at 0 are written too), conditional on the version read.
    if sidecarset.status.as_ref() != Some(&plan.status) {
        actions::replace_status(&api, sidecarset, &plan.status).await?;
    }

    // 4. Pods.
    execute(sidecarset, &plan, &pods, now, shared).await?;
    Ok(match plan.step {
        Step::Upgrade | Step::Reset if !plan.steps.is_empty() => Action::requeue(CACHE_WAIT),
        _ => Action::requeue(RESYNC),
    })
}

/// Creates, rolls back, labels and truncates the revisions. Returns the new collision count when the
/// revision's name is taken by a revision with other data.
async fn settle_revisions(
    sidecarset: &SidecarSet,
    plan: &RevisionPlan,
    existing: &[ControllerRevision],
    shared: &Shared,
) -> Result<Option<i32>, ReconcileError> {
    let api: Api<ControllerRevision> =
        Api::namespaced(shared.client.clone(), &shared.revision_namespace);
    let name = sidecarset.name_any();
    let object = |revision: &str| format!("{}/{revision}", shared.revision_namespace);
    match &plan.latest {
        LatestRevision::Reuse { .. } => {}
        LatestRevision::Rollback {
            name: revision,
            number,
        } => {
            let patch = json!({"revision": number});
            actions::patch(
                &api,
                &object(revision),
                revision,
                None,
                &Patch::Merge(&patch),
            )
            .await?;
        }
        LatestRevision::Create(revision) => match actions::create(&api, revision).await {
            Ok(_) => shared.events.record_for(
                sidecarset,
                Record::normal(
                    "CreateRevision",
                    format!("created ControllerRevision {}", revision.name_any()),
                ),
            ),
            Err(ActionError::Conflict { .. }) => {
                let found = api
                    .get_opt(&revision.name_any())
                    .await
                    .map_err(|error| ActionError::from_kube(object(&revision.name_any()), error))?;
                let same = found
                    .as_ref()
                    .is_some_and(|found| found.data == revision.data);
                if !same {
                    let count = sidecarset
                        .status
                        .as_ref()
                        .and_then(|status| status.collision_count)
                        .unwrap_or(0);
                    return Ok(Some(count.saturating_add(1)));
                }
            }
            Err(other) => return Err(other.into()),
        },
    }
    if let Some(version) = &plan.custom_version_label {
        let latest = plan.latest.name();
        let patch = json!({"metadata": {"labels": {keys::CUSTOM_VERSION_LABEL: version}}});
        actions::patch(&api, &object(latest), latest, None, &Patch::Merge(&patch)).await?;
    }
    for doomed in &plan.delete {
        if let Some(revision) = existing.iter().find(|r| r.name_any() == *doomed) {
            actions::delete(&api, revision).await?;
        }
    }
    if plan.over_limit > 0 {
        tracing::warn!(
            sidecarset = %name,
            over = plan.over_limit,
            "revision history over the limit: the remaining revisions are in use"
        );
    }
    Ok(None)
}

/// Builds each step's patches from the whole pod of the planned version and sends them (the first one
/// tests that `resourceVersion`), records Events. A pod whose planned version the informer no longer has is
/// skipped: its change is on its way and triggers another reconcile.
async fn execute(
    sidecarset: &SidecarSet,
    plan: &StepPlan,
    pods: &[Arc<PodFacts>],
    now: Timestamp,
    shared: &Shared,
) -> Result<(), ReconcileError> {
    let planned = plan.planned(sidecarset);
    let mut first_error = None;
    for step in &plan.steps {
        let Some(facts) = pods.get(step.pod) else {
            continue;
        };
        let Some(pod) = shared.pods.pod(facts) else {
            continue;
        };
        if step.reason == Reason::Upgrade
            && !update_allowed(&shared.client, shared.budgets.as_ref(), &pod).await
        {
            // Looked at again soon: a plan with steps requeues after CACHE_WAIT.
            continue;
        }
        let outcome =
            kruise_sidecar::pod_outcome(&planned, step.reason, &pod, now).map_err(|source| {
                ReconcileError::Plan {
                    sidecarset: sidecarset.name_any(),
                    source,
                }
            })?;
        drop(pod);
        let api: Api<Pod> = Api::namespaced(shared.client.clone(), facts.namespace());
        let key = facts.key();
        let mut result = Ok(());
        for write in &outcome.writes {
            let subresource = match write.subresource {
                Subresource::Pod => None,
                Subresource::Status => Some("status"),
                Subresource::Resize => Some("resize"),
            };
            let sent = actions::patch(
                &api,
                &key,
                facts.name(),
                subresource,
                &Patch::Json::<()>(write.patch.clone()),
            )
            .await;
            if let Err(error) = sent {
                result = Err(conflict_on_failed_test(error));
                break;
            }
        }
        match result {
            Ok(()) => {
                if !outcome.writes.is_empty() {
                    shared.expect_change(facts);
                }
                shared
                    .events
                    .record_for(sidecarset, action_event(step.reason, &key));
            }
            Err(error) => {
                shared.events.record_for(
                    sidecarset,
                    Record::warning(
                        "FailedUpdatePod",
                        format!("failed to {} pod {key}: {error}", step.reason.name()),
                    ),
                );
                if first_error.is_none() {
                    first_error = Some(error);
                }
            }
        }
    }
    match first_error {
        Some(error) => Err(error.into()),
        None => Ok(()),
    }
}

/// A JSON patch whose `test` failed comes back as 422 without causes: the pod changed, like a 409.
fn conflict_on_failed_test(error: ActionError) -> ActionError {
    match error {
        ActionError::Api {
            object,
            source: kube::Error::Api(status),
        } if status.code == 422 && status.details.as_ref().is_none_or(|d| d.causes.is_empty()) => {
            ActionError::Conflict { object }
        }
        other => other,
    }
}

/// The Event of a successful pod action.
#[must_use]
pub fn action_event(reason: Reason, pod: &str) -> Record {
    {
        match reason {
            Reason::Upgrade => Record::normal(
                "UpgradeSidecars",
                format!("upgraded the sidecars of pod {pod} in place"),
            ),
            Reason::ResetHotUpgrade => Record::normal(
                "ResetHotUpgradeContainer",
                format!("reset the idle hot-upgrade container of pod {pod} to the empty image"),
            ),
            Reason::NotUpgradable => Record::warning(
                "NotUpgradable",
                format!(
                    "pod {pod} cannot be upgraded in place (a field other than an image changed): SidecarSetUpgradable=False"
                ),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use kube::core::Status;

    use super::*;

    fn api_error(code: u16) -> ActionError {
        ActionError::from_kube(
            "ns/p".into(),
            kube::Error::Api(
                Status::failure("the test failed", "Invalid")
                    .with_code(code)
                    .boxed(),
            ),
        )
    }

    #[test]
    fn a_failed_test_op_is_a_conflict() {
        assert!(matches!(
            conflict_on_failed_test(api_error(422)),
            ActionError::Conflict { .. }
        ));
        assert!(matches!(
            conflict_on_failed_test(api_error(409)),
            ActionError::Conflict { .. }
        ));
        assert!(matches!(
            conflict_on_failed_test(api_error(500)),
            ActionError::Api { .. }
        ));
    }

    #[test]
    fn every_action_has_an_event() {
        let upgrade = action_event(Reason::Upgrade, "ns/p");
        assert_eq!(
            (upgrade.reason, upgrade.warning),
            ("UpgradeSidecars", false)
        );
        assert!(upgrade.message.contains("ns/p"));
        assert!(action_event(Reason::NotUpgradable, "ns/p").warning);
        assert_eq!(
            action_event(Reason::ResetHotUpgrade, "ns/p").reason,
            "ResetHotUpgradeContainer"
        );
    }
}
