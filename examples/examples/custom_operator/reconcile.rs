//! One reconcile of a PodFleet: list its pods, map it onto a CloneSet, plan with the CloneSet planner, execute
//! the plan, write the status.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use k8s_openapi::jiff::tz::TimeZone;
use kruise_api::apps::v1beta1::CloneSetStatus;
use kruise_inplace::calculate::RevisionRef;
use kruise_schedule::cloneset::{Options, PlanInput, Revisions, SeededIds, plan};
use kube::api::{ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, Client, ResourceExt as _};
use serde_json::json;

use crate::cloneset::{FLEET_LABEL, as_cloneset};
use crate::error::ReconcileError;
use crate::execute::{Target, execute};
use crate::fleet::{FIELD_MANAGER, PodFleet, PodFleetStatus};
use crate::revisions::RevisionMemory;

/// How often a fleet is looked at when nothing happens to it or its pods.
const RESYNC: Duration = Duration::from_secs(300);

/// What every reconcile shares.
pub struct Context {
    /// The API client.
    pub client: Client,
    /// The planner's options (feature gates): the defaults.
    pub options: Options,
    /// The pod-template revisions seen so far.
    pub revisions: RevisionMemory,
    /// Where new pods' instance ids come from (a stream that continues from plan to plan).
    pub ids: Mutex<SeededIds>,
}

impl Context {
    /// A context for `client`, instance ids seeded from the clock.
    pub fn new(client: Client) -> Self {
        let nanos = Timestamp::now().as_nanosecond().unsigned_abs() & u128::from(u64::MAX);
        let seed = u64::try_from(nanos).unwrap_or_default() ^ u64::from(std::process::id());
        Self {
            client,
            options: Options::default(),
            revisions: RevisionMemory::default(),
            ids: Mutex::new(SeededIds::new(seed)),
        }
    }
}

/// Brings `fleet`'s pods one step closer to its spec.
///
/// # Errors
/// See [`ReconcileError`]; the controller tries again after [`ReconcileError::retry_after`].
pub async fn reconcile(
    fleet: Arc<PodFleet>,
    context: Arc<Context>,
) -> Result<Action, ReconcileError> {
    let key = format!(
        "{}/{}",
        fleet.namespace().unwrap_or_default(),
        fleet.name_any()
    );
    let missing = |field| ReconcileError::Metadata {
        fleet: key.clone(),
        field,
    };
    let namespace = fleet.namespace().ok_or_else(|| missing("namespace"))?;
    let uid = fleet.uid().ok_or_else(|| missing("uid"))?;
    if fleet.metadata.deletion_timestamp.is_some() {
        // The garbage collector deletes the pods it owns.
        return Ok(Action::await_change());
    }

    let api: Api<Pod> = Api::namespaced(context.client.clone(), &namespace);
    let pods = owned_pods(&api, &fleet, &uid, &key).await?;

    // The revisions: the update revision is the spec's template; the current one is the status's while the
    // operator still knows its template, else the update revision (pods elsewhere are then recreated).
    let cloneset = as_cloneset(&fleet);
    let update =
        context
            .revisions
            .remember(&cloneset)
            .map_err(|source| ReconcileError::Revision {
                fleet: key.clone(),
                source,
            })?;
    let current = fleet
        .status
        .as_ref()
        .map(|status| status.current_revision.clone())
        .filter(|name| context.revisions.knows(name))
        .unwrap_or_else(|| update.clone());
    let known = context.revisions.all();
    let known: Vec<RevisionRef<'_>> = known
        .iter()
        .map(|(name, data)| RevisionRef {
            name,
            data: Some(data),
            annotations: None,
        })
        .collect();

    // Plan: a pure function of the CloneSet, its pods, the revisions and the time.
    let now = Timestamp::now().to_zoned(TimeZone::UTC);
    let revisions = Revisions {
        current: &current,
        update: &update,
        known: &known,
    };
    let plan = {
        let ids = context.ids.lock().unwrap_or_else(PoisonError::into_inner);
        plan(&PlanInput::new(
            &cloneset,
            &pods,
            revisions,
            &now,
            &context.options,
            &*ids,
        ))
    };
    for invalid in &plan.invalid {
        // The planner names the CloneSet's field; the fleet's is `spec.<the last part>`.
        let field = invalid.field.rsplit('.').next().unwrap_or(invalid.field);
        eprintln!(
            "{key}: spec.{field}: invalid value {:?}: {}; {}",
            invalid.value,
            invalid.reason,
            invalid.reading.effect()
        );
    }

    let target = Target {
        fleet: &fleet,
        key: &key,
        api: &api,
        pods: &pods,
        now: now.timestamp(),
    };
    execute(&target, &plan).await?;
    write_status(&context.client, &fleet, &key, &plan.status).await?;
    if let Some(source) = plan.stopped {
        return Err(ReconcileError::Plan { fleet: key, source });
    }
    // The pods' events bring the next reconcile; the planner says when to look anyway (minReadySeconds, …).
    Ok(Action::requeue(plan.requeue_after.unwrap_or(RESYNC)))
}

