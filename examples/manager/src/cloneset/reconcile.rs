//! One reconcile of a CloneSet: observe (pods, claims and revisions from the owner indexes, after the
//! expectations are met), settle the revisions, plan with `kruise_schedule::cloneset::plan`, pre-download
//! the new images (with the gate), execute, write the status, drop gone names from `podsToDelete`,
//! truncate the revision history, and say when to look again.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::jiff::Timestamp;
use k8s_openapi::jiff::tz::TimeZone;
use kruise_api::apps::v1beta1::CloneSet;
use kruise_api::defaults::ApplyDefaults;
use kruise_inplace::calculate::RevisionRef;
use kruise_schedule::cloneset::{PlanInput, PodFactsCache, PodVersion, Revisions, Step, plan};
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Resource, ResourceExt};

use kruise_runtime::harness::{Retry, object_key};

use super::context::Shared;
use super::error::ReconcileError;
use super::events::Record;
use super::execute::{Subject, execute};
use super::status;
use super::whole_pods::{InformerPods, WholePods};
use super::{invalid_spec, predownload, revisions};
use crate::actions;
use crate::expectations::Operation;
use crate::workload::history;
use crate::workload::owner::{expectation_key, key_of};

/// How soon to look again while the caches catch up with earlier writes.
const CACHE_WAIT: Duration = Duration::from_millis(500);

/// How often an idle CloneSet is looked at anyway.
const RESYNC: Duration = Duration::from_secs(300);

/// Reconciles `cloneset`, recording the reconcile's duration and result in the metrics.
///
/// # Errors
/// See [`ReconcileError`].
pub async fn reconcile(
    cloneset: Arc<CloneSet>,
    shared: Arc<Shared>,
) -> Result<Action, ReconcileError> {
    // Decide on the object as the defaulting webhook stores it, also when it was stored without the webhook
    // (while it was away, or with `--no-webhook`): unset budgets, the pod template defaults (revision names
    // are computed from the defaulted template, as upstream's are), history limit. Set fields are never
    // changed.
    let mut defaulted = (*cloneset).clone();
    defaulted.apply_defaults();
    reconcile_once(&defaulted, &shared).await
}

impl Retry for ReconcileError {
    fn retry_after(&self) -> Duration {
        self.requeue_after()
    }

    fn is_conflict(&self) -> bool {
        ReconcileError::is_conflict(self)
    }
}

fn missing(cloneset: &CloneSet, field: &'static str) -> ReconcileError {
    ReconcileError::Metadata {
        cloneset: object_key(cloneset),
        field,
    }
}

async fn reconcile_once(cloneset: &CloneSet, shared: &Shared) -> Result<Action, ReconcileError> {
    let uid = cloneset.uid().ok_or_else(|| missing(cloneset, "uid"))?;
    let mut facts = shared.take_pod_facts(&uid);
    let result = reconcile_with(cloneset, shared, &uid, &mut facts).await;
    shared.keep_pod_facts(&uid, facts);
    result
}

