//! One reconcile of an Advanced DaemonSet: observe (pods and revisions from the owner indexes, every node,
//! after the expectations are met), settle the update revision, plan with
//! `kruise_schedule::daemonset::plan`, execute, write the status, truncate the revision history, and say
//! when to look again.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::Timestamp;
use k8s_openapi::jiff::tz::TimeZone;
use kruise_api::apps::v1beta1::DaemonSet;
use kruise_api::defaults::ApplyDefaults;
use kruise_schedule::daemonset::{KnownRevision, PlanInput, Revisions, Step, plan};
use kube::runtime::controller::Action;
use kube::{Api, Resource, ResourceExt};

use kruise_runtime::harness::object_key;

use super::context::Shared;
use super::error::ReconcileError;
use super::events::Record;
use super::execute::{Subject, execute};
use super::revisions::{self, hash_of};
use super::status;
use crate::actions;
use crate::expectations::Operation;
use crate::workload::history::sort;
use crate::workload::owner::{expectation_key, key_of};

/// How soon to look again while the caches catch up with earlier writes.
const CACHE_WAIT: Duration = Duration::from_millis(500);

/// How soon to look again while creations and deletions are not yet seen (their watch events also
/// trigger a reconcile).
const EXPECTATION_WAIT: Duration = Duration::from_secs(5);

/// How often an idle DaemonSet is looked at anyway.
const RESYNC: Duration = Duration::from_secs(300);

/// Reconciles `daemonset`, deciding on a defaulted copy (as upstream's defaulting webhook would have
/// stored it: the update strategy, `burstReplicas`, `revisionHistoryLimit`; the pod template is left
/// alone, as upstream's is).
///
/// # Errors
/// See [`ReconcileError`].
pub async fn reconcile(
    daemonset: Arc<DaemonSet>,
    shared: Arc<Shared>,
) -> Result<Action, ReconcileError> {
    let mut defaulted = (*daemonset).clone();
    defaulted.apply_defaults();
    reconcile_defaulted(&defaulted, &shared).await
}

fn missing(daemonset: &DaemonSet, field: &'static str) -> ReconcileError {
    ReconcileError::Metadata {
        daemonset: object_key(daemonset),
        field,
    }
}

/// Whether the DaemonSet's selector selects every pod (no labels, no expressions).
#[must_use]
pub fn selects_all(daemonset: &DaemonSet) -> bool {
    let selector = &daemonset.spec.selector;
    selector
        .match_labels
        .as_ref()
        .is_none_or(std::collections::BTreeMap::is_empty)
        && selector
            .match_expressions
            .as_ref()
            .is_none_or(Vec::is_empty)
}

