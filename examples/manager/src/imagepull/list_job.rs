//! kruise-manager's ImageListPullJob controller: runs the decisions of [`list_job`] for every list job. Each
//! pass reads the list job's ImagePullJobs from the shared ImagePullJob informer (indexed by controller
//! UID), deletes the children whose image left the list or whose template hash is stale, creates one
//! ImagePullJob per image that has none, and writes the aggregated status. A finished list job is deleted
//! after its `ttlSecondsAfterFinished`. Changes of a child (its status as the ImagePullJob controller
//! writes it) requeue its list job.
//!
//! Children are created with `generateName`, so a create is expected under [`list_job::child_key`] (its
//! template hash and image), known before the create is sent, and a delete under the child's name; until
//! the informer has shown every create and delete of a list job, the list job waits, so a child created
//! by the previous pass is never created twice from a stale cache.
//!
//! Upstream runs it when the ImagePullJob controller runs (gate `ImagePullJobGate`); kruise-manager runs
//! both unconditionally.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use kruise_api::apps::v1beta1::{ImageListPullJob, ImagePullJob};
use kruise_runtime::expectations::{DEFAULT_TIMEOUT, Operation, SharedExpectations};
use kruise_runtime::informer::controller_uid;
use kruise_runtime::{Change, Indexed};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Client, ResourceExt};

use crate::actions::{self, ActionError};
use crate::controllers::{ControllerContext, ControllerError, ControllerSet};
use kruise_runtime::harness::{self, object_key};
use kruise_schedule::image_pull::job::Finished;
use kruise_schedule::image_pull::list_job::{self, Plan};

/// The controller's name.
pub const NAME: &str = "imagelistpulljob";
/// How often a running list job is looked at without events (its children's changes requeue it sooner).
pub const RESYNC: Duration = Duration::from_secs(30);

/// The name of the index of ImagePullJobs by controller UID.
const CHILDREN_BY_OWNER: &str = "imagepulljobs-by-controller";

/// How soon a list job whose last creates or deletes the informer has not shown yet is looked at again
/// (their arrival requeues it sooner).
const UNOBSERVED_RETRY: Duration = Duration::from_secs(1);

struct Context {
    client: Client,
    children: Indexed<ImagePullJob>,
    expectations: Arc<SharedExpectations>,
}

/// Adds the controller to `controllers`.
pub fn register(controllers: &mut ControllerSet) {
    controllers.register_fn(NAME, run);
}

/// Runs the controller until the context's shutdown.
///
/// # Errors
/// Never; the signature is the controller set's.
pub async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let lists = context.informers.get::<ImageListPullJob>();
    let children = context.informers.get::<ImagePullJob>();
    let by_owner = children.index(CHILDREN_BY_OWNER, Arc::new(controller_uid::<ImagePullJob>));
    if harness::synced_store(&children, &context).await.is_none() {
        return Ok(());
    }
    let Some(store) = harness::synced_store(&lists, &context).await else {
        return Ok(());
    };
    let expectations = Arc::new(SharedExpectations::new(DEFAULT_TIMEOUT));
    let shared = Arc::new(Context {
        client: context.client.clone(),
        children: by_owner,
        expectations: expectations.clone(),
    });
    let child_changes = children
        .subscribe()
        .filter_map(move |change: Change<ImagePullJob>| {
            let owner = change
                .object()
                .and_then(|child| observe_child(&expectations, child, change.is_deleted()));
            futures::future::ready(owner)
        });
    let controller =
        Controller::for_shared_stream(lists.applied(), store).reconcile_on(child_changes);
    harness::drive(controller, &context, reconcile, shared).await;
    Ok(())
}

/// Notes what the informer showed of `child` (created, or deleted or being deleted) in the expectations of
/// its list job; returns the list job to reconcile, if it has one.
fn observe_child(
    expectations: &SharedExpectations,
    child: &ImagePullJob,
    gone: bool,
) -> Option<ObjectRef<ImageListPullJob>> {
    let owner = list_job::list_owner(child)?;
    if gone || child.metadata.deletion_timestamp.is_some() {
        expectations.observe(&owner.uid, Operation::Delete, &child.name_any());
    } else {
        expectations.observe(&owner.uid, Operation::Create, &list_job::child_key(child));
    }
    let namespace = child.namespace().unwrap_or_default();
    Some(ObjectRef::new(&owner.name).within(&namespace))
}

async fn reconcile(
    list: Arc<ImageListPullJob>,
    context: Arc<Context>,
) -> Result<Action, ActionError> {
    sync(&list, &context).await
}

