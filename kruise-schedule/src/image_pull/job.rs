//! The ImagePullJob controller's decisions (upstream `pkg/controller/imagepulljob`): which NodeImages the job
//! targets, its status from them, what to add to a NodeImage that is not synced yet, how many may be synced now,
//! and when the job ends. kruise-manager's ImagePullJob controller runs them.
//!
//! ```
//! use kruise_api::apps::v1beta1::{ImagePullJob, ImagePullJobStatus};
//! use kruise_schedule::image_pull::job::{calculate_status, message};
//!
//! let job: ImagePullJob = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "pull", "namespace": "ns", "uid": "job-uid"},
//!     "spec": {"image": "127.0.0.1:5000/app:v2", "completionPolicy": {}},
//! })).unwrap();
//! let (status, not_synced) = calculate_status(&job, &[], &[], "2024-05-01T10:00:00Z".parse().unwrap()).unwrap();
//! assert_eq!((status.desired, not_synced.len()), (0, 0));
//! assert_eq!(message(&ImagePullJobStatus { desired: 4, succeeded: 1, failed: 1, ..Default::default() }),
//!            "job is running, progress 50.0%");
//! ```

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{
    CompletionPolicyType, ImagePullJob, ImagePullJobStatus, ImagePullPhase, ImageSpec,
    ImageTagPullPolicy, ImageTagSpec, NodeImage, ReferenceObject,
};
use kruise_api::label_selector;

use super::reference::{InvalidImage, normalize};

/// The API version written into NodeImage tag owner references (upstream's controller kind).
pub const OWNER_API_VERSION: &str = "apps.kruise.io/v1alpha1";
/// Upstream's default `parallelism`.
pub const DEFAULT_PARALLELISM: i64 = 1;
/// The smallest requeue while waiting for a deadline.
pub const MIN_REQUEUE: Duration = Duration::from_secs(3);

fn never(job: &ImagePullJob) -> bool {
    job.spec.template.completion_policy.type_ == Some(CompletionPolicyType::Never)
}

/// The reference a NodeImage tag keeps to the job that asked for it.
#[must_use]
pub fn owner_reference(job: &ImagePullJob) -> ObjectReference {
    ObjectReference {
        api_version: Some(OWNER_API_VERSION.to_owned()),
        kind: Some("ImagePullJob".to_owned()),
        name: job.metadata.name.clone(),
        namespace: job.metadata.namespace.clone(),
        uid: job.metadata.uid.clone(),
        ..ObjectReference::default()
    }
}

/// The job's pull secrets as NodeImage references (upstream's `getSecrets`: in the job's namespace).
#[must_use]
pub fn source_secrets(job: &ImagePullJob) -> Vec<ReferenceObject> {
    job.spec
        .template
        .pull_secrets
        .iter()
        .map(|name| ReferenceObject {
            namespace: job.metadata.namespace.clone().unwrap_or_default(),
            name: name.clone(),
            mode: String::new(),
        })
        .collect()
}

/// The pull policy of the tags a job adds (upstream's `getImagePullPolicy`). `random` spreads the TTLs
/// (upstream: 300 s + a random 0–299 s for `Always`, 24 h ± 10 min for `Never`).
#[must_use]
pub fn tag_pull_policy(job: &ImagePullJob, random: u32) -> ImageTagPullPolicy {
    let pull = job.spec.template.pull_policy.clone().unwrap_or_default();
    let completion = &job.spec.template.completion_policy;
    let spread = |range: u32| i32::try_from(random % range).unwrap_or_default();
    let (ttl, deadline) = if never(job) {
        let ttl = 24 * 3600 + spread(1200) - 600;
        let deadline = pull
            .timeout_seconds
            .map(i64::from)
            .filter(|&timeout| timeout > 1800)
            .unwrap_or(1800);
        (ttl, Some(deadline))
    } else {
        let base = completion
            .ttl_seconds_after_finished
            .or_else(|| {
                completion
                    .active_deadline_seconds
                    .map(|seconds| i32::try_from(seconds).unwrap_or(i32::MAX))
            })
            .unwrap_or_else(|| {
                pull.timeout_seconds
                    .unwrap_or(600)
                    .saturating_mul(pull.backoff_limit.unwrap_or(3))
            });
        (
            base.saturating_add(300 + spread(300)),
            completion.active_deadline_seconds,
        )
    };
    ImageTagPullPolicy {
        timeout_seconds: pull.timeout_seconds,
        backoff_limit: pull.backoff_limit,
        ttl_seconds_after_finished: Some(ttl),
        active_deadline_seconds: deadline,
    }
}

