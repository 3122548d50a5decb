//! The AdvancedCronJob controller of kruise-manager: observes v1beta1 AdvancedCronJobs and the Jobs,
//! BroadcastJobs and ImageListPullJobs they control, calls the sans-IO [`kruise_schedule::advanced_cron_job::plan`] with the
//! current time, and executes it: write the status (active references, last schedule time, type),
//! delete finished children beyond the history limits, delete active children for `Replace`, create the
//! child (named `<acj>-<unix seconds>` with the `apps.kruise.io/scheduled-at` annotation), record events
//! (invalid schedule or time zone, many missed runs, creations), and requeue at the next run.
//!
//! An `imageListPullJobTemplate` makes ImageListPullJobs (v1beta1 only), which the ImageListPullJob
//! controller ([`crate::imagepull::list_job`]) runs; one counts as finished once its `completionTime` is set.
//!
//! ```no_run
//! use kruise_manager::advanced_cron_job::AdvancedCronJobController;
//! use kruise_runtime::controllers::ControllerSet;
//!
//! let mut controllers = ControllerSet::new();
//! controllers.register(AdvancedCronJobController);
//! assert_eq!(controllers.names(), ["advancedcronjob"]);
//! ```

use kruise_runtime::actions::{is_conflict, is_not_found};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{AdvancedCronJob, BroadcastJob, ImageListPullJob};
use kruise_runtime::events::{EventRecord, EventSink};
use kruise_schedule::advanced_cron_job::{self, Action as Decision, Child, NewChild, PlanOptions};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, PropagationPolicy};
use kube::runtime::controller::Action;
use kube::runtime::{Controller, watcher};
use kube::{Api, Client, ResourceExt};
use serde_json::Value;

use super::controllers::{ControllerContext, ControllerError, ControllerFuture, ManagedController};
use crate::actions;
use kruise_runtime::Indexed;
use kruise_runtime::harness::{self, Retry, object_key};
use kruise_runtime::informer::controller_uid;

/// The AdvancedCronJob controller, registered in kruise-manager's
/// [`ControllerSet`](super::controllers::ControllerSet).
#[derive(Clone, Copy, Debug, Default)]
pub struct AdvancedCronJobController;

impl ManagedController for AdvancedCronJobController {
    fn name(&self) -> &str {
        "advancedcronjob"
    }