async fn sync(list: &ImageListPullJob, context: &Context) -> Result<Action, ActionError> {
    let uid = list.uid().unwrap_or_default();
    if list.metadata.deletion_timestamp.is_some() {
        context.expectations.forget(&uid);
        return Ok(Action::await_change());
    }
    if !context.expectations.satisfied(&uid).0 {
        return Ok(Action::requeue(UNOBSERVED_RETRY));
    }
    let namespace = list.namespace().unwrap_or_default();
    let lists: Api<ImageListPullJob> = Api::namespaced(context.client.clone(), &namespace);
    let pulls: Api<ImagePullJob> = Api::namespaced(context.client.clone(), &namespace);
    let children = context.children.get(&uid);
    let refs: Vec<&ImagePullJob> = children
        .iter()
        .map(AsRef::as_ref)
        .filter(|child| list_job::list_owner(child).is_some_and(|owner| owner.uid == uid))
        .collect();
    let writes = match list_job::plan(list, &refs, k8s_openapi::jiff::Timestamp::now()) {
        Plan::Finished(Finished::Delete) => {
            actions::delete(&lists, list).await?;
            context.expectations.forget(&uid);
            tracing::info!(job = %object_key(list), "deleted after its TTL");
            return Ok(Action::await_change());
        }
        Plan::Finished(Finished::Wait(wait)) => return Ok(Action::requeue(wait)),
        Plan::Finished(Finished::Keep) => return Ok(Action::await_change()),
        Plan::Run(writes) => writes,
    };
    for child in &writes.delete {
        let name = child.name_any();
        context.expectations.expect(&uid, Operation::Delete, &name);
        if let Err(error) = actions::delete(&pulls, child).await {
            context.expectations.observe(&uid, Operation::Delete, &name);
            return Err(error);
        }
        tracing::info!(job = %object_key(list), child = %name, image = %child.spec.image,
            "deleted an ImagePullJob the list no longer wants");
    }
    for child in &writes.create {
        let key = list_job::child_key(child);
        context.expectations.expect(&uid, Operation::Create, &key);
        match actions::create(&pulls, child).await {
            Ok(created) => {
                tracing::info!(job = %object_key(list), child = %created.name_any(), image = %child.spec.image,
                    "created an ImagePullJob");
            }
            Err(error) => {
                context.expectations.observe(&uid, Operation::Create, &key);
                return Err(error);
            }
        }
    }
    if list.status.as_ref() != Some(&writes.status) {
        actions::replace_status(&lists, list, &writes.status).await?;
    }
    Ok(Action::requeue(writes.requeue_after.unwrap_or(RESYNC)))
}

#[cfg(test)]
mod tests {
    use kruise_schedule::image_pull::list_job::{new_child, template_hash};
    use serde_json::json;

    use super::*;

    fn list() -> ImageListPullJob {
        serde_json::from_value(json!({
            "metadata": {"name": "warm", "namespace": "ns", "uid": "list-uid"},
            "spec": {"images": ["a:1"], "completionPolicy": {}},
        }))
        .unwrap()
    }

    /// A child's create is expected under its key before it has a name, and seen once the informer shows
    /// it with its generated name; its delete is seen when it gets a deletion timestamp or is gone.
    #[test]
    fn the_informer_satisfies_creates_by_key_and_deletes_by_name() {
        let expectations = SharedExpectations::new(DEFAULT_TIMEOUT);
        let of = list();
        let mut child = new_child(&of, "a:1", &template_hash(&of));
        expectations.expect("list-uid", Operation::Create, &list_job::child_key(&child));
        child.metadata.name = Some("warm-x7k2p".into());
        let owner = observe_child(&expectations, &child, false).unwrap();
        assert_eq!(
            (owner.name.as_str(), owner.namespace.as_deref()),
            ("warm", Some("ns"))
        );
        assert_eq!(expectations.satisfied("list-uid"), (true, 0));

        expectations.expect("list-uid", Operation::Delete, "warm-x7k2p");
        observe_child(&expectations, &child, false);
        assert_eq!(
            expectations.satisfied("list-uid"),
            (false, 1),
            "still there"
        );
        observe_child(&expectations, &child, true);
        assert_eq!(expectations.satisfied("list-uid"), (true, 0));

        let mut foreign = child;
        foreign.metadata.owner_references = None;
        assert!(observe_child(&expectations, &foreign, false).is_none());
    }
}