/// `parallelism` as upstream reads it (`IntOrString.IntValue`: a string that is not an integer is 0, which
/// pauses the job); unset is 1.
#[must_use]
pub fn parallelism(job: &ImagePullJob) -> i64 {
    match &job.spec.template.parallelism {
        None => DEFAULT_PARALLELISM,
        Some(IntOrString::Int(value)) => i64::from(*value),
        Some(IntOrString::String(text)) => text.parse().unwrap_or(0),
    }
}

/// Why the targets of a job cannot be found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// The node or pod selector is invalid.
    #[error("ImagePullJob {job}: {which}: {source}")]
    Selector {
        /// `namespace/name` of the job.
        job: String,
        /// `selector` or `podSelector`.
        which: &'static str,
        /// What is wrong.
        #[source]
        source: label_selector::SelectorError,
    },
}

fn job_key(job: &ImagePullJob) -> String {
    format!(
        "{}/{}",
        job.metadata.namespace.as_deref().unwrap_or_default(),
        job.metadata.name.as_deref().unwrap_or_default()
    )
}

/// The names of the NodeImages a job targets (upstream's `GetNodeImagesForJob`): the nodes of the active,
/// scheduled pods its `podSelector` selects in its namespace (in pod name order), the NodeImages named in
/// `selector.names`, those whose labels match `selector`, or all. Only existing NodeImages are returned.
///
/// # Errors
/// [`TargetError`] for an invalid selector.
pub fn targets(
    job: &ImagePullJob,
    node_images: &[&NodeImage],
    pods: &[&Pod],
) -> Result<Vec<String>, TargetError> {
    let exists = |name: &str| {
        node_images
            .iter()
            .any(|node_image| node_image.metadata.name.as_deref() == Some(name))
    };
    let template = &job.spec.template;
    if let Some(selector) = &template.pod_selector {
        let namespace = job.metadata.namespace.as_deref().unwrap_or_default();
        let mut selected: Vec<&Pod> = Vec::new();
        for pod in pods {
            let matches =
                label_selector::matches(&selector.label_selector, kruise_api::pod::labels(pod))
                    .map_err(|source| TargetError::Selector {
                        job: job_key(job),
                        which: "podSelector",
                        source,
                    })?;
            let scheduled = pod
                .spec
                .as_ref()
                .and_then(|spec| spec.node_name.as_deref())
                .is_some_and(|node| !node.is_empty());
            if matches
                && scheduled
                && kruise_api::pod::is_active(pod)
                && pod.metadata.namespace.as_deref() == Some(namespace)
            {
                selected.push(pod);
            }
        }
        selected.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        let mut seen = BTreeSet::new();
        return Ok(selected
            .iter()
            .filter_map(|pod| pod.spec.as_ref().and_then(|spec| spec.node_name.clone()))
            .filter(|node| seen.insert(node.clone()) && exists(node))
            .collect());
    }
    let Some(selector) = &template.selector else {
        return Ok(node_images
            .iter()
            .filter_map(|node_image| node_image.metadata.name.clone())
            .collect());
    };
    if !selector.names.is_empty() {
        return Ok(selector
            .names
            .iter()
            .filter(|name| exists(name))
            .cloned()
            .collect());
    }
    let mut chosen = Vec::new();
    for node_image in node_images {
        let labels = node_image.metadata.labels.clone().unwrap_or_default();
        let matches =
            label_selector::matches(&selector.label_selector, &labels).map_err(|source| {
                TargetError::Selector {
                    job: job_key(job),
                    which: "selector",
                    source,
                }
            })?;
        if matches && let Some(name) = &node_image.metadata.name {
            chosen.push(name.clone());
        }
    }
    Ok(chosen)
}

fn contains(list: &[ReferenceObject], secret: &ReferenceObject) -> bool {
    list.iter()
        .any(|entry| entry.namespace == secret.namespace && entry.name == secret.name)
}