    fn run(&self, context: ControllerContext) -> ControllerFuture {
        Box::pin(run(context))
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
#[error("AdvancedCronJob {acj}: {what}: {source}")]
pub struct AdvancedCronJobError {
    /// `namespace/name`.
    pub acj: String,
    /// What was being done.
    pub what: String,
    /// The failure.
    #[source]
    pub source: kube::Error,
}

struct Shared {
    client: Client,
    /// Jobs by the UID of their controller.
    jobs: Indexed<Job>,
    /// BroadcastJobs by the UID of their controller.
    broadcast_jobs: Indexed<BroadcastJob>,
    /// ImageListPullJobs by the UID of their controller.
    image_list_jobs: Indexed<ImageListPullJob>,
    events: EventSink,
}

impl Retry for AdvancedCronJobError {
    fn retry_after(&self) -> Duration {
        if self.is_conflict() {
            Duration::from_millis(200)
        } else {
            Duration::from_secs(5)
        }
    }

    fn is_conflict(&self) -> bool {
        actions::is_conflict(&self.source)
    }
}

async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let client = context.client.clone();
    let job_informer = context.informers.get::<Job>();
    let broadcast_informer = context.informers.get::<BroadcastJob>();
    let image_list_informer = context.informers.get::<ImageListPullJob>();
    // A reconcile that saw no children would schedule again: decide only once every child kind is listed.
    let (Some(_), Some(_), Some(_)) = (
        harness::synced_store(&job_informer, &context).await,
        harness::synced_store(&broadcast_informer, &context).await,
        harness::synced_store(&image_list_informer, &context).await,
    ) else {
        return Ok(());
    };
    let jobs = job_informer.index(CONTROLLER_UID, Arc::new(controller_uid::<Job>));
    let broadcast_jobs =
        broadcast_informer.index(CONTROLLER_UID, Arc::new(controller_uid::<BroadcastJob>));
    let image_list_jobs =
        image_list_informer.index(CONTROLLER_UID, Arc::new(controller_uid::<ImageListPullJob>));
    let shared = Arc::new(Shared {
        client: client.clone(),
        jobs,
        broadcast_jobs,
        image_list_jobs,
        events: context.event_sink("kruise-manager"),
    });
    let controller = Controller::new(
        Api::<AdvancedCronJob>::all(client.clone()),
        watcher::Config::default(),
    )
    .owns_shared_stream(job_informer.objects())
    .owns_shared_stream(broadcast_informer.objects())
    .owns_shared_stream(image_list_informer.objects());
    harness::drive(controller, &context, reconcile, shared).await;
    Ok(())
}

async fn reconcile(
    acj: Arc<AdvancedCronJob>,
    shared: Arc<Shared>,
) -> Result<Action, AdvancedCronJobError> {
    reconcile_acj(&acj, &shared).await
}

/// The index of Jobs, BroadcastJobs and ImageListPullJobs by the UID of their controller.
const CONTROLLER_UID: &str = "controller-uid";

/// The children of `acj` in the informers, as the planner sees them.
fn children(acj: &AdvancedCronJob, shared: &Shared) -> Vec<Child> {
    let Some(uid) = acj.metadata.uid.as_deref() else {
        return Vec::new();
    };
    let namespace = acj.namespace();
    let mut children: Vec<Child> = shared
        .jobs
        .get(uid)
        .iter()
        .filter(|job| job.namespace() == namespace)
        .map(|job| Child::from(job.as_ref()))
        .collect();
    children.extend(
        shared
            .broadcast_jobs
            .get(uid)
            .iter()
            .filter(|job| job.namespace() == namespace)
            .map(|job| Child::from(job.as_ref())),
    );
    children.extend(
        shared
            .image_list_jobs
            .get(uid)
            .iter()
            .filter(|job| job.namespace() == namespace)
            .map(|job| Child::from(job.as_ref())),
    );
    children
}

async fn reconcile_acj(
    acj: &AdvancedCronJob,
    shared: &Shared,
) -> Result<Action, AdvancedCronJobError> {
    if acj.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let children = children(acj, shared);
    let plan = advanced_cron_job::plan(acj, &children, Timestamp::now(), &PlanOptions::default());
    let fail = |what: String| {
        let acj = object_key(acj);
        move |source| AdvancedCronJobError { acj, what, source }
    };

    // 1. Status (upstream writes it first, on every reconcile).
    if acj.status.as_ref() != Some(&plan.status) {
        let api: Api<AdvancedCronJob> =
            Api::namespaced(shared.client.clone(), &acj.namespace().unwrap_or_default());
        api.patch_status(
            &acj.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&status_patch(acj, &plan.status)),
        )
        .await
        .map_err(fail("writing the status".into()))?;
    }
    for warning in &plan.warnings {
        publish(shared, acj, true, warning.reason(), &warning.to_string());
    }
    // 2. History (failures are only logged, as upstream does).
    for child in &plan.delete_finished {
        if let Err(error) = delete_child(shared, child).await {
            tracing::warn!(acj = %object_key(acj), child = ?child.name, %error, "deleting an old job failed");
        }
    }
    // 3. The decision.
    match &plan.action {
        Decision::InvalidSchedule(error) => {
            let message = format!("spec.schedule {:?}: {error}", acj.spec.schedule);
            publish(shared, acj, true, "InvalidSchedule", &message);
        }
        Decision::MissingTemplate(missed) => {
            let message = format!(
                "a run was due at {} but the template is missing",
                missed.scheduled.to_rfc3339()
            );
            publish(shared, acj, true, "MissingTemplate", &message);
        }
        Decision::Run(run) => {
            for child in &run.delete_active {
                delete_child(shared, child)
                    .await
                    .map_err(fail(format!("deleting active job {:?}", child.name)))?;
                publish(
                    shared,
                    acj,
                    false,
                    "SuccessfulDelete",
                    &format!(
                        "Deleted job {} (concurrencyPolicy Replace)",
                        child.name.as_deref().unwrap_or_default()
                    ),
                );
            }
            create_child(shared, acj, &run.child)
                .await
                .map_err(fail(format!("creating job {}", run.child.name())))?;
        }
        _ => {}
    }
    let requeue = plan.requeue_after.or_else(|| {
        plan.next_run
            .is_some()
            .then_some(Duration::from_millis(100))
    });
    Ok(requeue.map_or_else(Action::await_change, Action::requeue))
}

