//! One reconcile of an Advanced StatefulSet: observe (pods and revisions from the owner index, claims by
//! name, after the expectations are met), settle the revisions, plan with
//! `kruise_schedule::statefulset::plan`, execute, write the status, truncate the revision history, and
//! say when to look again.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use k8s_openapi::jiff::Timestamp;
use k8s_openapi::jiff::tz::TimeZone;
use kruise_api::apps::v1beta1::StatefulSet;
use kruise_api::defaults::ApplyDefaults;
use kruise_inplace::calculate::RevisionRef;
use kruise_schedule::statefulset::ordinals::{
    OrdinalRange, ReservedOrdinals, claim_name, ordinal_of,
};
use kruise_schedule::statefulset::{Error as PlanError, PlanInput, Revisions, plan};
use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};

use kruise_runtime::harness::{Retry, object_key};

use super::context::Shared;
use super::error::ReconcileError;
use super::events::Record;
use super::execute::{Subject, execute};
use super::revisions::ensure_update;
use super::status::{next_status, status_changed, write_status};
use crate::actions;
use crate::expectations::Operation;
use crate::workload::history::{current, sort, to_truncate};
use crate::workload::owner::{expectation_key, key_of};

/// How soon to look again while the caches catch up with earlier writes.
const CACHE_WAIT: Duration = Duration::from_millis(500);

/// How often an idle StatefulSet is looked at anyway.
const RESYNC: Duration = Duration::from_secs(300);