/// Upstream's `calculateStatus`: the job's status from its target NodeImages (`secrets`: the synced pull
/// secrets the NodeImages must reference), and the NodeImages not synced yet.
///
/// # Errors
/// [`InvalidImage`] when the job's image does not parse.
pub fn calculate_status(
    job: &ImagePullJob,
    node_images: &[&NodeImage],
    secrets: &[ReferenceObject],
    now: Timestamp,
) -> Result<(ImagePullJobStatus, Vec<String>), InvalidImage> {
    let image = normalize(&job.spec.image)?;
    let previous = job.status.clone().unwrap_or_default();
    let start = previous
        .start_time
        .clone()
        .unwrap_or_else(|| Time(truncate(now)));
    let mut status = ImagePullJobStatus {
        start_time: Some(start.clone()),
        desired: i32::try_from(node_images.len()).unwrap_or(i32::MAX),
        ..ImagePullJobStatus::default()
    };
    let uid = job.metadata.uid.as_deref().unwrap_or_default();
    let (mut not_synced, mut pulling, mut succeeded, mut failed) = (vec![], vec![], vec![], vec![]);
    for node_image in node_images {
        let name = node_image.metadata.name.clone().unwrap_or_default();
        let spec = node_image.spec.images.get(&image.name);
        if spec.is_some_and(|spec| {
            secrets
                .iter()
                .any(|secret| !contains(&spec.pull_secrets, secret))
        }) {
            not_synced.push(name);
            continue;
        }
        let version = spec.and_then(|spec| {
            spec.tags
                .iter()
                .find(|tag| tag.tag == image.tag)
                .filter(|tag| {
                    tag.owner_references
                        .iter()
                        .any(|owner| owner.uid.as_deref() == Some(uid))
                })
                .map(|tag| tag.version)
        });
        let Some(version) = version else {
            not_synced.push(name);
            continue;
        };
        let tag_status = node_image
            .status
            .as_ref()
            .and_then(|status| status.image_statuses.get(&image.name))
            .and_then(|statuses| statuses.tags.iter().find(|tag| tag.tag == image.tag));
        match tag_status {
            Some(tag) if tag.version == version => match tag.phase {
                ImagePullPhase::Succeeded => succeeded.push(name),
                ImagePullPhase::Failed => failed.push(name),
                _ => pulling.push(name),
            },
            _ => pulling.push(name),
        }
    }
    let now_time = Time(truncate(now));
    let completion = &job.spec.template.completion_policy;
    let done = succeeded.len() + failed.len();
    if !never(job)
        && let Some(deadline) = completion.active_deadline_seconds
        && node_images.len() != done
        && start
            .0
            .saturating_add(Duration::from_secs(
                u64::try_from(deadline).unwrap_or_default(),
            ))
            .is_ok_and(|end| end <= now)
    {
        failed.extend(pulling);
        failed.extend(not_synced);
        failed.sort();
        status.completion_time = Some(now_time);
        status.succeeded = count(&succeeded);
        status.failed = count(&failed);
        status.failed_nodes = failed;
        status.message = "job exceeds activeDeadlineSeconds".into();
        return Ok((status, Vec::new()));
    }
    status.active = count(&pulling);
    status.succeeded = count(&succeeded);
    status.failed = count(&failed);
    failed.sort();
    status.failed_nodes = failed;
    if !never(job) && status.desired - status.succeeded - status.failed == 0 {
        status.completion_time = Some(now_time);
    }
    status.message = message(&status);
    Ok((status, not_synced))
}

fn count(list: &[String]) -> i32 {
    i32::try_from(list.len()).unwrap_or(i32::MAX)
}

fn truncate(time: Timestamp) -> Timestamp {
    Timestamp::from_second(time.as_second()).unwrap_or(time)
}

/// `job has completed`, `job is running, no progress` or `job is running, progress X.X%`.
#[must_use]
pub fn message(status: &ImagePullJobStatus) -> String {
    if status.completion_time.is_some() {
        return "job has completed".into();
    }
    if status.desired == 0 {
        return "job is running, no progress".into();
    }
    let progress = 100.0 * f64::from(status.succeeded + status.failed) / f64::from(status.desired);
    format!("job is running, progress {progress:.1}%")
}

/// How many of the not-synced NodeImages may be synced now: `parallelism - active`, at most all of them.
#[must_use]
pub fn to_sync_now(job: &ImagePullJob, status: &ImagePullJobStatus, not_synced: usize) -> usize {
    let room = parallelism(job) - i64::from(status.active);
    usize::try_from(room.max(0))
        .unwrap_or_default()
        .min(not_synced)
}

