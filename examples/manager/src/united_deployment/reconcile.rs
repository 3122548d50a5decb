//! One reconcile of a UnitedDeployment: keep the template's revision, decide with
//! [`kruise_schedule::united_deployment::plan`], write the subset workloads, record events, write the
//! status.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{ControllerRevision, Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::apps::v1beta1::{UnitedDeployment, UnitedDeploymentConditionType};
use kruise_runtime::Indexed;
use kruise_runtime::actions;
use kruise_runtime::events::{EventRecord, EventSink};
use kruise_runtime::expectations::{Operation, SharedExpectations};
use kruise_runtime::harness::object_key;
use kruise_schedule::united_deployment::adaptive::is_adaptive;
use kruise_schedule::united_deployment::plan::{Plan, PlanInput, plan};
use kruise_schedule::united_deployment::status::{remove_condition, set_condition};
use kube::runtime::controller::Action;
use kube::{Api, Client, ResourceExt};

use super::UnitedDeploymentControllerError;
use super::reserved_labels::write_reserved_labels;
use super::revisions::ensure_update;
use super::subset_pods::subset_pods;
use super::subsets::{self, SubsetSources};
use crate::workload::history;
use crate::workload::owner::key_of;

/// How soon a UnitedDeployment whose subset workloads have not caught up is looked at again.
const CATCHING_UP_RESYNC: Duration = Duration::from_secs(2);

/// How soon a settled UnitedDeployment is looked at again (changes of its pods, StatefulSets and
/// Deployments trigger it sooner).
const SETTLED_RESYNC: Duration = Duration::from_secs(60);

/// How long after a pod's timeout or a subset's recovery the `Adaptive` strategy looks again.
const RECHECK_MARGIN: Duration = Duration::from_millis(100);

/// What every reconcile shares.
pub struct Shared {
    /// The (fenced) client writes go through.
    pub client: Client,
    /// StatefulSets by controlling UnitedDeployment UID.
    pub statefulsets: Indexed<StatefulSet>,
    /// Deployments by controlling UnitedDeployment UID.
    pub deployments: Indexed<Deployment>,
    /// ControllerRevisions by controlling UnitedDeployment UID.
    pub revisions: Indexed<ControllerRevision>,
    /// The pods with a subset label by namespace (the `Adaptive` strategy reads them).
    pub pods: Indexed<Pod>,
    /// Creates and deletes of StatefulSets and Deployments not yet seen by the informers.
    pub expectations: Arc<SharedExpectations>,
    /// Where events go.
    pub events: EventSink,
}

/// Reconciles one UnitedDeployment.
///
/// # Errors
/// A write failed; it is retried.
pub async fn reconcile(
    united_deployment: Arc<UnitedDeployment>,
    shared: Arc<Shared>,
) -> Result<Action, UnitedDeploymentControllerError> {
    let ud = united_deployment.as_ref();
    if ud.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let uid = ud.uid().unwrap_or_default();
    let namespace = ud.namespace().unwrap_or_default();
    if !shared.expectations.satisfied(&uid).0 {
        // The informers have not seen our last creates or deletes yet; their arrival requeues us.
        return Ok(Action::requeue(Duration::from_secs(1)));
    }
    let revisions_api: Api<ControllerRevision> = Api::namespaced(shared.client.clone(), &namespace);
    let mut sorted = shared.revisions.get(&uid);
    history::sort(&mut sorted);
    let ensured = match ensure_update(&revisions_api, ud, &sorted).await {
        Ok(ensured) => ensured,
        Err(error) => {
            publish(
                &shared,
                ud,
                true,
                "FailedRevisionProvision",
                error.to_string(),
            );
            return Err(error);
        }
    };
    let sources = SubsetSources {
        client: &shared.client,
        statefulsets: &shared.statefulsets,
        deployments: &shared.deployments,
    };
    let workloads = sources.controlled_by(&uid, &namespace).await?;
    let update_revision = ensured.revision.name_any();
    let now = Time(k8s_openapi::jiff::Timestamp::now());
    let pods = if is_adaptive(ud) {
        subset_pods(&shared.pods.get(&namespace), ud)
    } else {
        BTreeMap::new()
    };
    let decided = plan(&PlanInput {
        united_deployment: ud,
        workloads: &workloads,
        update_revision: &update_revision,
        collision_count: ensured.collision_count,
        now: &now,
        pods: &pods,
    });
    let plan = match decided {
        Ok(plan) => plan,
        Err(error) => {
            // The spec itself is wrong: say so and wait for it to change.
            publish(
                &shared,
                ud,
                true,
                "FailedSpecifySubsetReplicas",
                error.to_string(),
            );
            return Ok(Action::await_change());
        }
    };
    let failures = execute(&shared, ud, &uid, &namespace, &plan).await;
    let mut status = plan.status.clone();
    let type_ = UnitedDeploymentConditionType::SubsetFailure;
    if failures.provision.is_empty() && failures.update.is_empty() {
        remove_condition(&mut status, &type_);
    } else {
        let all = [failures.provision.as_slice(), failures.update.as_slice()].concat();
        set_condition(&mut status, &type_, "True", "Error", &all.join("; "), &now);
    }
    if !failures.provision.is_empty() {
        let message = failures.provision.join("; ");
        let provisioned = UnitedDeploymentConditionType::SubsetProvisioned;
        set_condition(&mut status, &provisioned, "False", "Error", &message, &now);
    }
    if !failures.update.is_empty() {
        let message = failures.update.join("; ");
        let updated = UnitedDeploymentConditionType::SubsetUpdated;
        set_condition(&mut status, &updated, "False", "Error", &message, &now);
    }
    if ud.status.as_ref() != Some(&status) {
        let api: Api<UnitedDeployment> = Api::namespaced(shared.client.clone(), &namespace);
        actions::replace_status(&api, ud, &status).await?;
    }
    let all = [failures.provision, failures.update].concat();
    if all.is_empty() {
        // CloneSets and Advanced StatefulSets are not watched: look again until they have caught up,
        // and (Adaptive) when a pending pod would time out or a subset recover.
        let resync = if plan.settled {
            SETTLED_RESYNC
        } else {
            CATCHING_UP_RESYNC
        };
        Ok(Action::requeue(
            plan.recheck_after
                .map_or(resync, |recheck| resync.min(recheck + RECHECK_MARGIN)),
        ))
    } else {
        Err(UnitedDeploymentControllerError::Subsets {
            united_deployment: object_key(ud),
            message: all.join("; "),
        })
    }
}

