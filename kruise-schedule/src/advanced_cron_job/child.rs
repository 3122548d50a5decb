//! The jobs an AdvancedCronJob created, as the controller sees them: a reference, whether they finished and
//! how, when they started, and their `apps.kruise.io/scheduled-at` annotation.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::{v1alpha1, v1beta1};
use kruise_api::keys::cronjob::SCHEDULED_AT_ANNOTATION;

const BROADCAST_V1ALPHA1: (&str, &str) = ("apps.kruise.io/v1alpha1", "BroadcastJob");
const BROADCAST_V1BETA1: (&str, &str) = ("apps.kruise.io/v1beta1", "BroadcastJob");
const IMAGE_LIST_V1ALPHA1: (&str, &str) = ("apps.kruise.io/v1alpha1", "ImageListPullJob");
const IMAGE_LIST_V1BETA1: (&str, &str) = ("apps.kruise.io/v1beta1", "ImageListPullJob");

/// Where a child job is: still running, or finished one way or the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChildState {
    /// Not finished.
    Active,
    /// Finished successfully (Job and BroadcastJob: a `Complete` condition with status `True`;
    /// ImageListPullJob: `completionTime` set and `succeeded == desired`).
    Succeeded,
    /// Finished otherwise (a `Failed` condition; an ImageListPullJob completed with failures).
    Failed,
}

/// One child of an AdvancedCronJob (a Job, BroadcastJob or ImageListPullJob it controls).
///
/// Build it from the object with `From`; the controller lists the children whose controller owner
/// reference is the AdvancedCronJob, which is the caller's job here.
#[derive(Clone, Debug, PartialEq)]
pub struct Child {
    /// The reference the status lists for an active child (kind, apiVersion, namespace, name, uid,
    /// resourceVersion, as Go's `reference.GetReference` fills it).
    pub reference: ObjectReference,
    /// Running or finished.
    pub state: ChildState,
    /// `status.startTime`, which orders finished children for history cleanup.
    pub start_time: Option<Timestamp>,
    /// The `apps.kruise.io/scheduled-at` annotation, as written.
    pub scheduled_at: Option<String>,
}

impl Child {
    fn new(
        (api_version, kind): (&str, &str),
        metadata: &ObjectMeta,
        state: ChildState,
        start_time: Option<Timestamp>,
    ) -> Self {
        Child {
            reference: ObjectReference {
                api_version: Some(api_version.into()),
                kind: Some(kind.into()),
                namespace: metadata.namespace.clone(),
                name: metadata.name.clone(),
                uid: metadata.uid.clone(),
                resource_version: metadata.resource_version.clone(),
                field_path: None,
            },
            state,
            start_time,
            scheduled_at: metadata
                .annotations
                .as_ref()
                .and_then(|annotations| annotations.get(SCHEDULED_AT_ANNOTATION))
                .cloned(),
        }
    }

    /// The child's name (empty when unset).
    #[must_use]
    pub fn name(&self) -> &str {
        self.reference.name.as_deref().unwrap_or_default()
    }

    /// The child's kind (`Job`, `BroadcastJob` or `ImageListPullJob`).
    #[must_use]
    pub fn kind(&self) -> &str {
        self.reference.kind.as_deref().unwrap_or_default()
    }
}

/// The first `Complete` or `Failed` condition whose status is `True` decides, as upstream.
fn state_from_conditions<'a>(
    conditions: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> ChildState {
    for (kind, status) in conditions {
        if status == "True" {
            match kind {
                "Complete" => return ChildState::Succeeded,
                "Failed" => return ChildState::Failed,
                _ => {}
            }
        }
    }
    ChildState::Active
}

impl From<&Job> for Child {
    fn from(job: &Job) -> Self {
        let status = job.status.as_ref();
        let state = state_from_conditions(
            status
                .and_then(|status| status.conditions.as_deref())
                .unwrap_or_default()
                .iter()
                .map(|condition| (condition.type_.as_str(), condition.status.as_str())),
        );
        let start_time = status
            .and_then(|status| status.start_time.as_ref())
            .map(|time| time.0);
        Child::new(("batch/v1", "Job"), &job.metadata, state, start_time)
    }
}

fn broadcast_state(status: Option<&v1beta1::BroadcastJobStatus>) -> ChildState {
    state_from_conditions(
        status
            .map(|status| status.conditions.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|condition| (condition.type_.as_str(), condition.status.as_str())),
    )
}