/// Upstream's per-NodeImage sync: the NodeImage's new entry for the job's image, or `None` when the job
/// already owns the tag there. A new tag gets `version` = the last reported version + 1; an existing tag
/// of another owner gets `version + 1` (a new round of pulls) and the job appended to its owners. The
/// job's synced secrets are added, and the tags sorted.
///
/// # Errors
/// [`InvalidImage`] when the job's image does not parse.
pub fn sync_node_image(
    node_image: &NodeImage,
    job: &ImagePullJob,
    secrets: &[ReferenceObject],
    pull_policy: &ImageTagPullPolicy,
    now: Timestamp,
) -> Result<Option<(String, ImageSpec)>, InvalidImage> {
    let image = normalize(&job.spec.image)?;
    let owner = owner_reference(job);
    let mut spec = node_image
        .spec
        .images
        .get(&image.name)
        .cloned()
        .unwrap_or_default();
    spec.sandbox_config = job.spec.template.sandbox_config.clone();
    for secret in secrets {
        if !contains(&spec.pull_secrets, secret) {
            spec.pull_secrets.push(secret.clone());
        }
    }
    let created = Time(truncate(now));
    let pull_policy_of_job = job.spec.template.image_pull_policy.clone();
    match spec.tags.iter_mut().find(|tag| tag.tag == image.tag) {
        Some(tag) => {
            if tag
                .owner_references
                .iter()
                .any(|existing| same_owner(existing, &owner))
            {
                return Ok(None);
            }
            tag.version += 1;
            tag.owner_references.push(owner);
            tag.created_at = Some(created);
            tag.image_pull_policy = pull_policy_of_job;
        }
        None => {
            let reported = node_image
                .status
                .as_ref()
                .and_then(|status| status.image_statuses.get(&image.name))
                .and_then(|statuses| statuses.tags.iter().find(|tag| tag.tag == image.tag))
                .map_or(-1, |tag| tag.version);
            spec.tags.push(ImageTagSpec {
                tag: image.tag.clone(),
                created_at: Some(created),
                pull_policy: Some(pull_policy.clone()),
                owner_references: vec![owner],
                version: reported + 1,
                image_pull_policy: pull_policy_of_job,
            });
        }
    }
    spec.tags.sort_by(|a, b| a.tag.cmp(&b.tag));
    Ok(Some((image.name, spec)))
}

fn same_owner(a: &ObjectReference, b: &ObjectReference) -> bool {
    a.uid == b.uid && a.name == b.name && a.namespace == b.namespace && a.kind == b.kind
}

/// What a finished job waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finished {
    /// Delete it now (`ttlSecondsAfterFinished` has passed).
    Delete,
    /// Look again after this long.
    Wait(Duration),
    /// Keep it (no TTL).
    Keep,
}

/// After completion: delete after `ttlSecondsAfterFinished` (unset keeps the job).
#[must_use]
pub fn after_completion(job: &ImagePullJob, now: Timestamp) -> Finished {
    let completion = job
        .status
        .as_ref()
        .and_then(|status| status.completion_time.as_ref());
    match (
        job.spec
            .template
            .completion_policy
            .ttl_seconds_after_finished,
        completion,
    ) {
        (Some(ttl), Some(completed)) => {
            let end = completed
                .0
                .saturating_add(Duration::from_secs(u64::try_from(ttl).unwrap_or_default()))
                .unwrap_or(Timestamp::MAX);
            if end <= now {
                Finished::Delete
            } else {
                Finished::Wait(now.duration_until(end).unsigned_abs())
            }
        }
        _ => Finished::Keep,
    }
}

/// While running with an `activeDeadlineSeconds` (`Always` only): look again at the deadline, at least
/// [`MIN_REQUEUE`] later.
#[must_use]
pub fn deadline_requeue(
    job: &ImagePullJob,
    status: &ImagePullJobStatus,
    now: Timestamp,
) -> Option<Duration> {
    if never(job) {
        return None;
    }
    let deadline = job
        .spec
        .template
        .completion_policy
        .active_deadline_seconds?;
    let start = status.start_time.as_ref()?.0;
    let end = start
        .saturating_add(Duration::from_secs(
            u64::try_from(deadline).unwrap_or_default(),
        ))
        .unwrap_or(Timestamp::MAX);
    let left = if end > now {
        now.duration_until(end).unsigned_abs()
    } else {
        Duration::ZERO
    };
    Some(left.max(MIN_REQUEUE))
}

#[cfg(test)]
#[path = "job_tests.rs"]
mod tests;
