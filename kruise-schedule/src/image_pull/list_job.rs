//! The ImageListPullJob controller's decisions (upstream `pkg/controller/imagelistpulljob`): one ImagePullJob
//! per image of the list, children to replace when their image left the list or the list's template changed,
//! the list's status aggregated from its children, and when a finished list is deleted. kruise-manager's
//! ImageListPullJob controller runs them; time comes in as an argument.
//!
//! Each child is named `<list name>-<random suffix>` (`generateName`), carries the list's pull parameters as
//! they are, the label `controller-revision-hash` holding [`template_hash`] of those parameters, and the list
//! as its controller owner.
//!
//! ```
//! use kruise_api::apps::v1beta1::ImageListPullJob;
//! use kruise_schedule::image_pull::list_job::{Plan, plan};
//!
//! let list: ImageListPullJob = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "warm", "namespace": "ns", "uid": "list-uid"},
//!     "spec": {"images": ["127.0.0.1:5000/app:v1", "127.0.0.1:5000/app:v2"], "completionPolicy": {}},
//! })).unwrap();
//! let Plan::Run(writes) = plan(&list, &[], "2024-05-01T10:00:00Z".parse().unwrap()) else { panic!() };
//! assert_eq!(writes.create.len(), 2);
//! assert_eq!(writes.create[0].metadata.generate_name.as_deref(), Some("warm-"));
//! assert_eq!((writes.status.desired, writes.status.completed), (2, 0));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{
    CompletionPolicyType, FailedImageStatus, ImageListPullJob, ImageListPullJobStatus,
    ImagePullJob, ImagePullJobSpec, ImagePullJobTemplate,
};
use kruise_api::keys::kubernetes::CONTROLLER_REVISION_HASH_LABEL;
use sha2::{Digest, Sha256};

use super::job::Finished;

/// The API version of the owner reference children get (upstream's controller kind is `v1alpha1`).
pub const OWNER_API_VERSION: &str = "apps.kruise.io/v1alpha1";
/// The kind of the owner reference children get.
pub const OWNER_KIND: &str = "ImageListPullJob";
/// How many hex digits of the template's SHA-256 the `controller-revision-hash` label keeps.
pub const HASH_LENGTH: usize = 16;

/// What one pass does for a list job.
#[derive(Clone, Debug, PartialEq)]
pub enum Plan {
    /// The list job has finished (`completionTime` is set): only its TTL matters, its children are left
    /// as they are (upstream stops syncing a finished list).
    Finished(Finished),
    /// The list job runs: the writes of this pass.
    Run(Writes),
}

/// The writes of a pass over a running list job.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Writes {
    /// The ImagePullJobs to create, one per image that has no current child (in the order of `images`).
    pub create: Vec<ImagePullJob>,
    /// The children to delete: their image left the list, their template hash is stale, or another child
    /// already serves their image.
    pub delete: Vec<ImagePullJob>,
    /// The status the list job should have.
    pub status: ImageListPullJobStatus,
    /// When to look again regardless of events: the TTL, when this pass completes a list job that has one.
    pub requeue_after: Option<Duration>,
}

/// The hash of the list job's pull parameters (everything of its spec but `images`): the first
/// [`HASH_LENGTH`] hex digits of the SHA-256 of their JSON with sorted keys, as Go would write it. A child
/// whose `controller-revision-hash` label differs was made from older parameters.
#[must_use]
pub fn template_hash(list: &ImageListPullJob) -> String {
    hash_of(&list.spec.template)
}

fn hash_of(template: &ImagePullJobTemplate) -> String {
    let value = serde_json::to_value(template).unwrap_or(serde_json::Value::Null);
    let json = kruise_inplace::go_json::to_string_sorted(&value);
    Sha256::digest(json.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect::<String>()
        .chars()
        .take(HASH_LENGTH)
        .collect()
}

/// The list job's images, each once, in the order they are listed.
#[must_use]
pub fn distinct_images(list: &ImageListPullJob) -> Vec<&str> {
    let mut seen = BTreeSet::new();
    list.spec
        .images
        .iter()
        .map(String::as_str)
        .filter(|image| seen.insert(*image))
        .collect()
}

/// The controller owner reference of `child` when it names an ImageListPullJob (of either version).
#[must_use]
pub fn list_owner(child: &ImagePullJob) -> Option<&OwnerReference> {
    child
        .metadata
        .owner_references
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|owner| {
            owner.controller == Some(true)
                && owner.kind == OWNER_KIND
                && owner.api_version.starts_with("apps.kruise.io/")
        })
}

