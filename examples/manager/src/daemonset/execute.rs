//! Carrying out an Advanced DaemonSet plan: creations in slow-start batches (1, 2, 4, ... pods at a time,
//! stopping at the first batch with a failure), then deletions and pod patches in the planned order, stopping
//! at the first failure; runs of pod patches go 8 pods at a time, each pod's actions in order and a later one
//! conditional on the version its earlier one wrote. Creations are named by the API server (`generateName`),
//! so each is announced to the expectations once its name is known (and taken back at once if the cache
//! already shows it); deletions are announced before they are sent. Every pod write records the
//! `resourceVersion` it produced, and every outcome becomes an Event.

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::jiff::Timestamp;
use kruise_schedule::daemonset::{Action, ActionKind, Plan};
use kube::{Api, Resource, ResourceExt};

use super::context::Shared;
use super::error::ReconcileError;
use super::events::Record;
use super::request::pod_writes;
use crate::actions::{self, ActionError};
use crate::expectations::Operation;
use crate::workload::owner::key_of;
use crate::workload::pod_runs::{self, patch_by_pod};
use crate::workload::send_writes::send_chained;

/// The DaemonSet a plan is executed for, and what the plan was made from.
pub struct Subject<'a> {
    /// `namespace/name`.
    pub key: &'a str,
    /// Its namespace.
    pub namespace: &'a str,
    /// Its UID (the expectations' owner key).
    pub uid: &'a str,
    /// The reference Events are recorded against.
    pub reference: &'a ObjectReference,
    /// The pods the plan indexes into (the owner index's, in the order the plan read them).
    pub pods: &'a [Arc<Pod>],
    /// The time the plan was made at.
    pub now: Timestamp,
}

/// What the execution did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Executed {
    /// Pods created.
    pub created: usize,
    /// Pods deleted.
    pub deleted: usize,
    /// Pod writes sent (lifecycle, in place).
    pub patched: usize,
    /// The longest in-place grace period still running, if any.
    pub requeue_after: Option<Duration>,
}

/// Executes `plan` for `subject`.
///
/// # Errors
/// The first write that failed ([`ReconcileError::Action`]); the writes before it stand.
pub async fn execute(
    shared: &Shared,
    subject: &Subject<'_>,
    plan: &Plan,
) -> Result<Executed, ReconcileError> {
    let pods: Api<Pod> = Api::namespaced(shared.client.clone(), subject.namespace);
    let mut executed = Executed::default();
    let fail = |source: ActionError| ReconcileError::Action {
        daemonset: subject.key.to_owned(),
        source,
    };
    let creations: Vec<(u32, &Pod)> = plan
        .actions
        .iter()
        .filter_map(|action| match &action.kind {
            ActionKind::CreatePod { pod, batch, .. } => Some((*batch, pod.as_ref())),
            _ => None,
        })
        .collect();
    executed.created = create_in_batches(shared, subject, &pods, &creations)
        .await
        .map_err(fail)?;
    let mut actions = plan.actions.iter().peekable();
    while let Some(action) = actions.next() {
        match &action.kind {
            ActionKind::CreatePod { .. } => {}
            ActionKind::DeletePod { pod } => {
                let Some(pod) = subject.pods.get(*pod) else {
                    continue;
                };
                delete_pod(shared, subject, &pods, pod)
                    .await
                    .map_err(fail)?;
                executed.deleted += 1;
            }
            _ => {
                let mut run = vec![action];
                while let Some(next) = actions.next_if(|a| is_pod_write(a)) {
                    run.push(next);
                }
                let patched = patch_by_pod(
                    &run,
                    |action| action.kind.pod(),
                    |(index, actions)| patch_pod(shared, subject, plan, &pods, index, actions),
                )
                .await;
                executed.patched += patched.sent;
                executed.requeue_after = longest(executed.requeue_after, patched.requeue_after);
                if let Some(error) = patched.error {
                    return Err(error);
                }
            }
        }
    }
    Ok(executed)
}

/// Whether `action` is a write to one of the plan's pods (lifecycle, in place), which [`patch_pods`]
/// sends together with its neighbours.
fn is_pod_write(action: &Action) -> bool {
    !matches!(
        action.kind,
        ActionKind::CreatePod { .. } | ActionKind::DeletePod { .. }
    ) && action.kind.pod().is_some()
}

/// What the pod writes of a run of actions did.
type Patched = pod_runs::Patched<ReconcileError>;