/// The pods `fleet` controls, read from the API server, not from a cache that may lag behind this operator's
/// own writes (a plan from a stale list would create or delete twice). kruise-manager plans from its
/// informer's cache instead, and waits until the cache shows its earlier writes (its expectations).
async fn owned_pods(
    api: &Api<Pod>,
    fleet: &PodFleet,
    uid: &str,
    key: &str,
) -> Result<Vec<Pod>, ReconcileError> {
    let selector = format!("{FLEET_LABEL}={}", fleet.name_any());
    let listed = api
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|source| ReconcileError::Api {
            fleet: key.to_owned(),
            what: format!("list pods {selector}"),
            source,
        })?;
    Ok(listed
        .items
        .into_iter()
        .filter(|pod| {
            pod.owner_references()
                .iter()
                .any(|owner| owner.controller == Some(true) && owner.uid == uid)
        })
        .collect())
}

/// What to do after a failed reconcile: log it, try again after a pause.
pub fn error_policy(
    _fleet: Arc<PodFleet>,
    error: &ReconcileError,
    _context: Arc<Context>,
) -> Action {
    match error {
        // Expected now and then: the kubelet (or anyone) wrote the pod after the list.
        ReconcileError::Api { fleet, what, .. } if error.is_conflict() => {
            println!("{fleet}: {what}: the pod changed since it was listed; planning again");
        }
        _ => eprintln!("error: {error}"),
    }
    Action::requeue(error.retry_after())
}

/// Writes the planner's status as the fleet's, when it changed.
async fn write_status(
    client: &Client,
    fleet: &PodFleet,
    key: &str,
    planned: &CloneSetStatus,
) -> Result<(), ReconcileError> {
    let status = PodFleetStatus {
        observed_generation: planned.observed_generation,
        replicas: planned.replicas,
        ready_replicas: planned.ready_replicas,
        updated_replicas: planned.updated_replicas,
        updated_ready_replicas: planned.updated_ready_replicas,
        update_revision: planned.update_revision.clone(),
        current_revision: planned.current_revision.clone(),
    };
    if fleet.status.as_ref() == Some(&status) {
        return Ok(());
    }
    let api: Api<PodFleet> =
        Api::namespaced(client.clone(), &fleet.namespace().unwrap_or_default());
    let params = PatchParams {
        field_manager: Some(FIELD_MANAGER.to_owned()),
        ..PatchParams::default()
    };
    api.patch_status(
        &fleet.name_any(),
        &params,
        &Patch::Merge(json!({ "status": status })),
    )
    .await
    .map_err(|source| ReconcileError::Api {
        fleet: key.to_owned(),
        what: "write the status".to_owned(),
        source,
    })?;
    Ok(())
}