impl From<&v1beta1::BroadcastJob> for Child {
    fn from(job: &v1beta1::BroadcastJob) -> Self {
        let status = job.status.as_ref();
        let start_time = status
            .and_then(|status| status.start_time.as_ref())
            .map(|time| time.0);
        Child::new(
            BROADCAST_V1BETA1,
            &job.metadata,
            broadcast_state(status),
            start_time,
        )
    }
}

impl From<&v1alpha1::BroadcastJob> for Child {
    fn from(job: &v1alpha1::BroadcastJob) -> Self {
        let status = job.status.as_ref();
        let start_time = status
            .and_then(|status| status.start_time.as_ref())
            .map(|time| time.0);
        Child::new(
            BROADCAST_V1ALPHA1,
            &job.metadata,
            broadcast_state(status),
            start_time,
        )
    }
}

fn image_list_state(status: Option<&v1beta1::ImageListPullJobStatus>) -> ChildState {
    match status {
        Some(status) if status.completion_time.is_some() => {
            if status.succeeded == status.desired {
                ChildState::Succeeded
            } else {
                ChildState::Failed
            }
        }
        _ => ChildState::Active,
    }
}

impl From<&v1beta1::ImageListPullJob> for Child {
    fn from(job: &v1beta1::ImageListPullJob) -> Self {
        let status = job.status.as_ref();
        let start_time = status
            .and_then(|status| status.start_time.as_ref())
            .map(|time| time.0);
        Child::new(
            IMAGE_LIST_V1BETA1,
            &job.metadata,
            image_list_state(status),
            start_time,
        )
    }
}

impl From<&v1alpha1::ImageListPullJob> for Child {
    fn from(job: &v1alpha1::ImageListPullJob) -> Self {
        let status = job.status.as_ref();
        let start_time = status
            .and_then(|status| status.start_time.as_ref())
            .map(|time| time.0);
        Child::new(
            IMAGE_LIST_V1ALPHA1,
            &job.metadata,
            image_list_state(status),
            start_time,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::batch::v1::{JobCondition, JobStatus};

    fn job(conditions: &[(&str, &str)]) -> Job {
        Job {
            metadata: ObjectMeta {
                name: Some("acj-1".into()),
                namespace: Some("default".into()),
                uid: Some("uid-1".into()),
                resource_version: Some("7".into()),
                annotations: Some(
                    [(
                        SCHEDULED_AT_ANNOTATION.into(),
                        "2024-01-01T00:00:00Z".into(),
                    )]
                    .into(),
                ),
                ..ObjectMeta::default()
            },
            status: Some(JobStatus {
                conditions: Some(
                    conditions
                        .iter()
                        .map(|&(type_, status)| JobCondition {
                            type_: type_.into(),
                            status: status.into(),
                            ..JobCondition::default()
                        })
                        .collect(),
                ),
                ..JobStatus::default()
            }),
            ..Job::default()
        }
    }

    #[test]
    fn job_states() {
        assert_eq!(Child::from(&job(&[])).state, ChildState::Active);
        assert_eq!(
            Child::from(&job(&[("Complete", "False"), ("Suspended", "True")])).state,
            ChildState::Active
        );
        assert_eq!(
            Child::from(&job(&[("Failed", "True"), ("Complete", "True")])).state,
            ChildState::Failed
        );
        assert_eq!(
            Child::from(&job(&[("Complete", "True")])).state,
            ChildState::Succeeded
        );
        let child = Child::from(&job(&[]));
        assert_eq!(child.reference.api_version.as_deref(), Some("batch/v1"));
        assert_eq!(child.kind(), "Job");
        assert_eq!(child.name(), "acj-1");
        assert_eq!(child.scheduled_at.as_deref(), Some("2024-01-01T00:00:00Z"));
    }

    #[test]
    fn image_list_pull_job_states() {
        let mut job = v1beta1::ImageListPullJob::default();
        assert_eq!(Child::from(&job).state, ChildState::Active);
        let status = job.status.get_or_insert_with(Default::default);
        status.desired = 2;
        status.succeeded = 1;
        status.completion_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            Timestamp::UNIX_EPOCH,
        ));
        assert_eq!(Child::from(&job).state, ChildState::Failed);
        job.status.get_or_insert_with(Default::default).succeeded = 2;
        let child = Child::from(&job);
        assert_eq!(child.state, ChildState::Succeeded);
        assert_eq!(
            child.reference.api_version.as_deref(),
            Some("apps.kruise.io/v1beta1")
        );
    }
}