/// One reconcile, planning from `facts` (the CloneSet's pod facts kept between reconciles, brought up to date
/// with the owner index first).
async fn reconcile_with(
    cloneset: &CloneSet,
    shared: &Shared,
    uid: &str,
    facts: &mut PodFactsCache,
) -> Result<Action, ReconcileError> {
    let key = object_key(cloneset);
    let namespace = cloneset
        .namespace()
        .ok_or_else(|| missing(cloneset, "namespace"))?;
    if !shared.synced.all() {
        return Ok(Action::requeue(CACHE_WAIT));
    }
    let (satisfied, pending) = shared.expectations.satisfied(uid);
    if !satisfied {
        tracing::debug!(cloneset = %key, pending, "waiting for creations/deletions to show in the cache");
        return Ok(Action::requeue(Duration::from_secs(5)));
    }
    // The pods' versions only: a pod is decoded again only when its version is not the one its facts
    // were read from.
    let pod_versions = shared.pods.versions(uid);
    let mut cached_revisions = shared.revisions.get(uid);
    let stale = pod_versions
        .iter()
        .map(|(pod, version)| ("pod", pod.name.as_str(), version.as_str()))
        .chain(cached_revisions.iter().map(|r| {
            let meta = r.meta();
            (
                "rev",
                meta.name.as_deref().unwrap_or(""),
                meta.resource_version.as_deref().unwrap_or(""),
            )
        }))
        .any(|(kind, name, version)| {
            let object = key_of(kind, &namespace, name);
            !shared.expectations.version_satisfied(&object, version)
        });
    if stale {
        tracing::debug!(cloneset = %key, "waiting for the cache to show earlier writes");
        return Ok(Action::requeue(CACHE_WAIT));
    }

    // Revisions.
    history::sort(&mut cached_revisions);
    let revision_api: Api<ControllerRevision> = Api::namespaced(shared.client.clone(), &namespace);
    let ensured = revisions::ensure_update(&revision_api, cloneset, &cached_revisions).await?;
    let update_name = ensured.revision.name_any();
    if ensured.created {
        // Wait for the cache to show it, unless the watch was faster than this line.
        let revision_key = expectation_key("rev", ensured.revision.as_ref());
        shared
            .expectations
            .expect(uid, Operation::Create, &revision_key);
        if shared
            .revisions
            .get(uid)
            .iter()
            .any(|r| r.name_any() == update_name)
        {
            shared
                .expectations
                .observe(uid, Operation::Create, &revision_key);
        }
        cached_revisions.push(Arc::clone(&ensured.revision));
    } else if let Some(slot) = cached_revisions
        .iter_mut()
        .find(|r| r.name_any() == update_name)
        && slot.resource_version() != ensured.revision.resource_version()
    {
        // Renumbered (a rollback to an older template): wait for the cache to show it next time.
        if let Some(version) = ensured.revision.resource_version() {
            shared
                .expectations
                .expect_version(&expectation_key("rev", ensured.revision.as_ref()), &version);
        }
        *slot = Arc::clone(&ensured.revision);
    }
    let status_current = cloneset
        .status
        .as_ref()
        .map_or("", |s| s.current_revision.as_str());
    let current_name = history::current(&cached_revisions, status_current)
        .map_or_else(|| update_name.clone(), |r| r.name_any());

    // Plan, from the pod facts: only pods that changed since the last reconcile are read again, and the
    // plan reads whole only the pods it acts on (`WholePods`, kept for the execution).
    let informer = shared.pods.informer();
    facts.set_ordering(cloneset, &InformerPods(informer));
    facts.sync_with(
        pod_versions.iter().map(|(pod, version)| PodVersion {
            namespace: pod.namespace.as_deref().unwrap_or_default(),
            name: &pod.name,
            resource_version: version,
        }),
        |pod| informer.get(&ObjectRef::new(pod.name).within(pod.namespace)),
    );
    let facts: &PodFactsCache = facts;
    let pods = WholePods::new(informer, facts);
    let claims: Vec<PersistentVolumeClaim> = shared
        .claims
        .get(uid)
        .iter()
        .filter(|claim| claim.meta().deletion_timestamp.is_none())
        .map(|claim| (**claim).clone())
        .collect();
    let known: Vec<RevisionRef<'_>> = cached_revisions
        .iter()
        .map(|r| RevisionRef::from(r.as_ref()))
        .collect();
    let now = Timestamp::now().to_zoned(TimeZone::UTC);
    let plan = shared.with_ids(|ids| {
        let input = PlanInput::from_cache(
            cloneset,
            (facts, &pods),
            Revisions {
                current: &current_name,
                update: &update_name,
                known: &known,
            },
            &now,
            &shared.options,
            ids,
        )
        .with_claims(&claims);
        plan(&input)
    });
    let reference = cloneset.object_ref(&());
    for invalid in invalid_spec::to_report(cloneset.status.as_ref(), &plan) {
        tracing::warn!(cloneset = %key, %invalid, "invalid spec value");
        shared
            .events
            .record(&reference, Record::invalid_spec(&key, invalid));
    }
    for skipped in &plan.skipped {
        let name = pods.name(skipped.pod);
        if name.is_empty() {
            continue;
        }
        tracing::warn!(cloneset = %key, pod = %name, error = %skipped.error, "pod left out of the update");
        shared.events.record(
            &reference,
            Record::skipped_pod(name, &skipped.error).about("Pod", &namespace, name),
        );
    }
    if !plan.unavailable.is_empty() {
        // A pod the plan needs whole changed since its facts were read: plan again from its new version.
        tracing::debug!(cloneset = %key, changed = plan.unavailable.len(), "pods changed while planning");
        return Ok(Action::requeue(CACHE_WAIT));
    }
    if plan.diff.scale_up_num > plan.diff.scale_up_limit {
        shared.events.record(
            &reference,
            Record::scale_up_limited(plan.diff.scale_up_limit),
        );
    }
    if plan.step != Step::Idle {
        tracing::info!(
            cloneset = %key,
            step = plan.step.name(),
            actions = plan.actions.len(),
            update_revision = %update_name,
            "acting"
        );
        for action in &plan.actions {
            tracing::debug!(
                cloneset = %key,
                action = action.kind.name(),
                object = action
                    .kind
                    .pod()
                    .map_or_else(|| action.object_name::<Pod>(&[], &claims), |index| pods.name(index)),
                reason = %action.reason(),
            );
        }
    }

    // Image pre-download (gate `PreDownloadImageForInPlaceUpdate`), before the pods are touched.
    if shared.pre_download_image && cloneset.meta().deletion_timestamp.is_none() {
        let update_revision = ensured.revision.as_ref();
        let current_revision = history::current(&cached_revisions, &current_name)
            .map_or(update_revision, AsRef::as_ref);
        predownload::sync(
            shared,
            cloneset,
            &reference,
            current_revision,
            update_revision,
            &plan.update_options,
        )
        .await;
    }

    // Execute (not while the CloneSet is being deleted: the garbage collector takes its pods).
    let executed = if cloneset.meta().deletion_timestamp.is_none() {
        let subject = Subject {
            key: &key,
            namespace: &namespace,
            uid,
            reference: &reference,
            pods: &pods,
            claims: &claims,
            revisions: (&current_name, &update_name),
            now: now.timestamp(),
        };
        execute(shared, &subject, &plan).await
    } else {
        Ok(Default::default())
    };
    let executed = match executed {
        Err(error) if error.is_conflict() => return Err(error),
        other => other,
    };

    // Status, podsToDelete, history.
    let clonesets: Api<CloneSet> = Api::namespaced(shared.client.clone(), &namespace);
    let mut new_status = plan.status.clone();
    new_status.collision_count = Some(ensured.collision_count);
    let mut current = None;
    if status::status_changed(cloneset, &new_status) {
        let written = status::write_status(&clonesets, cloneset, new_status.clone())
            .await
            .map_err(|source| ReconcileError::Action {
                cloneset: key.clone(),
                source,
            })?;
        current = Some(written);
        if shared.pre_download_image
            && predownload::rollout_completed(cloneset.status.as_ref(), &new_status)
        {
            predownload::delete_jobs(shared, cloneset).await;
        }
    }
    if let Some(live) = status::live_pods_to_delete(cloneset, facts.pods().map(|pod| pod.name)) {
        let base = current.as_ref().unwrap_or(cloneset);
        if let Err(error) = status::write_pods_to_delete(&clonesets, base, &live).await {
            tracing::debug!(cloneset = %key, %error, "podsToDelete not truncated this time");
        }
    }
    truncate_history(
        &revision_api,
        cloneset,
        facts,
        &cached_revisions,
        &current_name,
        &update_name,
    )
    .await;

    let executed = executed?;
    if let Some(error) = plan.stopped {
        return Err(ReconcileError::Plan {
            cloneset: key,
            source: error,
        });
    }
    tracing::debug!(
        cloneset = %key,
        step = plan.step.name(),
        created = executed.created,
        deleted = executed.deleted,
        patched = executed.patched,
        diff = ?plan.diff,
        generation = cloneset.metadata.generation,
        pods_to_delete = ?cloneset.spec.scale_strategy.pods_to_delete,
        pods = facts.len(),
        pods_read = pods.read_count(),
        "reconciled"
    );
    let mut requeue = [plan.requeue_after, executed.requeue_after]
        .into_iter()
        .flatten()
        .min();
    let min_ready = cloneset.spec.min_ready_seconds;
    if min_ready > 0 && new_status.available_replicas != new_status.ready_replicas {
        let wait = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0));
        requeue = Some(requeue.map_or(wait, |r| r.min(wait)));
    }
    Ok(Action::requeue(requeue.unwrap_or(RESYNC)))
}

async fn truncate_history(
    api: &Api<ControllerRevision>,
    cloneset: &CloneSet,
    facts: &PodFactsCache,
    sorted: &[Arc<ControllerRevision>],
    current: &str,
    update: &str,
) {
    let mut live: BTreeSet<&str> = (0..facts.len())
        .filter_map(|index| facts.revision(index))
        .collect();
    live.insert(current);
    live.insert(update);
    for revision in history::to_truncate(sorted, &live, cloneset.spec.revision_history_limit) {
        if let Err(error) = actions::delete(api, revision.as_ref()).await {
            tracing::warn!(cloneset = %object_key(cloneset), revision = %revision.name_any(), %error, "truncating the revision history failed");
            return;
        }
    }
}