/// The writes of a plan that failed, as messages.
#[derive(Default)]
struct Failures {
    /// Creates and deletes.
    provision: Vec<String>,
    /// Updates.
    update: Vec<String>,
}

async fn execute(
    shared: &Shared,
    ud: &UnitedDeployment,
    uid: &str,
    namespace: &str,
    plan: &Plan,
) -> Failures {
    let mut failures = Failures::default();
    let relabelled = write_reserved_labels(&shared.client, namespace, &plan.relabel).await;
    if !relabelled.is_empty() {
        // The allocation counted on those labels: write no workload until they are in place.
        let message = relabelled.join("; ");
        publish(shared, ud, true, "FailedLabelReservedPods", message);
        failures.update = relabelled;
        return failures;
    }
    for event in &plan.events {
        publish(
            shared,
            ud,
            event.warning,
            event.reason,
            event.message.clone(),
        );
    }
    for deletion in &plan.delete {
        let kind = deletion.kind.as_str();
        let key = key_of(kind, namespace, &deletion.name);
        if watched(deletion.kind) {
            shared.expectations.expect(uid, Operation::Delete, &key);
        }
        match subsets::delete(&shared.client, namespace, deletion.kind, &deletion.name).await {
            Ok(()) => publish(
                shared,
                ud,
                false,
                "SuccessfulDeleteSubset",
                format!("deleted {kind} {} ({})", deletion.name, deletion.reason),
            ),
            Err(error) => {
                shared.expectations.observe(uid, Operation::Delete, &key);
                let message = format!("deleting {kind} {}: {error}", deletion.name);
                publish(shared, ud, true, "FailedDeleteSubset", message.clone());
                failures.provision.push(message);
            }
        }
    }
    for workload in &plan.create {
        let kind = workload.kind().as_str();
        let subset = workload.observe().subset.unwrap_or_default();
        match subsets::create(&shared.client, namespace, workload).await {
            Ok(name) => {
                // Seen by the informer or not yet, the next reconcile must not create it again
                // (CloneSets and Advanced StatefulSets are listed afresh: nothing to expect).
                if watched(workload.kind()) {
                    let key = key_of(kind, namespace, &name);
                    shared.expectations.expect(uid, Operation::Create, &key);
                    observe_if_cached(shared, workload, uid, &key, &name, namespace);
                }
                publish(
                    shared,
                    ud,
                    false,
                    "SuccessfulCreateSubset",
                    format!("created {kind} {name} for subset {subset}"),
                );
            }
            Err(error) => {
                let message = format!("creating the {kind} of subset {subset}: {error}");
                publish(shared, ud, true, "FailedCreateSubset", message.clone());
                failures.provision.push(message);
            }
        }
    }
    for workload in &plan.update {
        let observed = workload.observe();
        if let Err(error) = subsets::replace(&shared.client, namespace, workload).await {
            let message = format!(
                "updating {} {}: {error}",
                observed.kind.as_str(),
                observed.name
            );
            publish(shared, ud, true, "FailedUpdateSubset", message.clone());
            failures.update.push(message);
        }
    }
    failures
}

/// Whether workloads of `kind` are read from an informer (and so need expectations).
fn watched(kind: kruise_schedule::united_deployment::workload::WorkloadKind) -> bool {
    use kruise_schedule::united_deployment::workload::WorkloadKind;
    matches!(kind, WorkloadKind::StatefulSet | WorkloadKind::Deployment)
}

/// Observes a create the informer already delivered before the expectation was recorded.
fn observe_if_cached(
    shared: &Shared,
    workload: &kruise_schedule::united_deployment::workload::SubsetWorkload,
    uid: &str,
    key: &str,
    name: &str,
    namespace: &str,
) {
    use kruise_schedule::united_deployment::workload::WorkloadKind;
    let cached = |names: Vec<(String, Option<String>)>| {
        names
            .iter()
            .any(|(n, ns)| n == name && ns.as_deref() == Some(namespace))
    };
    let seen = match workload.kind() {
        WorkloadKind::CloneSet | WorkloadKind::AdvancedStatefulSet => false,
        WorkloadKind::StatefulSet => cached(names_of(&shared.statefulsets, uid)),
        WorkloadKind::Deployment => cached(names_of(&shared.deployments, uid)),
    };
    if seen {
        shared.expectations.observe(uid, Operation::Create, key);
    }
}

fn names_of<K>(index: &Indexed<K>, uid: &str) -> Vec<(String, Option<String>)>
where
    K: kube::Resource<DynamicType = ()> + Clone + Send + Sync + 'static,
{
    index
        .get(uid)
        .iter()
        .map(|object| (object.name_any(), object.namespace()))
        .collect()
}

fn publish(
    shared: &Shared,
    ud: &UnitedDeployment,
    warning: bool,
    reason: &'static str,
    message: String,
) {
    shared
        .events
        .record_for(ud, EventRecord::new(warning, reason, message));
}