async fn reconcile_defaulted(
    daemonset: &DaemonSet,
    shared: &Shared,
) -> Result<Action, ReconcileError> {
    let key = object_key(daemonset);
    let uid = daemonset.uid().ok_or_else(|| missing(daemonset, "uid"))?;
    let namespace = daemonset
        .namespace()
        .ok_or_else(|| missing(daemonset, "namespace"))?;
    let reference = daemonset.object_ref(&());
    if selects_all(daemonset) {
        tracing::warn!(daemonset = %key, "empty selector: nothing is done");
        shared.events.record(&reference, Record::selecting_all());
        return Ok(Action::await_change());
    }
    if !shared.synced.all() {
        return Ok(Action::requeue(CACHE_WAIT));
    }
    // The status written last time must show, or the status write below would only meet a 409.
    let own_key = key_of("ds", &namespace, &daemonset.name_any());
    if !shared.expectations.version_satisfied(
        &own_key,
        daemonset.resource_version().as_deref().unwrap_or(""),
    ) {
        tracing::debug!(daemonset = %key, "waiting for the cache to show the last status write");
        return Ok(Action::requeue(CACHE_WAIT));
    }
    let (satisfied, pending) = shared.expectations.satisfied(&uid);
    if !satisfied {
        tracing::debug!(daemonset = %key, pending, "waiting for creations/deletions to show in the cache");
        return Ok(Action::requeue(EXPECTATION_WAIT));
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
        tracing::debug!(daemonset = %key, "waiting for the cache to show earlier writes");
        return Ok(Action::requeue(CACHE_WAIT));
    }

    // The update revision.
    sort(&mut cached_revisions);
    let revision_api: Api<ControllerRevision> = Api::namespaced(shared.client.clone(), &namespace);
    let ensured = revisions::ensure_update(&revision_api, daemonset, &cached_revisions).await?;
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
    let update_hash = hash_of(&ensured.revision).to_owned();

    // Plan, from references into the caches (no pod or node is copied).
    let pods: Vec<&Pod> = cached_pods.iter().map(AsRef::as_ref).collect();
    let cached_nodes = shared.nodes.state();
    let nodes: Vec<&Node> = cached_nodes.iter().map(AsRef::as_ref).collect();
    let known: Vec<KnownRevision<'_>> = cached_revisions
        .iter()
        .filter_map(|revision| KnownRevision::of(revision))
        .collect();
    let now = Timestamp::now().to_zoned(TimeZone::UTC);
    let plan = plan(&PlanInput::new(
        daemonset,
        &pods,
        &nodes,
        Revisions {
            update_hash: &update_hash,
            known: &known,
        },
        &now,
        &shared.options,
    ));
    if plan.step != Step::Idle {
        tracing::info!(
            daemonset = %key,
            step = plan.step.name(),
            actions = plan.actions.len(),
            update_revision = %update_name,
            "acting"
        );
        for action in &plan.actions {
            tracing::debug!(
                daemonset = %key,
                action = action.kind.name(),
                object = action.object_name(&pods, &[]),
                reason = %action.reason(),
            );
        }
    }

    // Execute (not while the DaemonSet is being deleted: the garbage collector takes its pods).
    let executed = if daemonset.meta().deletion_timestamp.is_none() {
        let subject = Subject {
            key: &key,
            namespace: &namespace,
            uid: &uid,
            reference: &reference,
            pods: &cached_pods,
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

    // Status and history.
    let daemonsets: Api<DaemonSet> = Api::namespaced(shared.client.clone(), &namespace);
    let mut new_status = plan.status.clone();
    new_status.collision_count = Some(ensured.collision_count);
    if status::status_changed(daemonset, &new_status) {
        let written = status::write_status(&daemonsets, daemonset, &new_status)
            .await
            .map_err(|source| ReconcileError::Action {
                daemonset: key.clone(),
                source,
            })?;
        if let Some(version) = written.resource_version() {
            shared.expectations.expect_version(&own_key, &version);
        }
    }
    let pod_hashes: BTreeSet<&str> = pods
        .iter()
        .map(|pod| {
            kruise_api::pod::label(
                pod,
                kruise_api::keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL,
            )
            .unwrap_or("")
        })
        .collect();
    for revision in
        revisions::history_to_delete(daemonset, &cached_revisions, &pod_hashes, &update_name)
    {
        if let Err(error) = actions::delete(&revision_api, revision.as_ref()).await {
            tracing::warn!(daemonset = %key, revision = %revision.name_any(), %error, "truncating the revision history failed");
            break;
        }
    }

    let executed = executed?;
    if let Some(error) = plan.stopped {
        return Err(ReconcileError::Plan {
            daemonset: key,
            source: error,
        });
    }
    tracing::debug!(
        daemonset = %key,
        step = plan.step.name(),
        created = executed.created,
        deleted = executed.deleted,
        patched = executed.patched,
        pods = pods.len(),
        nodes = nodes.len(),
        "reconciled"
    );
    let requeue = [plan.requeue_after, executed.requeue_after]
        .into_iter()
        .flatten()
        .min();
    Ok(Action::requeue(requeue.unwrap_or(RESYNC)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_selector_selects_all() {
        let daemonset = |selector: serde_json::Value| -> DaemonSet {
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "agent", "namespace": "ns"},
                "spec": {"selector": selector, "template": {}},
            }))
            .unwrap()
        };
        assert!(selects_all(&daemonset(serde_json::json!({}))));
        assert!(selects_all(&daemonset(
            serde_json::json!({"matchLabels": {}})
        )));
        assert!(!selects_all(&daemonset(
            serde_json::json!({"matchLabels": {"app": "agent"}})
        )));
        assert!(!selects_all(&daemonset(serde_json::json!({
            "matchExpressions": [{"key": "app", "operator": "Exists"}]
        }))));
    }
}
