//! Carrying out an Advanced StatefulSet plan in the planned order, stopping at the first failure: runs of
//! creations (each pod after its claims) are sent together, at most [`CONCURRENT_CREATIONS`] at a time, runs
//! of pod writes at most 8 pods at a time (each pod's actions in order), everything else one by one. Every
//! pod create and delete is announced to the expectations before it is sent (and withdrawn if it fails),
//! every pod write records the `resourceVersion` it produced, and every outcome becomes an Event.

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ObjectReference, PersistentVolumeClaim, Pod};
use k8s_openapi::jiff::Timestamp;
use kruise_api::keys::statefulset::OWNED_BY_ASTS_ANNOTATION;
use kruise_schedule::statefulset::{Action, ActionKind, Plan, SpecificKind};
use kube::api::Patch;
use kube::{Api, Resource, ResourceExt};

use super::context::Shared;
use super::error::ReconcileError;
use super::events::{EventRecord, Record, Verb};
use super::request::pod_writes;
use crate::actions::{self, ActionError};
use crate::expectations::Operation;
use crate::workload::owner::key_of;
use crate::workload::pod_runs::{self, patch_by_pod};
use crate::workload::pod_write::failed_test_is_conflict;
use crate::workload::send_writes::send_chained;

/// The most pod creations (each with its claims) in flight at once: a `Parallel` StatefulSet plans every
/// missing pod in one pass, and thousands of requests at once would only queue in the client.
pub const CONCURRENT_CREATIONS: usize = 16;

/// The StatefulSet a plan is executed for, and what the plan was made from.
pub struct Subject<'a> {
    /// `namespace/name`.
    pub key: &'a str,
    /// Its name.
    pub name: &'a str,
    /// Its namespace.
    pub namespace: &'a str,
    /// Its UID (the expectations' owner key).
    pub uid: &'a str,
    /// The reference Events are recorded against.
    pub reference: &'a ObjectReference,
    /// The pods the plan indexes into.
    pub pods: &'a [Pod],
    /// The claims the plan indexes into.
    pub claims: &'a [PersistentVolumeClaim],
    /// The update revision's name (for Event messages).
    pub update_revision: &'a str,
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
    /// Pod and claim writes sent (lifecycle, in place, identity, claim owners).
    pub patched: usize,
}

/// One pod to create with the claims created before it.
struct Creation<'p> {
    claims: Vec<&'p PersistentVolumeClaim>,
    pod: &'p Pod,
}

fn is_creation(action: &Action) -> bool {
    matches!(
        action.kind,
        ActionKind::CreateClaim { .. } | ActionKind::CreatePod { .. }
    )
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
        set: subject.key.to_owned(),
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
                        ActionKind::CreatePod { pod, .. } => creations.push(Creation {
                            claims: std::mem::take(&mut pending_claims),
                            pod: pod.as_ref(),
                        }),
                        _ => break,
                    }
                    next = actions.next_if(|a| is_creation(a));
                }
                // Claims of a Pending pod (upstream creates them without creating the pod).
                for claim in pending_claims {
                    create_claim(shared, subject, &claims, claim, "")
                        .await
                        .map_err(fail)?;
                }
                let sends: Vec<_> = creations
                    .iter()
                    .map(|creation| create_one(shared, subject, &pods, &claims, creation))
                    .collect();
                let results: Vec<_> = futures::stream::iter(sends)
                    .buffer_unordered(CONCURRENT_CREATIONS)
                    .collect()
                    .await;
                let mut first_error = None;
                for result in results {
                    match result {
                        Ok(()) => executed.created += 1,
                        Err(error) => {
                            first_error.get_or_insert(error);
                        }
                    }
                }
                if let Some(error) = first_error {
                    return Err(fail(error));
                }
            }
            ActionKind::DeletePod { pod } => {
                let Some(pod) = subject.pods.get(*pod) else {
                    continue;
                };
                delete_pod(shared, subject, &pods, pod)
                    .await
                    .map_err(fail)?;
                executed.deleted += 1;
            }
            ActionKind::Specific(SpecificKind::UpdateClaimOwners {
                claim,
                owner_references,
            }) => {
                let Some(claim) = subject.claims.get(*claim) else {
                    continue;
                };
                let written = write_claim_owners(subject, &claims, claim, owner_references)
                    .await
                    .map_err(fail)?;
                // The next plan waits for the cache to show it (else it would plan the same write).
                if let Some(version) = written.resource_version() {
                    shared.expectations.expect_version(
                        &key_of("pvc", subject.namespace, &claim.name_any()),
                        &version,
                    );
                }
                executed.patched += 1;
            }
            ActionKind::Specific(SpecificKind::ExpandClaim {
                claim,
                pod,
                storage,
            }) => {
                let Some(claim) = subject.claims.get(*claim) else {
                    continue;
                };
                let pod = subject.pods.get(*pod).map(ResourceExt::name_any);
                let pod = pod.as_deref().unwrap_or("");
                expand_claim(shared, subject, &claims, claim, pod, storage).await?;
                executed.patched += 1;
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
                if let Some(error) = patched.error {
                    return Err(error);
                }
            }
        }
    }
    Ok(executed)
}