/// Reconciles `set`.
///
/// # Errors
/// See [`ReconcileError`].
pub async fn reconcile(
    set: Arc<StatefulSet>,
    shared: Arc<Shared>,
) -> Result<Action, ReconcileError> {
    // Decide on the object as upstream's defaulting webhook would have stored it: unset strategy fields,
    // the pod template defaults (revision names are computed from the defaulted template, as upstream's
    // are), the claim retention policy. Set fields are never changed.
    let mut defaulted = (*set).clone();
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

fn missing(set: &StatefulSet, field: &'static str) -> ReconcileError {
    ReconcileError::Metadata {
        set: object_key(set),
        field,
    }
}

/// The ordinals whose claims a plan may read: the kept ones (as the planner computes them) and those of
/// the existing pods.
fn claim_ordinals(set: &StatefulSet, pods: &[Pod], start_ordinal_gate: bool) -> BTreeSet<i64> {
    let spec = &set.spec;
    let (reserved, _) = ReservedOrdinals::of(&spec.reserve_ordinals);
    let start = if start_ordinal_gate {
        spec.ordinals.as_ref().map_or(0, |o| i64::from(o.start))
    } else {
        0
    };
    let range = OrdinalRange::new(start, i64::from(spec.replicas.unwrap_or(1)), reserved);
    range
        .ordinals()
        .chain(
            pods.iter()
                .filter_map(|pod| ordinal_of(&pod.name_any()).map(i64::from)),
        )
        .collect()
}

/// The cached claims of `set` on `ordinals` (those that exist).
fn claims_of(
    shared: &Shared,
    set: &StatefulSet,
    namespace: &str,
    ordinals: &BTreeSet<i64>,
) -> Vec<PersistentVolumeClaim> {
    let name = set.name_any();
    let name = name.as_str();
    let templates: Vec<&str> = set
        .spec
        .volume_claim_templates
        .iter()
        .filter_map(|template| template.metadata.name.as_deref())
        .collect();
    if templates.is_empty() {
        return Vec::new();
    }
    ordinals
        .iter()
        .flat_map(|&ordinal| {
            templates
                .iter()
                .map(move |template| claim_name(template, name, ordinal))
        })
        .filter_map(|claim| shared.claim(namespace, &claim))
        .map(|claim| (*claim).clone())
        .collect()
}

async fn reconcile_once(set: &StatefulSet, shared: &Shared) -> Result<Action, ReconcileError> {
    let key = object_key(set);
    let uid = set.uid().ok_or_else(|| missing(set, "uid"))?;
    let namespace = set.namespace().ok_or_else(|| missing(set, "namespace"))?;
    let name = set.name_any();
    if !shared.all_synced() {
        return Ok(Action::requeue(CACHE_WAIT));
    }
    let (satisfied, pending) = shared.expectations.satisfied(&uid);
    if !satisfied {
        tracing::debug!(statefulset = %key, pending, "waiting for creations/deletions to show in the cache");
        return Ok(Action::requeue(Duration::from_secs(5)));
    }
    let cached_pods = shared.pods.get(&uid);
    let mut cached_revisions = shared.revisions.get(&uid);
    let stale = cached_pods
        .iter()
        .map(|pod| ("pod", pod.meta()))
        .chain(cached_revisions.iter().map(|r| ("rev", r.meta())))
        .any(|(kind, meta)| {
            let object = key_of(kind, &namespace, meta.name.as_deref().unwrap_or(""));
            !shared
                .expectations
                .version_satisfied(&object, meta.resource_version.as_deref().unwrap_or(""))
        });
    if stale {
        tracing::debug!(statefulset = %key, "waiting for the cache to show earlier writes");
        return Ok(Action::requeue(CACHE_WAIT));
    }

    // Revisions.
    sort(&mut cached_revisions);
    let revision_api: Api<ControllerRevision> = Api::namespaced(shared.client.clone(), &namespace);
    let ensured = ensure_update(&revision_api, set, &cached_revisions).await?;
    let update_name = ensured.revision.name_any();
    if ensured.created {
        let revision_key = expectation_key("rev", ensured.revision.as_ref());
        shared
            .expectations
            .expect(&uid, Operation::Create, &revision_key);
        if shared
            .revisions
            .get(&uid)
            .iter()
            .any(|r| r.name_any() == update_name)
        {
            shared
                .expectations
                .observe(&uid, Operation::Create, &revision_key);
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
    let status_current = set
        .status
        .as_ref()
        .map_or("", |s| s.current_revision.as_str());
    let current_name = current(&cached_revisions, status_current)
        .map_or_else(|| update_name.clone(), |r| r.name_any());

    // Plan.
    let mut pods: Vec<Pod> = cached_pods.iter().map(|pod| (**pod).clone()).collect();
    pods.sort_by_key(ResourceExt::name_any);
    let ordinals = claim_ordinals(set, &pods, shared.options.start_ordinal);
    let claims = claims_of(shared, set, &namespace, &ordinals);
    let stale_claim = claims.iter().any(|claim| {
        let object = key_of("pvc", &namespace, &claim.name_any());
        !shared.expectations.version_satisfied(
            &object,
            claim.metadata.resource_version.as_deref().unwrap_or(""),
        )
    });
    if stale_claim {
        tracing::debug!(statefulset = %key, "waiting for the cache to show earlier claim writes");
        return Ok(Action::requeue(CACHE_WAIT));
    }
    let known: Vec<RevisionRef<'_>> = cached_revisions
        .iter()
        .map(|r| RevisionRef::from(r.as_ref()))
        .collect();
    let now = Timestamp::now().to_zoned(TimeZone::UTC);
    let revisions = Revisions::named(&current_name, &update_name).with_known(&known);
    let input = PlanInput::new(set, &pods, revisions, &now, &shared.options).with_claims(&claims);
    let plan = plan(&input);
    let reference = set.object_ref(&());
    if let Some(invalid) = &plan.invalid_reserve_ordinal
        && shared.report_invalid_spec(&uid, &invalid.to_string())
    {
        tracing::warn!(statefulset = %key, %invalid, "invalid spec value");
        shared
            .events
            .record(&reference, Record::invalid_spec(&key, invalid));
    }
    if let Some(PlanError::ClaimNotExpandable { claim, .. }) = &plan.stopped {
        shared.events.record(
            &reference,
            Record::claim_not_expandable(claim).about("PersistentVolumeClaim", &namespace, claim),
        );
    }
    if !plan.actions.is_empty() {
        tracing::info!(
            statefulset = %key,
            actions = plan.actions.len(),
            update_revision = %update_name,
            waiting = ?plan.waiting.as_ref().map(ToString::to_string),
            "acting"
        );
        for action in &plan.actions {
            tracing::debug!(
                statefulset = %key,
                action = action.kind.name(),
                object = action.object_name(&pods, &claims),
                reason = %action.reason(),
            );
        }
    }

    // Execute (the planner plans nothing while the StatefulSet is being deleted).
    let subject = Subject {
        key: &key,
        name: &name,
        namespace: &namespace,
        uid: &uid,
        reference: &reference,
        pods: &pods,
        claims: &claims,
        update_revision: &update_name,
        now: now.timestamp(),
    };
    let executed = match execute(shared, &subject, &plan).await {
        Err(error) if error.is_conflict() => return Err(error),
        other => other,
    };

    // Status and history.
    let new_status = next_status(set, &plan.status, ensured.collision_count);
    if status_changed(set, &new_status) {
        let sets: Api<StatefulSet> = Api::namespaced(shared.client.clone(), &namespace);
        write_status(&sets, set, &new_status)
            .await
            .map_err(|source| ReconcileError::Action {
                set: key.clone(),
                source,
            })?;
    }
    truncate_history(
        &revision_api,
        set,
        &pods,
        &cached_revisions,
        &current_name,
        &update_name,
    )
    .await;

    let executed = executed?;
    if let Some(error) = plan.stopped {
        return Err(ReconcileError::Plan {
            set: key,
            source: error,
        });
    }
    tracing::debug!(
        statefulset = %key,
        created = executed.created,
        deleted = executed.deleted,
        patched = executed.patched,
        generation = set.metadata.generation,
        pods = pods.len(),
        "reconciled"
    );
    let mut requeue = plan.requeue_after;
    let min_ready = set
        .spec
        .update_strategy
        .rolling_update
        .as_ref()
        .and_then(|r| r.min_ready_seconds)
        .unwrap_or(0);
    if min_ready > 0 && new_status.available_replicas != new_status.ready_replicas {
        let wait = Duration::from_secs(u64::try_from(min_ready).unwrap_or(0));
        requeue = Some(requeue.map_or(wait, |r| r.min(wait)));
    }
    Ok(Action::requeue(requeue.unwrap_or(RESYNC)))
}

async fn truncate_history(
    api: &Api<ControllerRevision>,
    set: &StatefulSet,
    pods: &[Pod],
    sorted: &[Arc<ControllerRevision>],
    current: &str,
    update: &str,
) {
    let mut live: BTreeSet<&str> = pods.iter().map(kruise_api::pod::revision).collect();
    live.insert(current);
    live.insert(update);
    for revision in to_truncate(sorted, &live, set.spec.revision_history_limit) {
        if let Err(error) = actions::delete(api, revision.as_ref()).await {
            tracing::warn!(statefulset = %object_key(set), revision = %revision.name_any(), %error, "truncating the revision history failed");
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn claims_are_read_for_kept_ordinals_and_existing_pods() {
        let set: StatefulSet = serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"replicas": 3, "reserveOrdinals": [1], "ordinals": {"start": 5},
                "selector": {}, "template": {}, "serviceName": ""},
        }))
        .unwrap();
        let pod: Pod = serde_json::from_value(json!({"metadata": {"name": "web-9"}})).unwrap();
        let without_gate = claim_ordinals(&set, std::slice::from_ref(&pod), false);
        assert_eq!(without_gate.into_iter().collect::<Vec<_>>(), [0, 2, 3, 9]);
        let with_gate = claim_ordinals(&set, &[pod], true);
        assert_eq!(with_gate.into_iter().collect::<Vec<_>>(), [5, 6, 7, 9]);
    }
}
