//! The EphemeralJob controller of kruise-manager: observes v1alpha1 EphemeralJobs and the pods (the shared
//! pod informer), calls the sans-IO [`kruise_schedule::ephemeral_job::plan`], and executes it: add the
//! job's ephemeral containers to the planned pods through their `ephemeralcontainers` subresource, write
//! the status, delete the job after its TTL, and requeue at the deadline or TTL.
//!
//! The subresource's shape follows the API server's version (`/version`, asked once): v1.23 and later take
//! a strategic merge patch of the `Pod`'s `spec.ephemeralContainers`, v1.16 to v1.22 one of the
//! `EphemeralContainers` kind ([`kruise_schedule::ephemeral_job::request`]); a 400 saying the body is of
//! the other kind switches shapes and sends again. When the cluster does not serve the subresource (404 or
//! 405: before v1.23 with the `EphemeralContainers` gate off, as on a default v1.20), the job gets phase
//! `Error` and a `JobError` condition saying ephemeral containers are not enabled on this cluster, one
//! warning event, and is looked at again only after [`NOT_ENABLED_RECHECK`] (or on a change).
//!
//! Ephemeral containers cannot be removed from a pod, so deleting the job leaves them (upstream's
//! `RemoveEphemeralContainer` does nothing on a plain Kubernetes either); no finalizer is added.
//!
//! ```no_run
//! use kruise_manager::ephemeral_job::EphemeralJobController;
//! use kruise_runtime::controllers::ControllerSet;
//!
//! let mut controllers = ControllerSet::new();
//! controllers.register(EphemeralJobController);
//! assert_eq!(controllers.names(), ["ephemeraljob"]);
//! ```

use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1alpha1::{EphemeralJob, EphemeralJobConditionType};
use kruise_runtime::Indexed;
use kruise_runtime::actions::is_not_found;
use kruise_runtime::events::{EventRecord, EventSink};
use kruise_schedule::ephemeral_job::request::{self, EphemeralApi, Refusal};
use kruise_schedule::ephemeral_job::{self, PlanInput};
use kube::api::{DeleteParams, Patch, PatchParams, PropagationPolicy};
use kube::runtime::Controller;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::{Api, Client, Resource, ResourceExt};

use super::actions::{self, ActionError};
use super::controllers::{ControllerContext, ControllerError, ControllerFuture, ManagedController};
use kruise_runtime::harness::{self, Retry, object_key};

/// The pod index by namespace (shared with the other controllers that ask for it by this name).
const PODS_BY_NAMESPACE: &str = "pod-namespace";

/// How long a job waits before trying again on a cluster that does not serve ephemeral containers.
pub const NOT_ENABLED_RECHECK: Duration = Duration::from_secs(300);

/// The EphemeralJob controller, registered in kruise-manager's
/// [`ControllerSet`](super::controllers::ControllerSet).
#[derive(Clone, Copy, Debug, Default)]
pub struct EphemeralJobController;

impl ManagedController for EphemeralJobController {
    fn name(&self) -> &str {
        "ephemeraljob"
    }