/// Whether `action` is a write to one of the plan's pods (lifecycle, in place, identity), which
/// [`patch_pods`] sends together with its neighbours.
fn is_pod_write(action: &Action) -> bool {
    !matches!(
        action.kind,
        ActionKind::CreateClaim { .. }
            | ActionKind::CreatePod { .. }
            | ActionKind::DeletePod { .. }
            | ActionKind::Specific(
                SpecificKind::UpdateClaimOwners { .. } | SpecificKind::ExpandClaim { .. }
            )
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
    let mut writes = Vec::with_capacity(actions.len());
    for action in &actions {
        match pod_writes(&action.kind, pod, subject.now, &plan.update_options) {
            Ok(action_writes) => writes.push(action_writes),
            Err(source) => {
                patched.error = Some(ReconcileError::InPlace {
                    set: subject.key.to_owned(),
                    pod: pod.name_any(),
                    source,
                });
                break;
            }
        }
    }
    let outcomes = send_chained(&shared.expectations, api, pod, writes).await;
    for (action, outcome) in actions.into_iter().zip(outcomes) {
        record_pod_write(shared, subject, &action.kind, pod, outcome.as_ref().err());
        match outcome {
            Ok(sent) => patched.sent += sent.writes,
            Err(source) => {
                patched.error = Some(ReconcileError::Action {
                    set: subject.key.to_owned(),
                    source,
                });
            }
        }
    }
    patched
}

/// The Event of a pod write (in-place updates and identity fixes; refreshes and lifecycle writes have
/// none, as upstream).
fn record_pod_write(
    shared: &Shared,
    subject: &Subject<'_>,
    kind: &ActionKind,
    pod: &Pod,
    error: Option<&ActionError>,
) {
    let name = pod.name_any();
    let record = match (kind, error) {
        (ActionKind::UpdateInPlace { .. }, None) => {
            Record::updated_in_place(&name, subject.update_revision)
        }
        (ActionKind::UpdateInPlace { .. }, Some(error)) if !is_conflict(error) => {
            Record::in_place_failed(&name, subject.update_revision, error)
        }
        (ActionKind::Specific(SpecificKind::UpdateIdentity { .. }), None) => {
            Record::pod(Verb::Update, &name, subject.name)
        }
        (ActionKind::Specific(SpecificKind::UpdateIdentity { .. }), Some(error))
            if !is_conflict(error) =>
        {
            Record::pod_failed(Verb::Update, &name, subject.name, error)
        }
        _ => return,
    };
    shared.events.record(
        subject.reference,
        record.about("Pod", subject.namespace, &name),
    );
}

fn is_conflict(error: &ActionError) -> bool {
    matches!(error, ActionError::Conflict { .. })
}

/// Records `record` unless `error` is a conflict (a conflict only means the cache was behind; the next
/// reconcile decides again).
fn record_failure(
    shared: &Shared,
    subject: &Subject<'_>,
    error: &ActionError,
    record: impl FnOnce() -> EventRecord,
) {
    if !is_conflict(error) {
        shared.events.record(subject.reference, record());
    }
}

/// Creates `claim` (of the pod `pod`); one that exists already (kept from an earlier pod, or not yet in
/// the cache) is used as it is.
async fn create_claim(
    shared: &Shared,
    subject: &Subject<'_>,
    api: &Api<PersistentVolumeClaim>,
    claim: &PersistentVolumeClaim,
    pod: &str,
) -> Result<(), ActionError> {
    let name = claim.name_any();
    match actions::create(api, claim).await {
        Ok(_) => {
            shared.events.record(
                subject.reference,
                Record::claim(Verb::Create, &name, pod, subject.name).about(
                    "PersistentVolumeClaim",
                    subject.namespace,
                    &name,
                ),
            );
            Ok(())
        }
        Err(ActionError::Conflict { .. }) => Ok(()),
        Err(error) => {
            record_failure(shared, subject, &error, || {
                Record::claim_failed(Verb::Create, &name, pod, subject.name, &error).about(
                    "PersistentVolumeClaim",
                    subject.namespace,
                    &name,
                )
            });
            Err(error)
        }
    }
}

async fn create_one(
    shared: &Shared,
    subject: &Subject<'_>,
    pods: &Api<Pod>,
    claims: &Api<PersistentVolumeClaim>,
    creation: &Creation<'_>,
) -> Result<(), ActionError> {
    let pod = creation.pod;
    let name = pod.name_any();
    for claim in &creation.claims {
        create_claim(shared, subject, claims, claim, &name).await?;
    }
    let key = key_of("pod", subject.namespace, &name);
    shared
        .expectations
        .expect(subject.uid, Operation::Create, &key);
    match actions::create(pods, pod).await {
        Ok(_) => {
            shared.events.record(
                subject.reference,
                Record::pod(Verb::Create, &name, subject.name).about(
                    "Pod",
                    subject.namespace,
                    &name,
                ),
            );
            Ok(())
        }
        Err(error) => {
            shared
                .expectations
                .observe(subject.uid, Operation::Create, &key);
            record_failure(shared, subject, &error, || {
                Record::pod_failed(Verb::Create, &name, subject.name, &error).about(
                    "Pod",
                    subject.namespace,
                    &name,
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
    let name = pod.name_any();
    let key = key_of("pod", subject.namespace, &name);
    shared
        .expectations
        .expect(subject.uid, Operation::Delete, &key);
    if let Err(error) = actions::delete(pods, pod).await {
        shared
            .expectations
            .observe(subject.uid, Operation::Delete, &key);
        record_failure(shared, subject, &error, || {
            Record::pod_failed(Verb::Delete, &name, subject.name, &error).about(
                "Pod",
                subject.namespace,
                &name,
            )
        });
        return Err(error);
    }
    // Already gone from the cache (deleted by someone else first): nothing more will be seen.
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
        Record::pod(Verb::Delete, &name, subject.name).about("Pod", subject.namespace, &name),
    );
    Ok(())
}

/// Raises the storage request of `claim` (of pod `pod`) to `storage`, conditional on the `resourceVersion`
/// it was read at, and marks it `apps.kruise.io/owned-by-asts: <set>` so that its changes trigger the
/// StatefulSet; records `SuccessfulResize`, or `FailedResize` with the API server's message.
///
/// # Errors
/// [`ReconcileError::ClaimExpansion`] when the API server refused the write (for example: the claim is not
/// bound, or its StorageClass does not allow expansion), [`ReconcileError::Action`] when the claim changed
/// or is gone since it was read.
async fn expand_claim(
    shared: &Shared,
    subject: &Subject<'_>,
    api: &Api<PersistentVolumeClaim>,
    claim: &PersistentVolumeClaim,
    pod: &str,
    storage: &str,
) -> Result<(), ReconcileError> {
    let name = claim.name_any();
    let object = format!("{}/{name}", subject.namespace);
    let patch = expansion_patch(claim, subject.name, storage);
    let about =
        |record: EventRecord| record.about("PersistentVolumeClaim", subject.namespace, &name);
    match actions::patch::<PersistentVolumeClaim, _>(
        api,
        &object,
        &name,
        None,
        &Patch::Merge(&patch),
    )
    .await
    {
        Ok(written) => {
            if let Some(version) = written.resource_version() {
                shared
                    .expectations
                    .expect_version(&key_of("pvc", subject.namespace, &name), &version);
            }
            shared.events.record(
                subject.reference,
                about(Record::claim(Verb::Resize, &name, pod, subject.name)),
            );
            Ok(())
        }
        Err(source @ (ActionError::Conflict { .. } | ActionError::NotFound { .. })) => {
            Err(ReconcileError::Action {
                set: subject.key.to_owned(),
                source,
            })
        }
        Err(source) => {
            let message = server_message(&source);
            shared.events.record(
                subject.reference,
                about(Record::claim_failed(
                    Verb::Resize,
                    &name,
                    pod,
                    subject.name,
                    &message,
                )),
            );
            Err(ReconcileError::ClaimExpansion {
                set: subject.key.to_owned(),
                claim: name,
                message,
            })
        }
    }
}

/// The merge patch that expands `claim` to `storage` for the StatefulSet `set`.
fn expansion_patch(claim: &PersistentVolumeClaim, set: &str, storage: &str) -> serde_json::Value {
    serde_json::json!({
        "metadata": {
            "resourceVersion": claim.resource_version(),
            "annotations": {OWNED_BY_ASTS_ANNOTATION: set},
        },
        "spec": {"resources": {"requests": {"storage": storage}}},
    })
}

/// What the API server said (its `Status` message), or the error itself.
fn server_message(error: &ActionError) -> String {
    match error {
        ActionError::Api {
            source: kube::Error::Api(status),
            ..
        } if !status.message.is_empty() => status.message.clone(),
        other => other.to_string(),
    }
}

/// Replaces the claim's owner references, conditional on the `resourceVersion` it was read at; the claim
/// as written.
async fn write_claim_owners(
    subject: &Subject<'_>,
    api: &Api<PersistentVolumeClaim>,
    claim: &PersistentVolumeClaim,
    owner_references: &[k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference],
) -> Result<PersistentVolumeClaim, ActionError> {
    let name = claim.name_any();
    let object = format!("{}/{name}", subject.namespace);
    let patch: json_patch::Patch = serde_json::from_value(serde_json::json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": claim.resource_version()},
        {"op": "add", "path": "/metadata/ownerReferences", "value": owner_references},
    ]))
    .map_err(|error| ActionError::Api {
        object: object.clone(),
        source: kube::Error::SerdeError(error),
    })?;
    actions::patch::<PersistentVolumeClaim, ()>(api, &object, &name, None, &Patch::Json(patch))
        .await
        .map_err(failed_test_is_conflict)
}