/// The ImagePullJob that pulls `image` for `list`: `generateName: <list name>-`, the list's namespace, the
/// label `controller-revision-hash: <hash>`, the list as controller owner, and the list's pull parameters.
#[must_use]
pub fn new_child(list: &ImageListPullJob, image: &str, hash: &str) -> ImagePullJob {
    let name = list.metadata.name.clone().unwrap_or_default();
    ImagePullJob {
        metadata: ObjectMeta {
            generate_name: Some(format!("{name}-")),
            namespace: list.metadata.namespace.clone(),
            labels: Some(BTreeMap::from([(
                CONTROLLER_REVISION_HASH_LABEL.to_owned(),
                hash.to_owned(),
            )])),
            owner_references: Some(vec![OwnerReference {
                api_version: OWNER_API_VERSION.to_owned(),
                kind: OWNER_KIND.to_owned(),
                name,
                uid: list.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        spec: ImagePullJobSpec {
            image: image.to_owned(),
            template: list.spec.template.clone(),
        },
        status: None,
    }
}

/// What identifies a child before the API server names it (its name comes from `generateName`): its
/// template hash label and its image, `<hash>/<image>` (`/<image>` without the label). A list job has
/// at most one live child per key; a controller can expect a create under this key before sending it.
#[must_use]
pub fn child_key(child: &ImagePullJob) -> String {
    format!(
        "{}/{}",
        hash_label(child).unwrap_or_default(),
        child.spec.image
    )
}

/// The message of a [`FailedImageStatus`]: how many nodes failed, and where to read which.
#[must_use]
pub fn failed_message(child: &ImagePullJob) -> String {
    let failed = child.status.as_ref().map_or(0, |status| status.failed);
    format!(
        "failed on {failed} node(s); the ImagePullJob's status.failedNodes names them (kubectl get imagepulljob {})",
        child.metadata.name.as_deref().unwrap_or_default()
    )
}

fn hash_label(child: &ImagePullJob) -> Option<&str> {
    child
        .metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get(CONTROLLER_REVISION_HASH_LABEL))
        .map(String::as_str)
}

fn truncate(time: Timestamp) -> Timestamp {
    Timestamp::from_second(time.as_second()).unwrap_or(time)
}

fn never(list: &ImageListPullJob) -> bool {
    list.spec.template.completion_policy.type_ == Some(CompletionPolicyType::Never)
}

fn ttl(list: &ImageListPullJob) -> Option<Duration> {
    list.spec
        .template
        .completion_policy
        .ttl_seconds_after_finished
        .map(|seconds| Duration::from_secs(u64::try_from(seconds).unwrap_or_default()))
}

/// What a finished list job waits for: deletion once `ttlSecondsAfterFinished` has passed since its
/// `completionTime`, a wait until then, or nothing (no TTL, or not finished).
#[must_use]
pub fn after_completion(list: &ImageListPullJob, now: Timestamp) -> Finished {
    let completed = list
        .status
        .as_ref()
        .and_then(|status| status.completion_time.as_ref());
    let (Some(ttl), Some(completed)) = (ttl(list), completed) else {
        return Finished::Keep;
    };
    let end = completed.0.saturating_add(ttl).unwrap_or(Timestamp::MAX);
    if end <= now {
        Finished::Delete
    } else {
        Finished::Wait(now.duration_until(end).unsigned_abs())
    }
}

/// Upstream's `calculateStatus` over the children that serve the list (one per image): `desired` = the
/// distinct images, `active` = children pulling somewhere, `completed` = children whose every target
/// succeeded or failed, `succeeded` = children whose every target succeeded, a [`FailedImageStatus`] for each
/// child with failures (in list order). Children not started yet (no `startTime`) count for nothing.
/// `startTime` is kept or set to `now`; `completionTime` is `now` once every image's child completed (never
/// with `completionPolicy.type: Never`).
#[must_use]
pub fn calculate_status(
    list: &ImageListPullJob,
    serving: &[&ImagePullJob],
    now: Timestamp,
) -> ImageListPullJobStatus {
    let now = Time(truncate(now));
    let previous = list.status.clone().unwrap_or_default();
    let mut status = ImageListPullJobStatus {
        start_time: Some(previous.start_time.unwrap_or_else(|| now.clone())),
        desired: count(distinct_images(list).len()),
        ..ImageListPullJobStatus::default()
    };
    for child in serving {
        let Some(child_status) = child
            .status
            .as_ref()
            .filter(|child_status| child_status.start_time.is_some())
        else {
            continue;
        };
        if child_status.active > 0 {
            status.active += 1;
        }
        if child_status.desired == child_status.failed + child_status.succeeded {
            status.completed += 1;
        }
        if child_status.desired == child_status.succeeded {
            status.succeeded += 1;
        }
        if child_status.failed > 0 {
            status.failed_image_statuses.push(FailedImageStatus {
                image_pull_job: child.metadata.name.clone().unwrap_or_default(),
                name: child.spec.image.clone(),
                message: failed_message(child),
            });
        }
    }
    if !never(list) && status.desired == status.completed {
        status.completion_time = Some(now);
    }
    status
}

fn count(len: usize) -> i32 {
    i32::try_from(len).unwrap_or(i32::MAX)
}

/// One pass over `list` with `children` (the ImagePullJobs whose controller is `list`; the caller finds
/// them). A finished list only waits for its TTL. Otherwise: children being deleted are ignored; of the
/// others, the oldest child (by creation time, then name) of each listed image whose hash label is
/// [`template_hash`] serves that image, and every other child is deleted; each image without a serving
/// child gets a new one; the status is computed from the serving children.
#[must_use]
pub fn plan(list: &ImageListPullJob, children: &[&ImagePullJob], now: Timestamp) -> Plan {
    if list
        .status
        .as_ref()
        .is_some_and(|status| status.completion_time.is_some())
    {
        return Plan::Finished(after_completion(list, now));
    }
    let images = distinct_images(list);
    let hash = template_hash(list);
    let mut live: Vec<&ImagePullJob> = children
        .iter()
        .copied()
        .filter(|child| child.metadata.deletion_timestamp.is_none())
        .collect();
    live.sort_by(|a, b| {
        let created = |child: &ImagePullJob| child.metadata.creation_timestamp.clone().map(|t| t.0);
        created(a)
            .cmp(&created(b))
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    let mut serving: BTreeMap<&str, &ImagePullJob> = BTreeMap::new();
    let mut delete = Vec::new();
    for child in live {
        let image = child.spec.image.as_str();
        let current = images.contains(&image) && hash_label(child) == Some(hash.as_str());
        if current && !serving.contains_key(image) {
            serving.insert(image, child);
        } else {
            delete.push(child.clone());
        }
    }
    let create = images
        .iter()
        .filter(|image| !serving.contains_key(*image))
        .map(|image| new_child(list, image, &hash))
        .collect();
    let ordered: Vec<&ImagePullJob> = images
        .iter()
        .filter_map(|image| serving.get(image).copied())
        .collect();
    let status = calculate_status(list, &ordered, now);
    let requeue_after = status.completion_time.as_ref().and_then(|_| ttl(list));
    Plan::Run(Writes {
        create,
        delete,
        status,
        requeue_after,
    })
}

#[cfg(test)]
#[allow(clippy::needless_pass_by_value)] // table helpers take owned JSON values
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn ts(text: &str) -> Timestamp {
        text.parse().unwrap()
    }

    const NOW: &str = "2024-05-01T10:00:30Z";

    fn list(images: &[&str], policy: Value, status: Value) -> ImageListPullJob {
        serde_json::from_value(json!({
            "metadata": {"name": "warm", "namespace": "ns", "uid": "list-uid"},
            "spec": {"images": images, "parallelism": 2, "completionPolicy": policy},
            "status": status,
        }))
        .unwrap()
    }

    fn running(images: &[&str]) -> ImageListPullJob {
        list(images, json!({"ttlSecondsAfterFinished": 60}), Value::Null)
    }

    /// A child of `of` for `image`, created at second `created`, with `(desired, active, succeeded,
    /// failed)` or no status.
    fn child(
        of: &ImageListPullJob,
        name: &str,
        image: &str,
        created: u32,
        counts: Option<Counts>,
    ) -> ImagePullJob {
        let mut job = new_child(of, image, &template_hash(of));
        job.metadata.name = Some(name.to_owned());
        job.metadata.creation_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(ts(
                &format!("2024-05-01T10:00:{created:02}Z"),
            )));
        job.status = counts.map(|(desired, active, succeeded, failed)| {
            serde_json::from_value(
                json!({"startTime": "2024-05-01T10:00:00Z", "desired": desired,
                "active": active, "succeeded": succeeded, "failed": failed}),
            )
            .unwrap()
        });
        job
    }

    /// (rule, list, children, expected creates (images), expected deletes (names))
    type ChildRow = (
        &'static str,
        ImageListPullJob,
        Vec<ImagePullJob>,
        Vec<&'static str>,
        Vec<&'static str>,
    );
    /// A child's `(desired, active, succeeded, failed)`.
    type Counts = (i32, i32, i32, i32);
    /// The list's `(active, completed, succeeded, failed images)`.
    type Aggregate = (i32, i32, i32, usize);

    fn writes_of(plan: Plan) -> Writes {
        match plan {
            Plan::Run(writes) => writes,
            Plan::Finished(finished) => panic!("expected writes, got {finished:?}"),
        }
    }

    fn names(jobs: &[ImagePullJob]) -> Vec<&str> {
        jobs.iter()
            .map(|job| {
                job.metadata
                    .name
                    .as_deref()
                    .unwrap_or(job.spec.image.as_str())
            })
            .collect()
    }

    #[test]
    fn children_are_created_kept_and_deleted_by_rule() {
        let base = running(&["a:1", "b:1"]);
        let mut changed = base.clone();
        changed.spec.template.parallelism =
            Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(5));
        let mut terminating = child(&base, "warm-t", "a:1", 1, None);
        terminating.metadata.deletion_timestamp = terminating.metadata.creation_timestamp.clone();
        // (rule, list, children, expected creates (images), expected deletes (names))
        let rows: Vec<ChildRow> = vec![
            (
                "a missing image gets a child",
                base.clone(),
                vec![child(&base, "warm-a", "a:1", 1, None)],
                vec!["b:1"],
                vec![],
            ),
            (
                "current children are kept",
                base.clone(),
                vec![
                    child(&base, "warm-a", "a:1", 1, None),
                    child(&base, "warm-b", "b:1", 2, None),
                ],
                vec![],
                vec![],
            ),
            (
                "an image that left the list loses its child",
                running(&["a:1"]),
                vec![
                    child(&base, "warm-a", "a:1", 1, None),
                    child(&base, "warm-b", "b:1", 2, None),
                ],
                vec![],
                vec!["warm-b"],
            ),
            (
                "a stale template hash is replaced",
                changed.clone(),
                vec![
                    child(&base, "warm-a", "a:1", 1, None),
                    child(&changed, "warm-b", "b:1", 2, None),
                ],
                vec!["a:1"],
                vec!["warm-a"],
            ),
            (
                "the younger of two children of an image goes",
                base.clone(),
                vec![
                    child(&base, "warm-a2", "a:1", 5, None),
                    child(&base, "warm-a1", "a:1", 1, None),
                    child(&base, "warm-b", "b:1", 2, None),
                ],
                vec![],
                vec!["warm-a2"],
            ),
            (
                "a terminating child is ignored",
                base.clone(),
                vec![terminating, child(&base, "warm-b", "b:1", 2, None)],
                vec!["a:1"],
                vec![],
            ),
            (
                "an image listed twice gets one child",
                running(&["a:1", "a:1"]),
                vec![],
                vec!["a:1"],
                vec![],
            ),
        ];
        for (rule, of, children, creates, deletes) in rows {
            let refs: Vec<&ImagePullJob> = children.iter().collect();
            let writes = writes_of(plan(&of, &refs, ts(NOW)));
            let created: Vec<&str> = writes
                .create
                .iter()
                .map(|job| job.spec.image.as_str())
                .collect();
            assert_eq!(created, creates, "{rule}: creates");
            assert_eq!(names(&writes.delete), deletes, "{rule}: deletes");
        }
    }

    #[test]
    fn new_children_carry_the_name_prefix_hash_owner_and_template() {
        let of = running(&["a:1"]);
        let made = new_child(&of, "a:1", "h1");
        assert_eq!(made.metadata.generate_name.as_deref(), Some("warm-"));
        assert_eq!(made.metadata.name, None);
        assert_eq!(made.metadata.namespace.as_deref(), Some("ns"));
        assert_eq!(hash_label(&made), Some("h1"));
        let owner = list_owner(&made).unwrap();
        assert_eq!(
            (owner.name.as_str(), owner.uid.as_str()),
            ("warm", "list-uid")
        );
        assert_eq!(owner.block_owner_deletion, Some(true));
        assert_eq!(made.spec.template, of.spec.template);
        assert_eq!(made.spec.image, "a:1");
        let mut foreign = made.clone();
        if let Some(owners) = foreign.metadata.owner_references.as_mut() {
            owners[0].kind = "CloneSet".into();
        }
        assert!(
            list_owner(&foreign).is_none(),
            "only ImageListPullJob owners count"
        );
    }

    #[test]
    fn children_are_keyed_by_hash_and_image_before_they_have_a_name() {
        let of = running(&["a:1", "b:1"]);
        let a = new_child(&of, "a:1", "h1");
        assert_eq!(child_key(&a), "h1/a:1");
        assert_ne!(child_key(&a), child_key(&new_child(&of, "b:1", "h1")));
        assert_ne!(child_key(&a), child_key(&new_child(&of, "a:1", "h2")));
        let mut named = a.clone();
        named.metadata.name = Some("warm-x7k2p".into());
        assert_eq!(child_key(&named), child_key(&a), "the name plays no part");
        let mut unlabelled = a;
        unlabelled.metadata.labels = None;
        assert_eq!(child_key(&unlabelled), "/a:1");
    }

    #[test]
    fn the_hash_follows_the_template_not_the_images() {
        let a = running(&["a:1"]);
        let b = running(&["b:1", "c:1"]);
        let mut c = a.clone();
        c.spec.template.pull_secrets = vec!["regcred".into()];
        assert_eq!(template_hash(&a), template_hash(&b));
        assert_ne!(template_hash(&a), template_hash(&c));
        assert_eq!(template_hash(&a).len(), HASH_LENGTH);
    }

    #[test]
    fn status_counts_children_by_rule() {
        let of = running(&["a:1", "b:1", "c:1", "d:1", "e:1"]);
        // (rule, child counts, expected (active, completed, succeeded, failed images))
        let rows: Vec<(&str, Option<Counts>, Aggregate)> = vec![
            (
                "a pulling child is active",
                Some((2, 1, 1, 0)),
                (1, 0, 0, 0),
            ),
            (
                "a child with every node succeeded is completed and succeeded",
                Some((2, 0, 2, 0)),
                (0, 1, 1, 0),
            ),
            (
                "a child with a failed node is completed, not succeeded",
                Some((2, 0, 1, 1)),
                (0, 1, 0, 1),
            ),
            (
                "a child still pulling with a failure is listed but not completed",
                Some((3, 1, 1, 1)),
                (1, 0, 0, 1),
            ),
            ("a child not started counts for nothing", None, (0, 0, 0, 0)),
        ];
        for (rule, counts, (active, completed, succeeded, failed)) in rows {
            let only = child(&of, "warm-x", "a:1", 1, counts);
            let status = calculate_status(&of, &[&only], ts(NOW));
            assert_eq!(status.desired, 5, "{rule}");
            assert_eq!(
                (
                    status.active,
                    status.completed,
                    status.succeeded,
                    status.failed_image_statuses.len()
                ),
                (active, completed, succeeded, failed),
                "{rule}"
            );
        }
        let failing = child(&of, "warm-x", "a:1", 1, Some((2, 0, 1, 1)));
        let status = calculate_status(&of, &[&failing], ts(NOW));
        let entry = &status.failed_image_statuses[0];
        assert_eq!(
            (entry.image_pull_job.as_str(), entry.name.as_str()),
            ("warm-x", "a:1")
        );
        assert!(
            entry.message.contains("1 node(s)") && entry.message.contains("warm-x"),
            "{}",
            entry.message
        );
    }

    #[test]
    fn completion_needs_every_image_completed_and_not_never() {
        let done = |of: &ImageListPullJob| -> Vec<ImagePullJob> {
            vec![
                child(of, "warm-a", "a:1", 1, Some((1, 0, 1, 0))),
                child(of, "warm-b", "b:1", 2, Some((1, 0, 0, 1))),
            ]
        };
        let always = running(&["a:1", "b:1"]);
        let never = list(&["a:1", "b:1"], json!({"type": "Never"}), Value::Null);
        let longer = running(&["a:1", "b:1", "c:1"]);
        // (rule, list, expected completion, expected requeue)
        let rows = [
            (
                "every image completed",
                &always,
                true,
                Some(Duration::from_secs(60)),
            ),
            ("Never never completes", &never, false, None),
            (
                "an image without a child is not completed",
                &longer,
                false,
                None,
            ),
        ];
        for (rule, of, completes, requeue) in rows {
            let children = done(of);
            let refs: Vec<&ImagePullJob> = children.iter().collect();
            let writes = writes_of(plan(of, &refs, ts(NOW)));
            assert_eq!(writes.status.completion_time.is_some(), completes, "{rule}");
            assert_eq!(writes.requeue_after, requeue, "{rule}");
            if completes {
                assert_eq!(
                    writes.status.completion_time.unwrap().0,
                    ts("2024-05-01T10:00:30Z")
                );
                assert_eq!(
                    (writes.status.succeeded, writes.status.completed),
                    (1, 2),
                    "{rule}"
                );
            }
        }
    }

    #[test]
    fn start_time_is_kept_or_set_to_now() {
        let fresh = running(&["a:1"]);
        let started = list(
            &["a:1"],
            json!({}),
            json!({"startTime": "2024-05-01T09:00:00Z"}),
        );
        let at = ts("2024-05-01T10:00:30.700Z");
        assert_eq!(
            calculate_status(&fresh, &[], at).start_time.unwrap().0,
            ts("2024-05-01T10:00:30Z")
        );
        assert_eq!(
            calculate_status(&started, &[], at).start_time.unwrap().0,
            ts("2024-05-01T09:00:00Z")
        );
    }

    #[test]
    fn a_finished_list_waits_for_its_ttl_only() {
        let finished = |ttl: Value| {
            list(
                &["a:1"],
                json!({"ttlSecondsAfterFinished": ttl}),
                json!({"startTime": "2024-05-01T10:00:00Z", "completionTime": "2024-05-01T10:00:10Z"}),
            )
        };
        let of = finished(json!(30));
        let stale = child(&of, "warm-a", "z:9", 1, None);
        // (rule, list, now, expected)
        let rows = [
            (
                "the TTL has passed",
                finished(json!(30)),
                "2024-05-01T10:00:40Z",
                Finished::Delete,
            ),
            (
                "the TTL has not passed",
                finished(json!(30)),
                "2024-05-01T10:00:30Z",
                Finished::Wait(Duration::from_secs(10)),
            ),
            (
                "no TTL keeps it",
                finished(Value::Null),
                "2024-05-01T11:00:00Z",
                Finished::Keep,
            ),
        ];
        for (rule, of, now, expected) in rows {
            assert_eq!(
                plan(&of, &[&stale], ts(now)),
                Plan::Finished(expected),
                "{rule}"
            );
        }
        let unfinished = running(&["a:1"]);
        assert!(
            matches!(plan(&unfinished, &[&stale], ts(NOW)), Plan::Run(_)),
            "no completionTime: it runs"
        );
        assert_eq!(after_completion(&unfinished, ts(NOW)), Finished::Keep);
    }
}
