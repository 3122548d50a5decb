//! The child object a run creates.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kruise_api::apps::v1beta1;
use kruise_api::keys::cronjob::SCHEDULED_AT_ANNOTATION;

use super::scheduled_at;
use crate::cron::Zone;

/// The job a run creates, in the hub version (`v1beta1` for the Kruise kinds). For a cluster that serves
/// only `v1alpha1`, convert with `From` (`kruise_api::apps::v1alpha1::BroadcastJob::from(&job)`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum NewChild {
    /// A batch/v1 Job from `jobTemplate`.
    Job(Box<Job>),
    /// A BroadcastJob from `broadcastJobTemplate`.
    BroadcastJob(Box<v1beta1::BroadcastJob>),
    /// An ImageListPullJob from `imageListPullJobTemplate`.
    ImageListPullJob(Box<v1beta1::ImageListPullJob>),
}

impl NewChild {
    /// The child's metadata (name, namespace, labels, annotations, owner reference).
    #[must_use]
    pub fn metadata(&self) -> &ObjectMeta {
        match self {
            NewChild::Job(job) => &job.metadata,
            NewChild::BroadcastJob(job) => &job.metadata,
            NewChild::ImageListPullJob(job) => &job.metadata,
        }
    }

    /// The child's name: `<AdvancedCronJob name>-<scheduled time in Unix seconds>`.
    #[must_use]
    pub fn name(&self) -> &str {
        self.metadata().name.as_deref().unwrap_or_default()
    }
}

/// What the child's metadata is made of.
pub(crate) struct Parent<'a> {
    pub(crate) name: &'a str,
    pub(crate) namespace: Option<&'a str>,
    pub(crate) uid: &'a str,
    /// `apps.kruise.io/v1alpha1` or `apps.kruise.io/v1beta1`: the version the AdvancedCronJob was read in.
    pub(crate) api_version: &'a str,
}

/// The metadata of a new child, as upstream builds it: a fresh object with the template's labels and
/// annotations, the scheduled-at annotation (in `zone`), and the AdvancedCronJob as controller owner.
pub(crate) fn metadata(
    parent: &Parent<'_>,
    template: Option<&ObjectMeta>,
    scheduled: DateTime<Utc>,
    zone: Zone,
) -> ObjectMeta {
    let mut annotations: BTreeMap<String, String> = template
        .and_then(|template| template.annotations.clone())
        .unwrap_or_default();
    annotations.insert(
        SCHEDULED_AT_ANNOTATION.into(),
        scheduled_at::format(scheduled, zone),
    );
    let labels = template
        .and_then(|template| template.labels.clone())
        .filter(|labels| !labels.is_empty());
    ObjectMeta {
        name: Some(format!("{}-{}", parent.name, scheduled.timestamp())),
        namespace: parent.namespace.map(str::to_owned),
        labels,
        annotations: Some(annotations),
        owner_references: Some(vec![OwnerReference {
            api_version: parent.api_version.into(),
            kind: "AdvancedCronJob".into(),
            name: parent.name.into(),
            uid: parent.uid.into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]),
        ..ObjectMeta::default()
    }
}

/// The child for the template the AdvancedCronJob uses, or `None` when that template is missing (upstream
/// falls back to the BroadcastJob kind when no template is set, and then dereferences a nil template).
pub(crate) fn build(
    template: &v1beta1::CronJobTemplate,
    parent: &Parent<'_>,
    scheduled: DateTime<Utc>,
    zone: Zone,
) -> Option<NewChild> {
    if let Some(job) = &template.job_template {
        return Some(NewChild::Job(Box::new(Job {
            metadata: metadata(parent, job.metadata.as_ref(), scheduled, zone),
            spec: job.spec.clone(),
            status: None,
        })));
    }
    if let Some(image_list) = &template.image_list_pull_job_template {
        return Some(NewChild::ImageListPullJob(Box::new(
            v1beta1::ImageListPullJob {
                metadata: metadata(parent, image_list.metadata.as_ref(), scheduled, zone),
                spec: image_list.spec.clone(),
                status: None,
            },
        )));
    }
    template.broadcast_job_template.as_ref().map(|broadcast| {
        NewChild::BroadcastJob(Box::new(v1beta1::BroadcastJob {
            metadata: metadata(parent, broadcast.metadata.as_ref(), scheduled, zone),
            spec: broadcast.spec.clone(),
            status: None,
        }))
    })
}
