//! The ResourceDistribution controller of kruise-manager (gate `ResourceDistributionGate`, off by default
//! as upstream): for each (cluster-scoped, v1alpha1) ResourceDistribution it works out the target
//! namespaces from the shared Namespace informer, creates the missing copies of `spec.resource`, replaces
//! the copies whose hash annotation is not the source's, reports objects it did not write as conflicts,
//! deletes its copies from namespaces no longer targeted, and writes the status (whole, through the status
//! subresource). The decisions are [`kruise_schedule::resource_distribution`]'s.
//!
//! It reconciles on changes of a distributor, of any namespace (a new labelled namespace gets its copy at
//! once), and of any Secret or ConfigMap carrying the distributed kind and name or the `from` annotation,
//! seen through a metadata-only watch (module `copies`): Secrets are never held whole.
//!
//! ```no_run
//! use kruise_manager::resource_distribution::ResourceDistributionController;
//! use kruise_runtime::controllers::ControllerSet;
//!
//! let mut controllers = ControllerSet::new();
//! controllers.register(ResourceDistributionController);
//! assert_eq!(controllers.names(), ["resourcedistribution"]);
//! ```

mod copies;
mod reconcile;
mod write;

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kruise_api::apps::v1alpha1::ResourceDistribution;
use kruise_runtime::actions::ActionError;
use kruise_runtime::controllers::{
    ControllerContext, ControllerError, ControllerFuture, ManagedController,
};
use kruise_runtime::harness::{self, Retry};
use kruise_schedule::resource_distribution::validation::resource_identity;
use kube::runtime::Controller;
use kube::runtime::reflector::{ObjectRef, Store};

use self::copies::{CopyStores, Touched};
use self::reconcile::{Shared, reconcile};

/// The ResourceDistribution controller, registered in kruise-manager's
/// [`ControllerSet`](kruise_runtime::controllers::ControllerSet) when the gate is on.
#[derive(Clone, Copy, Debug, Default)]
pub struct ResourceDistributionController;

impl ManagedController for ResourceDistributionController {
    fn name(&self) -> &str {
        "resourcedistribution"
    }

    fn run(&self, context: ControllerContext) -> ControllerFuture {
        Box::pin(run(context))
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceDistributionControllerError {
    /// The status write was refused or conflicted.
    #[error(transparent)]
    Action(#[from] ActionError),
}

impl Retry for ResourceDistributionControllerError {
    fn retry_after(&self) -> Duration {
        match self {
            Self::Action(action) => action.requeue_after(),
        }
    }

    fn is_conflict(&self) -> bool {
        matches!(self, Self::Action(ActionError::Conflict { .. }))
    }
}

/// The distributors a changed Secret or ConfigMap concerns: those distributing its kind and name, and the
/// one its `from` annotation names.
fn distributors_of(
    touched: &Touched,
    distributors: &Store<ResourceDistribution>,
) -> Vec<ObjectRef<ResourceDistribution>> {
    let mut found: Vec<ObjectRef<ResourceDistribution>> = distributors
        .state()
        .iter()
        .filter(|distributor| {
            let (_, kind, name) = resource_identity(&distributor.spec.resource);
            kind == touched.kind && name == touched.name
        })
        .map(|distributor| ObjectRef::from_obj(distributor.as_ref()))
        .collect();
    if let Some(from) = &touched.from {
        let reference = ObjectRef::new(from);
        if !found.contains(&reference) {
            found.push(reference);
        }
    }
    found
}

async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let namespace_informer = context.informers.get::<Namespace>();
    let distributor_informer = context.informers.get::<ResourceDistribution>();
    let (copies, touched) = CopyStores::start(context.informers.client());
    let Some(store) = harness::synced_store(&distributor_informer, &context).await else {
        return Ok(());
    };
    let Some(namespaces) = harness::synced_store(&namespace_informer, &context).await else {
        return Ok(());
    };
    tokio::select! {
        () = copies.wait_ready() => {}
        () = context.shutdown.clone().wait() => return Ok(()),
    }
    let shared = Arc::new(Shared {
        client: context.client.clone(),
        namespaces,
        copies,
        events: context.event_sink("resourcedistribution-controller"),
    });
    let every_distributor = store.clone();
    let namespace_changes = namespace_informer.subscribe().flat_map(move |_change| {
        let all: Vec<ObjectRef<ResourceDistribution>> = every_distributor
            .state()
            .iter()
            .map(|distributor| ObjectRef::from_obj(distributor.as_ref()))
            .collect();
        futures::stream::iter(all)
    });
    let by_copy = store.clone();
    let copy_changes =
        touched.flat_map(move |touched| futures::stream::iter(distributors_of(&touched, &by_copy)));
    let controller = Controller::for_shared_stream(distributor_informer.applied(), store)
        .reconcile_on(namespace_changes)
        .reconcile_on(copy_changes);
    harness::drive(controller, &context, reconcile, shared).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use kube::runtime::reflector;
    use kube::runtime::watcher::Event;

    use super::*;

    fn distributor(name: &str, kind: &str, resource: &str) -> ResourceDistribution {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "ResourceDistribution",
            "metadata": {"name": name},
            "spec": {"resource": {"apiVersion": "v1", "kind": kind, "metadata": {"name": resource}},
                "targets": {}}
        }))
        .unwrap()
    }

    #[test]
    fn a_copy_change_concerns_the_distributors_of_its_kind_and_name_and_its_from() {
        let (reader, mut writer) = reflector::store::<ResourceDistribution>();
        writer.apply_watcher_event(&Event::Init);
        for object in [
            distributor("secret-pull", "Secret", "pull"),
            distributor("map-pull", "ConfigMap", "pull"),
            distributor("secret-other", "Secret", "other"),
        ] {
            writer.apply_watcher_event(&Event::InitApply(object));
        }
        writer.apply_watcher_event(&Event::InitDone);
        let names = |touched: &Touched| -> Vec<String> {
            let mut names: Vec<String> = distributors_of(touched, &reader)
                .into_iter()
                .map(|reference| reference.name)
                .collect();
            names.sort();
            names
        };
        let secret = Touched {
            kind: "Secret",
            name: "pull".to_owned(),
            from: None,
        };
        assert_eq!(names(&secret), ["secret-pull"]);
        let renamed = Touched {
            kind: "Secret",
            name: "old-name".to_owned(),
            from: Some("secret-other".to_owned()),
        };
        assert_eq!(names(&renamed), ["secret-other"]);
        let both = Touched {
            kind: "ConfigMap",
            name: "pull".to_owned(),
            from: Some("map-pull".to_owned()),
        };
        assert_eq!(names(&both), ["map-pull"]);
    }
}
