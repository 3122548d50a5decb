//! Carrying out a CloneSet plan: creations in slow-start batches (1, 2, 4, ... pods at a time, stopping at
//! the first batch with a failure), deletions in the planned order, stopping at the first failure, and pod
//! patches several pods at a time (each pod's actions in order; one pod's failure stops only that pod's
//! writes, and the reconcile then fails with it). Every create and delete is announced to the expectations
//! before it is sent (and withdrawn if it fails), every pod write records the `resourceVersion` it produced,
//! and every outcome becomes an Event.

use std::time::Duration;

use futures::future::join_all;
use k8s_openapi::api::core::v1::{ObjectReference, PersistentVolumeClaim, Pod};
use k8s_openapi::jiff::Timestamp;
use kruise_schedule::cloneset::{Action, ActionKind, Plan, Rule, SpecificKind, Target};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Resource, ResourceExt};

use super::context::Shared;
use super::error::ReconcileError;
use super::events::{EventRecord, Record};
use super::request::{PodWrite, pod_writes};
use super::whole_pods::WholePods;
use crate::actions::{self, ActionError};
use crate::expectations::Operation;
use crate::unavailable_budget::update_check::{REFUSED_RETRY, update_allowed};
use crate::workload::owner::key_of;
use crate::workload::pod_runs::{self, patch_by_pod};
use crate::workload::send_writes::send_writes;

/// The CloneSet a plan is executed for, and what the plan was made from.
pub struct Subject<'a> {
    /// `namespace/name`.
    pub key: &'a str,
    /// Its namespace.
    pub namespace: &'a str,
    /// Its UID (the expectations' owner key).
    pub uid: &'a str,
    /// The reference Events are recorded against.
    pub reference: &'a ObjectReference,
    /// The pods the plan indexes into (read whole when acted on).
    pub pods: &'a WholePods<'a>,
    /// The claims the plan indexes into.
    pub claims: &'a [PersistentVolumeClaim],
    /// `status.currentRevision` and `status.updateRevision` names.
    pub revisions: (&'a str, &'a str),
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
    /// Pod writes sent (lifecycle, in place, labels).
    pub patched: usize,
    /// The longest in-place grace period still running, if any.
    pub requeue_after: Option<Duration>,
}