/// The status as a merge patch: fields that became empty are removed (`null`), not left as they were.
fn status_patch(acj: &AdvancedCronJob, status: &impl serde::Serialize) -> Value {
    let mut value = serde_json::to_value(status).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        for field in ["type", "active", "lastScheduleTime"] {
            map.entry(field).or_insert(Value::Null);
        }
    }
    serde_json::json!({
        "metadata": {"resourceVersion": acj.metadata.resource_version},
        "status": value,
    })
}

async fn create_child(
    shared: &Shared,
    acj: &AdvancedCronJob,
    child: &NewChild,
) -> Result<(), kube::Error> {
    let namespace = acj.namespace().unwrap_or_default();
    let created = match child {
        NewChild::Job(job) => {
            let api: Api<Job> = Api::namespaced(shared.client.clone(), &namespace);
            api.create(&PostParams::default(), job).await.map(|_| ())
        }
        NewChild::BroadcastJob(job) => {
            let api: Api<BroadcastJob> = Api::namespaced(shared.client.clone(), &namespace);
            api.create(&PostParams::default(), job).await.map(|_| ())
        }
        NewChild::ImageListPullJob(job) => {
            let api: Api<ImageListPullJob> = Api::namespaced(shared.client.clone(), &namespace);
            api.create(&PostParams::default(), job).await.map(|_| ())
        }
        _ => {
            publish(
                shared,
                acj,
                true,
                "UnsupportedTemplate",
                "kruise-rs does not know this template kind; no job was created",
            );
            return Ok(());
        }
    };
    match created {
        Ok(()) => {
            publish(
                shared,
                acj,
                false,
                "SuccessfulCreate",
                &format!("Created job {}", child.name()),
            );
            Ok(())
        }
        // Created by an earlier reconcile whose child the store has not seen yet.
        Err(error) if is_conflict(&error) => Ok(()),
        Err(error) => {
            publish(
                shared,
                acj,
                true,
                "FailedCreate",
                &format!("Error creating job {}: {error}", child.name()),
            );
            Err(error)
        }
    }
}

async fn delete_child(shared: &Shared, child: &ObjectReference) -> Result<(), kube::Error> {
    let namespace = child.namespace.clone().unwrap_or_default();
    let name = child.name.clone().unwrap_or_default();
    let params = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        ..DeleteParams::default()
    };
    let deleted = match child.kind.as_deref() {
        Some("Job") => {
            let api: Api<Job> = Api::namespaced(shared.client.clone(), &namespace);
            api.delete(&name, &params).await.map(|_| ())
        }
        Some("BroadcastJob") => {
            let api: Api<BroadcastJob> = Api::namespaced(shared.client.clone(), &namespace);
            api.delete(&name, &params).await.map(|_| ())
        }
        Some("ImageListPullJob") => {
            let api: Api<ImageListPullJob> = Api::namespaced(shared.client.clone(), &namespace);
            api.delete(&name, &params).await.map(|_| ())
        }
        _ => Ok(()),
    };
    match deleted {
        Err(error) if is_not_found(&error) => Ok(()),
        other => other,
    }
}

fn publish(
    shared: &Shared,
    acj: &AdvancedCronJob,
    warning: bool,
    reason: &'static str,
    message: &str,
) {
    shared
        .events
        .record_for(acj, EventRecord::new(warning, reason, message.to_owned()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_patches_clear_fields_that_became_empty() {
        let acj: AdvancedCronJob = serde_json::from_value(serde_json::json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "AdvancedCronJob",
            "metadata": {"name": "a", "resourceVersion": "9"},
            "spec": {"schedule": "@every 2s", "template": {}}
        }))
        .unwrap();
        let patch = status_patch(
            &acj,
            &kruise_api::apps::v1beta1::AdvancedCronJobStatus::default(),
        );
        assert_eq!(patch["metadata"]["resourceVersion"], "9");
        assert_eq!(patch["status"]["active"], Value::Null);
        assert!(patch["status"].as_object().unwrap().contains_key("active"));
        assert!(
            patch["status"]
                .as_object()
                .unwrap()
                .contains_key("lastScheduleTime")
        );
    }
}
