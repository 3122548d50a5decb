//! kruise-manager's ImageListPullJob controller: runs the decisions of [`list_job`] for every list job. Each
//! pass reads the list job's ImagePullJobs from the API server (a consistent list, so a child created by the
//! previous pass is never created twice, whatever the informer has seen), deletes the children whose image
//! left the list or whose template hash is stale, creates one ImagePullJob per image that has none, and
//! writes the aggregated status. A finished list job is deleted after its `ttlSecondsAfterFinished`.
//! Changes of a child (its status as the ImagePullJob controller writes it) requeue its list job.
//!
//! Upstream runs it when the ImagePullJob controller runs (gate `ImagePullJobGate`); kruise-manager runs
//! both unconditionally.

use std::sync::Arc;
use std::time::Duration;

use kruise_api::apps::v1beta1::{ImageListPullJob, ImagePullJob};
use kube::api::ListParams;
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

struct Context {
    client: Client,
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
    let shared = Arc::new(Context {
        client: context.client.clone(),
    });
    let lists = context.informers.get::<ImageListPullJob>();
    let children = context.informers.get::<ImagePullJob>();
    let Some(store) = harness::synced_store(&lists, &context).await else {
        return Ok(());
    };
    let controller = Controller::for_shared_stream(lists.applied(), store).watches_shared_stream(
        children.objects(),
        |child: Arc<ImagePullJob>| {
            let namespace = child.namespace().unwrap_or_default();
            list_job::list_owner(&child)
                .map(|owner| ObjectRef::<ImageListPullJob>::new(&owner.name).within(&namespace))
        },
    );
    harness::drive(controller, &context, reconcile, shared).await;
    Ok(())
}

async fn reconcile(
    list: Arc<ImageListPullJob>,
    context: Arc<Context>,
) -> Result<Action, ActionError> {
    sync(&list, &context).await
}

async fn sync(list: &ImageListPullJob, context: &Context) -> Result<Action, ActionError> {
    if list.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let namespace = list.namespace().unwrap_or_default();
    let lists: Api<ImageListPullJob> = Api::namespaced(context.client.clone(), &namespace);
    let pulls: Api<ImagePullJob> = Api::namespaced(context.client.clone(), &namespace);
    let uid = list.uid().unwrap_or_default();
    let children: Vec<ImagePullJob> = pulls
        .list(&ListParams::default())
        .await
        .map_err(|error| ActionError::from_kube(format!("{namespace}/imagepulljobs"), error))?
        .items
        .into_iter()
        .filter(|child| list_job::list_owner(child).is_some_and(|owner| owner.uid == uid))
        .collect();
    let refs: Vec<&ImagePullJob> = children.iter().collect();
    let writes = match list_job::plan(list, &refs, k8s_openapi::jiff::Timestamp::now()) {
        Plan::Finished(Finished::Delete) => {
            actions::delete(&lists, list).await?;
            tracing::info!(job = %object_key(list), "deleted after its TTL");
            return Ok(Action::await_change());
        }
        Plan::Finished(Finished::Wait(wait)) => return Ok(Action::requeue(wait)),
        Plan::Finished(Finished::Keep) => return Ok(Action::await_change()),
        Plan::Run(writes) => writes,
    };
    for child in &writes.delete {
        actions::delete(&pulls, child).await?;
        tracing::info!(job = %object_key(list), child = %child.name_any(), image = %child.spec.image,
            "deleted an ImagePullJob the list no longer wants");
    }
    for child in &writes.create {
        let created = actions::create(&pulls, child).await?;
        tracing::info!(job = %object_key(list), child = %created.name_any(), image = %child.spec.image,
            "created an ImagePullJob");
    }
    if list.status.as_ref() != Some(&writes.status) {
        actions::replace_status(&lists, list, &writes.status).await?;
    }
    Ok(Action::requeue(writes.requeue_after.unwrap_or(RESYNC)))
}
