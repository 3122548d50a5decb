//! One reconcile: observe the namespaces and the copies, decide per namespace, write, and write the status.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1alpha1::{ResourceDistribution, ResourceDistributionConditionType as Type};
use kruise_runtime::actions;
use kruise_runtime::events::{EventRecord, EventSink};
use kruise_schedule::resource_distribution::SUPPORTED_KINDS;
use kruise_schedule::resource_distribution::hash::resource_hash;
use kruise_schedule::resource_distribution::status::{Failure, StatusInput, status};
use kruise_schedule::resource_distribution::targets::{NamespaceView, target_namespaces};
use kruise_schedule::resource_distribution::validation::resource_identity;
use kube::runtime::controller::Action;
use kube::runtime::reflector::Store;
use kube::{Api, Client, ResourceExt};

use super::ResourceDistributionControllerError;
use super::copies::CopyStores;
use super::write::{Outcome, Source, sync_namespace};

/// Writes sent side by side in one reconcile.
const CONCURRENT_WRITES: usize = 8;
/// When to look again after a write found the cluster changed under it.
const STALE_RETRY: Duration = Duration::from_secs(1);
/// When to look again after failures (a conflict or a missing namespace also retries on its own change).
const FAILURE_RETRY: Duration = Duration::from_secs(30);
/// When to look again at a distributor that cannot be worked on (a bad resource or selector).
const INVALID_RECHECK: Duration = Duration::from_secs(60);

/// What every reconcile shares.
pub(super) struct Shared {
    pub(super) client: Client,
    pub(super) namespaces: Store<Namespace>,
    pub(super) copies: CopyStores,
    pub(super) events: EventSink,
}

pub(super) async fn reconcile(
    distributor: Arc<ResourceDistribution>,
    shared: Arc<Shared>,
) -> Result<Action, ResourceDistributionControllerError> {
    if distributor.metadata.deletion_timestamp.is_some() {
        // The garbage collector deletes the copies through their owner reference.
        return Ok(Action::await_change());
    }
    let name = distributor.name_any();
    let (api_version, kind, resource_name) = resource_identity(&distributor.spec.resource);
    if api_version != "v1" || !SUPPORTED_KINDS.contains(&kind) || resource_name.is_empty() {
        invalid(
            &shared,
            &distributor,
            format!(
                "spec.resource: Invalid value: \"{api_version} {kind} {resource_name}\": \
                 must be a v1 Secret or ConfigMap with a name"
            ),
        );
        return Ok(Action::requeue(INVALID_RECHECK));
    }
    let namespaces = shared.namespaces.state();
    let empty = BTreeMap::new();
    let views: Vec<NamespaceView<'_>> = namespaces
        .iter()
        .map(|namespace| NamespaceView::of(namespace, &empty))
        .collect();
    let targets = match target_namespaces(&distributor.spec.targets, &views) {
        Ok(targets) => targets,
        Err(error) => {
            invalid(&shared, &distributor, error.to_string());
            return Ok(Action::requeue(INVALID_RECHECK));
        }
    };
    let hash = resource_hash(&distributor.spec.resource);
    let source = Source {
        distributor: &distributor,
        distributor_name: &name,
        kind,
        name: resource_name,
        hash: &hash,
    };
    let mut failures: Vec<Failure> = targets
        .missing
        .iter()
        .map(|namespace| {
            Failure::new(
                namespace.clone(),
                Type::NamespaceNotExists,
                format!("namespace {namespace} does not exist"),
            )
        })
        .collect();
    let jobs: Vec<(&str, bool, Option<ObjectMeta>)> = views
        .iter()
        .map(|namespace| {
            (
                namespace.name,
                targets.contains(namespace.name),
                shared.copies.get(kind, namespace.name, resource_name),
            )
        })
        .collect();
    let writes: Vec<_> = jobs
        .iter()
        .map(|(namespace, targeted, existing)| {
            sync_namespace(
                &shared.client,
                &source,
                namespace,
                *targeted,
                existing.as_ref(),
            )
        })
        .collect();
    let outcomes: Vec<Outcome> = futures::stream::iter(writes)
        .buffer_unordered(CONCURRENT_WRITES)
        .collect()
        .await;
    let mut stale = false;
    for outcome in outcomes {
        match outcome {
            Outcome::Done => {}
            Outcome::Stale => stale = true,
            Outcome::Failed(failure) => failures.push(failure),
        }
    }
    if stale {
        // A write met a newer object: the counts would be guesses; the next pass, soon, writes them.
        return Ok(Action::requeue(STALE_RETRY));
    }
    failures.sort_by(|a, b| a.namespace.cmp(&b.namespace));
    let new_status = status(&StatusInput {
        previous: distributor.status.as_ref(),
        generation: distributor.metadata.generation.unwrap_or_default(),
        targets: &targets,
        failures: &failures,
        now: Time(Timestamp::now()),
    });
    if distributor.status.as_ref() != Some(&new_status) {
        let api: Api<ResourceDistribution> = Api::all(shared.client.clone());
        actions::replace_status(&api, distributor.as_ref(), &new_status).await?;
        for failure in &failures {
            shared.events.record_for(
                distributor.as_ref(),
                EventRecord::new(true, reason_of(&failure.condition), failure.message.clone()),
            );
        }
    }
    Ok(if failures.is_empty() {
        Action::await_change()
    } else {
        Action::requeue(FAILURE_RETRY)
    })
}

/// Records why the distributor cannot be worked on.
fn invalid(shared: &Shared, distributor: &ResourceDistribution, message: String) {
    tracing::warn!(distributor = %distributor.name_any(), %message, "cannot distribute");
    shared
        .events
        .record_for(distributor, EventRecord::new(true, "InvalidSpec", message));
}

/// The event reason of a failure: its condition type.
fn reason_of(condition: &Type) -> &'static str {
    match condition {
        Type::ConflictOccurred => "ConflictOccurred",
        Type::NamespaceNotExists => "NamespaceNotExists",
        Type::GetResourceFailed => "GetResourceFailed",
        Type::CreateResourceFailed => "CreateResourceFailed",
        Type::UpdateResourceFailed => "UpdateResourceFailed",
        Type::DeleteResourceFailed => "DeleteResourceFailed",
        _ => "DistributionFailed",
    }
}