    fn run(&self, context: ControllerContext) -> ControllerFuture {
        Box::pin(run(context))
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EphemeralJobError {
    /// A write was refused or conflicted.
    #[error(transparent)]
    Action(#[from] ActionError),
    /// Any other API failure.
    #[error("EphemeralJob {job}: {source}")]
    Api {
        /// `namespace/name`.
        job: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
    /// Adding the ephemeral containers to a pod was refused for a reason worth retrying.
    #[error("EphemeralJob {job}: adding ephemeral containers to pod {pod}: {source}")]
    Inject {
        /// `namespace/name` of the job.
        job: String,
        /// The pod's name.
        pod: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
}

impl Retry for EphemeralJobError {
    fn retry_after(&self) -> Duration {
        match self {
            Self::Action(action) => action.requeue_after(),
            Self::Api { .. } | Self::Inject { .. } => Duration::from_secs(10),
        }
    }

    fn is_conflict(&self) -> bool {
        matches!(self, Self::Action(ActionError::Conflict { .. }))
    }
}

struct Shared {
    client: Client,
    /// The pods of the informer, by namespace.
    pods: Indexed<Pod>,
    events: EventSink,
    /// The subresource's shape, once known (from `/version`, corrected by a refusal).
    api: Mutex<Option<EphemeralApi>>,
}

async fn run(context: ControllerContext) -> Result<(), ControllerError> {
    let pod_informer = context.informers.get::<Pod>();
    let job_informer = context.informers.get::<EphemeralJob>();
    let jobs = job_informer.store();
    let shared = Arc::new(Shared {
        client: context.client.clone(),
        pods: pod_informer.index(
            PODS_BY_NAMESPACE,
            Arc::new(|pod: &Pod| pod.metadata.namespace.clone().into_iter().collect()),
        ),
        events: context.event_sink("ephemeraljob-controller"),
        api: Mutex::new(None),
    });
    // The first plan must see the pods: a job planned on an empty pod cache would match nothing and
    // wait for a pod change that may never come.
    tokio::select! {
        () = pod_informer.wait_synced() => {}
        () = context.shutdown.clone().wait() => return Ok(()),
    }
    let Some(store) = harness::synced_store(&job_informer, &context).await else {
        return Ok(());
    };
    let controller = Controller::for_shared_stream(job_informer.applied(), store)
        .watches_shared_stream(pod_informer.objects(), move |pod: Arc<Pod>| {
            jobs_selecting(&jobs, &pod)
        });
    harness::drive(controller, &context, reconcile, shared).await;
    Ok(())
}

/// The jobs of the pod's namespace whose selector matches the pod.
fn jobs_selecting(jobs: &Store<EphemeralJob>, pod: &Pod) -> Vec<ObjectRef<EphemeralJob>> {
    let namespace = pod.namespace();
    let labels = pod.labels();
    jobs.state()
        .iter()
        .filter(|job| job.namespace() == namespace)
        .filter(|job| {
            kruise_api::label_selector::matches(&job.spec.selector, labels).unwrap_or(false)
        })
        .map(|job| ObjectRef::from_obj(job.as_ref()))
        .collect()
}

async fn reconcile(
    job: Arc<EphemeralJob>,
    shared: Arc<Shared>,
) -> Result<Action, EphemeralJobError> {
    if job.metadata.deletion_timestamp.is_some() {
        return Ok(Action::await_change());
    }
    let namespace = job.namespace().unwrap_or_default();
    let pods: Vec<Pod> = shared
        .pods
        .get(&namespace)
        .iter()
        .map(|pod| (**pod).clone())
        .collect();
    let plan = ephemeral_job::plan(&PlanInput::new(&job, &pods, Timestamp::now()));
    let jobs: Api<EphemeralJob> = Api::namespaced(shared.client.clone(), &namespace);
    let api_error = |source| EphemeralJobError::Api {
        job: object_key(job.as_ref()),
        source,
    };
    if plan.delete_job {
        let params = DeleteParams {
            propagation_policy: Some(PropagationPolicy::Background),
            ..DeleteParams::default()
        };
        match jobs.delete(&job.name_any(), &params).await {
            Ok(_) => {
                tracing::info!(job = %object_key(job.as_ref()), "deleted after ttlSecondsAfterFinished");
            }
            Err(error) if is_not_found(&error) => {}
            Err(error) => return Err(api_error(error)),
        }
        return Ok(Action::await_change());
    }
    let mut status = plan.status;
    let mut requeue = plan.requeue_after;
    let mut failure = None;
    for pod in &plan.inject {
        match inject(&shared, &job, pod).await {
            Ok(()) => {
                tracing::info!(job = %object_key(job.as_ref()), %pod, "added ephemeral containers");
                shared.events.record_for(
                    job.as_ref(),
                    EventRecord::new(
                        false,
                        "Injected",
                        format!("added ephemeral containers to pod {pod}"),
                    ),
                );
            }
            Err(Injection::NotEnabled(message)) => {
                let already = has_not_enabled_condition(&job);
                ephemeral_job::record_not_enabled(
                    &mut status,
                    request::NOT_ENABLED_REASON,
                    &message,
                    Timestamp::now(),
                );
                if !already {
                    tracing::warn!(job = %object_key(job.as_ref()), "{message}");
                    shared.events.record_for(
                        job.as_ref(),
                        EventRecord::new(true, request::NOT_ENABLED_REASON, message),
                    );
                }
                requeue = Some(requeue.map_or(NOT_ENABLED_RECHECK, |r| r.min(NOT_ENABLED_RECHECK)));
                break;
            }
            Err(Injection::Failed(source)) => {
                shared.events.record_for(
                    job.as_ref(),
                    EventRecord::new(true, "CreateFailed", format!("pod {pod}: {source}")),
                );
                failure = Some(EphemeralJobError::Inject {
                    job: object_key(job.as_ref()),
                    pod: pod.clone(),
                    source,
                });
                break;
            }
        }
    }
    if job.status.as_ref() != Some(&status) {
        actions::replace_status(&jobs, job.as_ref(), &status).await?;
    }
    if let Some(error) = failure {
        return Err(error);
    }
    Ok(requeue.map_or_else(Action::await_change, Action::requeue))
}

fn has_not_enabled_condition(job: &EphemeralJob) -> bool {
    job.status
        .iter()
        .flat_map(|status| &status.conditions)
        .any(|condition| {
            condition.type_ == EphemeralJobConditionType::JobError
                && condition.reason == request::NOT_ENABLED_REASON
        })
}

/// Why adding the containers to a pod did not happen.
enum Injection {
    /// The cluster does not serve ephemeral containers (the condition's message).
    NotEnabled(String),
    /// Anything else.
    Failed(kube::Error),
}

/// Adds the job's containers to `pod`, in the shape the server expects (switching once on a refusal
/// saying the other shape is wanted).
async fn inject(shared: &Shared, job: &EphemeralJob, pod: &str) -> Result<(), Injection> {
    let Some(mut api) = subresource_shape(shared).await else {
        return Err(Injection::NotEnabled(
            request::NOT_ENABLED_MESSAGE.to_owned(),
        ));
    };
    let containers = request::marked_containers(job);
    let namespace = job.namespace().unwrap_or_default();
    for attempt in 0..2 {
        let body = request::patch_body(api, &containers);
        let sent = kube::core::Request::new(Pod::url_path(&(), Some(&namespace)))
            .patch_subresource(
                "ephemeralcontainers",
                pod,
                &PatchParams::default(),
                &Patch::Strategic(&body),
            )
            .map_err(|error| Injection::Failed(kube::Error::BuildRequest(error)))?;
        let Err(error) = shared.client.request_text(sent).await else {
            return Ok(());
        };
        let kube::Error::Api(status) = &error else {
            return Err(Injection::Failed(error));
        };
        match request::classify_refusal(status.code, &status.message) {
            Refusal::NotEnabled => {
                return Err(Injection::NotEnabled(
                    request::NOT_ENABLED_MESSAGE.to_owned(),
                ));
            }
            Refusal::OtherShape if attempt == 0 => {
                api = match api {
                    EphemeralApi::Pod => EphemeralApi::Alpha,
                    EphemeralApi::Alpha => EphemeralApi::Pod,
                };
                if let Ok(mut known) = shared.api.lock() {
                    *known = Some(api);
                }
            }
            Refusal::OtherShape | Refusal::Other => return Err(Injection::Failed(error)),
        }
    }
    Err(Injection::NotEnabled(
        request::NOT_ENABLED_MESSAGE.to_owned(),
    ))
}

/// The subresource's shape: known, or from the server's `/version` (v1.23 and later when it cannot be
/// read); `None` before v1.16 (no ephemeral containers at all).
async fn subresource_shape(shared: &Shared) -> Option<EphemeralApi> {
    if let Some(api) = shared.api.lock().ok().and_then(|known| *known) {
        return Some(api);
    }
    let api = match shared.client.apiserver_version().await {
        Ok(info) => {
            let api = EphemeralApi::for_server(&info.major, &info.minor);
            tracing::info!(major = %info.major, minor = %info.minor, shape = ?api, "ephemeral containers API");
            api?
        }
        Err(error) => {
            tracing::warn!(%error, "reading /version; assuming Kubernetes v1.23 or later");
            EphemeralApi::Pod
        }
    };
    if let Ok(mut known) = shared.api.lock() {
        *known = Some(api);
    }
    Some(api)
}