/// One pod to create with the claims it mounts.
struct Creation<'p> {
    batch: u32,
    claims: Vec<&'p PersistentVolumeClaim>,
    pod: &'p Pod,
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
    let claims: Api<PersistentVolumeClaim> =
        Api::namespaced(shared.client.clone(), subject.namespace);
    let mut executed = Executed::default();
    let mut actions = plan.actions.iter().peekable();
    let fail = |source: ActionError| ReconcileError::Action {
        cloneset: subject.key.to_owned(),
        source,
    };
    while let Some(action) = actions.next() {
        match &action.kind {
            ActionKind::CreateClaim { .. } | ActionKind::CreatePod { .. } => {
                let mut creations = Vec::new();
                let mut pending_claims = Vec::new();
                let mut next = Some(action);
                while let Some(current) = next {
                    match &current.kind {
                        ActionKind::CreateClaim { claim } => pending_claims.push(claim.as_ref()),
                        ActionKind::CreatePod { pod, batch, .. } => creations.push(Creation {
                            batch: *batch,
                            claims: std::mem::take(&mut pending_claims),
                            pod: pod.as_ref(),
                        }),
                        _ => break,
                    }
                    next = actions.next_if(|a| {
                        matches!(
                            a.kind,
                            ActionKind::CreateClaim { .. } | ActionKind::CreatePod { .. }
                        )
                    });
                }
                executed.created += create_in_batches(shared, subject, &pods, &claims, &creations)
                    .await
                    .map_err(fail)?;
            }
            ActionKind::DeletePod { pod } => {
                let Some(pod) = subject.pods.get(*pod) else {
                    continue;
                };
                delete_pod(shared, subject, &pods, &pod)
                    .await
                    .map_err(fail)?;
                executed.deleted += 1;
            }
            ActionKind::Specific(SpecificKind::DeleteClaim { claim }) => {
                let Some(claim) = subject.claims.get(*claim) else {
                    continue;
                };
                let key = key_of("pvc", subject.namespace, &claim.name_any());
                shared
                    .expectations
                    .expect(subject.uid, Operation::Delete, &key);
                if let Err(error) = actions::delete(&claims, claim).await {
                    shared
                        .expectations
                        .observe(subject.uid, Operation::Delete, &key);
                    record_failure(shared, subject, &error, || {
                        Record::claim_delete_failed(&claim.name_any(), &error).about(
                            "PersistentVolumeClaim",
                            subject.namespace,
                            &claim.name_any(),
                        )
                    });
                    return Err(fail(error));
                }
                if shared
                    .claims
                    .get(subject.uid)
                    .iter()
                    .all(|c| c.name_any() != claim.name_any())
                {
                    shared
                        .expectations
                        .observe(subject.uid, Operation::Delete, &key);
                }
            }
            _ => {
                let mut run = vec![action];
                while let Some(next) = actions.next_if(|next| writes_to_a_pod(&next.kind)) {
                    run.push(next);
                }
                let patched = patch_by_pod(
                    &run,
                    |action| action.kind.pod(),
                    |(index, actions)| patch_pod(shared, subject, plan, index, actions),
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

/// Whether an action is carried out by patches of an existing pod (everything but creations, deletions
/// and claims).
fn writes_to_a_pod(kind: &ActionKind) -> bool {
    !matches!(
        kind,
        ActionKind::CreateClaim { .. }
            | ActionKind::CreatePod { .. }
            | ActionKind::DeletePod { .. }
            | ActionKind::Specific(SpecificKind::DeleteClaim { .. })
    )
}

/// What the pod writes of a run of actions did.
type Patched = pod_runs::Patched<ReconcileError>;

/// Sends the patches of one pod's actions in order, stopping at its first failure. When an action's writes
/// were conditional on the `resourceVersion` the plan was made from, the next action's precondition moves
/// to the version those writes produced (the pod changed only by this plan's own writes since), instead
/// of failing with a conflict on the plan's own earlier write.
async fn patch_pod(
    shared: &Shared,
    subject: &Subject<'_>,
    plan: &Plan,
    index: usize,
    actions: Vec<&Action>,
) -> Patched {
    let mut patched = Patched::default();
    let Some(pod) = subject.pods.get(index) else {
        return patched;
    };
    let pod: &Pod = &pod;
    let api: Api<Pod> = Api::namespaced(shared.client.clone(), subject.namespace);
    let observed = pod.metadata.resource_version.as_deref();
    let mut current: Option<String> = None;
    for action in actions {
        let kind = &action.kind;
        let revision = target_revision(subject, &action.rule);
        if matches!(kind, ActionKind::UpdateInPlace { .. })
            && !update_allowed(&shared.client, shared.budgets.as_ref(), pod).await
        {
            patched.requeue_at_least(Some(REFUSED_RETRY));
            return patched;
        }
        let mut writes = match pod_writes(kind, pod, subject.now, &plan.update_options) {
            Ok(writes) => writes,
            Err(source) => {
                patched.error = Some(ReconcileError::InPlace {
                    cloneset: subject.key.to_owned(),
                    pod: pod.name_any(),
                    source,
                });
                return patched;
            }
        };
        if let (Some(observed), Some(current)) = (observed, current.as_deref()) {
            for write in &mut writes {
                write.rebase(observed, current);
            }
        }
        let chained = current.is_some()
            || (observed.is_some() && writes.first().and_then(PodWrite::precondition) == observed);
        match send_writes(&shared.expectations, &api, pod, &writes).await {
            Ok(sent) => {
                patched.sent += sent.writes;
                if chained && sent.resource_version.is_some() {
                    current = sent.resource_version;
                }
                match kind {
                    ActionKind::UpdateInPlace { .. } => {
                        shared.events.record(
                            subject.reference,
                            Record::updated_in_place(&pod.name_any(), revision).about(
                                "Pod",
                                subject.namespace,
                                &pod.name_any(),
                            ),
                        );
                    }
                    ActionKind::Specific(SpecificKind::MarkSpecifiedDelete { .. }) => {
                        shared.events.record(
                            subject.reference,
                            Record::marked_for_recreate(&pod.name_any(), revision).about(
                                "Pod",
                                subject.namespace,
                                &pod.name_any(),
                            ),
                        );
                    }
                    ActionKind::RefreshInPlace { outcome, .. } => {
                        patched.requeue_at_least(outcome.requeue_after);
                    }
                    _ => {}
                }
            }
            Err(error) => {
                match kind {
                    ActionKind::UpdateInPlace { .. } => {
                        record_failure(shared, subject, &error, || {
                            Record::in_place_failed(&pod.name_any(), revision, &error).about(
                                "Pod",
                                subject.namespace,
                                &pod.name_any(),
                            )
                        });
                    }
                    ActionKind::Specific(SpecificKind::MarkSpecifiedDelete { .. }) => {
                        record_failure(shared, subject, &error, || {
                            Record::recreate_failed(&pod.name_any(), revision, &error).about(
                                "Pod",
                                subject.namespace,
                                &pod.name_any(),
                            )
                        });
                    }
                    _ => {}
                }
                patched.error = Some(ReconcileError::Action {
                    cloneset: subject.key.to_owned(),
                    source: error,
                });
                return patched;
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

/// The revision an update action moves a pod to (for Event messages).
fn target_revision<'a>(subject: &Subject<'a>, rule: &Rule) -> &'a str {
    match rule {
        Rule::Update {
            target: Target::Current,
            ..
        } => subject.revisions.0,
        _ => subject.revisions.1,
    }
}

/// Warning Events for failures other than conflicts (a conflict only means the cache was behind; the
/// next reconcile decides again).
fn record_failure(
    shared: &Shared,
    subject: &Subject<'_>,
    error: &ActionError,
    record: impl FnOnce() -> EventRecord,
) {
    if !matches!(error, ActionError::Conflict { .. }) {
        shared.events.record(subject.reference, record());
    }
}

async fn create_in_batches(
    shared: &Shared,
    subject: &Subject<'_>,
    pods: &Api<Pod>,
    claims: &Api<PersistentVolumeClaim>,
    creations: &[Creation<'_>],
) -> Result<usize, ActionError> {
    let mut created = 0;
    let mut batches: Vec<u32> = creations.iter().map(|c| c.batch).collect();
    batches.dedup();
    for batch in batches {
        let results = join_all(
            creations
                .iter()
                .filter(|creation| creation.batch == batch)
                .map(|creation| create_one(shared, subject, pods, claims, creation)),
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
    claims: &Api<PersistentVolumeClaim>,
    creation: &Creation<'_>,
) -> Result<(), ActionError> {
    for claim in &creation.claims {
        let key = key_of("pvc", subject.namespace, &claim.name_any());
        shared
            .expectations
            .expect(subject.uid, Operation::Create, &key);
        match actions::create(claims, *claim).await {
            Ok(_) => {}
            // It exists already (a claim kept for reuse the cache had not shown): mount it.
            Err(ActionError::Conflict { .. }) => {
                shared
                    .expectations
                    .observe(subject.uid, Operation::Create, &key);
            }
            Err(error) => {
                shared
                    .expectations
                    .observe(subject.uid, Operation::Create, &key);
                record_failure(shared, subject, &error, || {
                    Record::claim_create_failed(&claim.name_any(), &error).about(
                        "PersistentVolumeClaim",
                        subject.namespace,
                        &claim.name_any(),
                    )
                });
                return Err(error);
            }
        }
    }
    let pod = creation.pod;
    let key = key_of("pod", subject.namespace, &pod.name_any());
    shared
        .expectations
        .expect(subject.uid, Operation::Create, &key);
    match actions::create(pods, pod).await {
        Ok(_) => {
            shared.events.record(
                subject.reference,
                Record::created(&pod.name_any()).about("Pod", subject.namespace, &pod.name_any()),
            );
            Ok(())
        }
        Err(error) => {
            shared
                .expectations
                .observe(subject.uid, Operation::Create, &key);
            record_failure(shared, subject, &error, || {
                Record::create_failed(&pod.name_any(), &error).about(
                    "Pod",
                    subject.namespace,
                    &pod.name_any(),
                )
            });
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
    let key = key_of("pod", subject.namespace, &pod.name_any());
    shared
        .expectations
        .expect(subject.uid, Operation::Delete, &key);
    if let Err(error) = actions::delete(pods, pod).await {
        shared
            .expectations
            .observe(subject.uid, Operation::Delete, &key);
        record_failure(shared, subject, &error, || {
            Record::delete_failed(&pod.name_any(), &error).about(
                "Pod",
                subject.namespace,
                &pod.name_any(),
            )
        });
        return Err(error);
    }
    // Already gone from the cache (deleted by someone else first): nothing more will be seen.
    let still_cached = shared
        .pods
        .informer()
        .get(&ObjectRef::new(&pod.name_any()).within(subject.namespace))
        .is_some_and(|cached| cached.meta().deletion_timestamp.is_none());
    if !still_cached {
        shared
            .expectations
            .observe(subject.uid, Operation::Delete, &key);
    }
    shared.events.record(
        subject.reference,
        Record::deleted(&pod.name_any()).about("Pod", subject.namespace, &pod.name_any()),
    );
    Ok(())
}