/// Sends the writes of one pod's actions in order, stopping at its first failure, and records their Events.
async fn patch_pod(
    shared: &Shared,
    subject: &Subject<'_>,
    plan: &Plan,
    api: &Api<Pod>,
    index: usize,
    actions: Vec<&Action>,
) -> Patched {
    let mut patched = Patched::default();
    let Some(pod) = subject.pods.get(index) else {
        return patched;
    };
    let pod: &Pod = pod;
    let mut writes = Vec::with_capacity(actions.len());
    for action in &actions {
        match pod_writes(&action.kind, pod, subject.now, &plan.update_options) {
            Ok(action_writes) => writes.push(action_writes),
            Err(source) => {
                patched.error = Some(ReconcileError::InPlace {
                    daemonset: subject.key.to_owned(),
                    pod: pod.name_any(),
                    source,
                });
                break;
            }
        }
    }
    let about = |record: super::events::EventRecord| {
        record.about("Pod", subject.namespace, &pod.name_any())
    };
    let outcomes = send_chained(&shared.expectations, api, pod, writes).await;
    for (action, outcome) in actions.into_iter().zip(outcomes) {
        match (&action.kind, outcome) {
            (kind, Ok(sent)) => {
                patched.sent += sent.writes;
                match kind {
                    ActionKind::UpdateInPlace { .. } => shared.events.record(
                        subject.reference,
                        about(Record::updated_in_place(&pod.name_any())),
                    ),
                    ActionKind::RefreshInPlace { outcome, .. } => {
                        patched.requeue_at_least(outcome.requeue_after);
                    }
                    _ => {}
                }
            }
            (kind, Err(error)) => {
                if matches!(kind, ActionKind::UpdateInPlace { .. })
                    && !matches!(error, ActionError::Conflict { .. })
                {
                    shared.events.record(
                        subject.reference,
                        about(Record::in_place_failed(&pod.name_any(), &error)),
                    );
                }
                patched.error = Some(ReconcileError::Action {
                    daemonset: subject.key.to_owned(),
                    source: error,
                });
            }
        }
    }
    patched
}

fn longest(a: Option<Duration>, b: Option<Duration>) -> Option<Duration> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

async fn create_in_batches(
    shared: &Shared,
    subject: &Subject<'_>,
    pods: &Api<Pod>,
    creations: &[(u32, &Pod)],
) -> Result<usize, ActionError> {
    let mut created = 0;
    let mut batches: Vec<u32> = creations.iter().map(|(batch, _)| *batch).collect();
    batches.dedup();
    for batch in batches {
        let results = join_all(
            creations
                .iter()
                .filter(|(b, _)| *b == batch)
                .map(|(_, pod)| create_one(shared, subject, pods, pod)),
        )
        .await;
        let mut first_error = None;
        for result in results {
            match result {
                Ok(()) => created += 1,
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        if let Some(error) = first_error {
            return Err(error);
        }
    }
    Ok(created)
}

async fn create_one(
    shared: &Shared,
    subject: &Subject<'_>,
    pods: &Api<Pod>,
    pod: &Pod,
) -> Result<(), ActionError> {
    match actions::create(pods, pod).await {
        Ok(created) => {
            let name = created.name_any();
            let key = key_of("pod", subject.namespace, &name);
            shared
                .expectations
                .expect(subject.uid, Operation::Create, &key);
            // The watch may have shown it before the expectation was written.
            if shared
                .pods
                .get(subject.uid)
                .iter()
                .any(|cached| cached.name_any() == name)
            {
                shared
                    .expectations
                    .observe(subject.uid, Operation::Create, &key);
            }
            shared.events.record(
                subject.reference,
                Record::created(&name).about("Pod", subject.namespace, &name),
            );
            Ok(())
        }
        Err(error) => {
            if !matches!(error, ActionError::Conflict { .. }) {
                shared
                    .events
                    .record(subject.reference, Record::create_failed(&error));
            }
            Err(error)
        }
    }
}

async fn delete_pod(
    shared: &Shared,
    subject: &Subject<'_>,
    pods: &Api<Pod>,
    pod: &Pod,
) -> Result<(), ActionError> {
    let name = pod.name_any();
    let key = key_of("pod", subject.namespace, &name);
    shared
        .expectations
        .expect(subject.uid, Operation::Delete, &key);
    match actions::delete(pods, pod).await {
        Ok(()) => {}
        // Gone already: nothing more will be seen.
        Err(ActionError::NotFound { .. }) => {
            shared
                .expectations
                .observe(subject.uid, Operation::Delete, &key);
            return Ok(());
        }
        Err(error) => {
            shared
                .expectations
                .observe(subject.uid, Operation::Delete, &key);
            if !matches!(error, ActionError::Conflict { .. }) {
                shared.events.record(
                    subject.reference,
                    Record::delete_failed(&error).about("Pod", subject.namespace, &name),
                );
            }
            return Err(error);
        }
    }
    let still_cached = shared
        .pods
        .get(subject.uid)
        .iter()
        .any(|cached| cached.name_any() == name && cached.meta().deletion_timestamp.is_none());
    if !still_cached {
        shared
            .expectations
            .observe(subject.uid, Operation::Delete, &key);
    }
    shared.events.record(
        subject.reference,
        Record::deleted(&name).about("Pod", subject.namespace, &name),
    );
    Ok(())
}
