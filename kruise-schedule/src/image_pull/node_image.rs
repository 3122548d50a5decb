//! The NodeImage controller's decisions (upstream `pkg/controller/nodeimage`): one NodeImage per Ready node
//! (created a while after the node became Ready, deleted with the node), its labels kept equal to the node's, tags
//! dropped when their ImagePullJobs are gone or their TTL after the pull has passed, and the pulls a node did not
//! answer (10 minutes) or that ran past their deadline marked `Failed`. kruise-manager's NodeImage controller
//! runs them.
//!
//! ```
//! use kruise_schedule::image_pull::node_image::{Creation, creation};
//! use k8s_openapi::api::core::v1::Node;
//! use std::time::Duration;
//!
//! let node: Node = serde_json::from_value(serde_json::json!({"metadata": {"name": "n0"}, "status": {"conditions": [
//!     {"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-01T10:00:00Z"}]}})).unwrap();
//! let now = "2024-05-01T10:00:10Z".parse().unwrap();
//! assert_eq!(creation(&node, now, Duration::from_secs(30)), Creation::After(Duration::from_secs(20)));
//! assert_eq!(creation(&node, now, Duration::ZERO), Creation::Now);
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{
    ImagePullPhase, ImageSpec, ImageStatus, ImageTagStatus, NodeImage, NodeImageStatus,
};

use super::reference::join;

/// How long the node's daemon may take to report a tag before it counts as failed.
pub const RESPONSE_TIMEOUT: Duration = Duration::from_secs(600);
/// The smallest requeue (upstream: 3–5 s).
pub const MIN_REQUEUE: Duration = Duration::from_secs(3);
/// Upstream's default delay between a node becoming Ready and its NodeImage being created.
pub const DEFAULT_CREATION_DELAY: Duration = Duration::from_secs(30);
/// A NodeImage with this label has no node and is kept (upstream's test hook).
pub const FAKE_LABEL: &str = "apps.kruise.io/fake-nodeimage";

/// Whether to create a node's NodeImage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Creation {
    /// The node is not Ready.
    NotReady,
    /// Wait this long after the node became Ready.
    After(Duration),
    /// Create it now.
    Now,
}

/// Upstream's `getNodeReadyAndDelayTime`.
#[must_use]
pub fn creation(node: &Node, now: Timestamp, delay: Duration) -> Creation {
    let ready = node
        .status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .and_then(|conditions| conditions.iter().find(|c| c.type_ == "Ready"));
    let Some(ready) = ready.filter(|ready| ready.status == "True") else {
        return Creation::NotReady;
    };
    let since = ready
        .last_transition_time
        .as_ref()
        .map_or(Timestamp::UNIX_EPOCH, |time| time.0);
    match wait_until(since, delay, now) {
        Some(wait) => Creation::After(wait),
        None => Creation::Now,
    }
}

fn wait_until(since: Timestamp, budget: Duration, now: Timestamp) -> Option<Duration> {
    let end = since.saturating_add(budget).unwrap_or(Timestamp::MAX);
    (end > now).then(|| now.duration_until(end).unsigned_abs())
}

/// The jobs that exist, by `(namespace, name)` → UID (to tell whether a tag's owner is still there).
pub type LiveJobs = BTreeMap<(String, String), String>;

/// The changes to a NodeImage's metadata and spec.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SpecChange {
    /// New labels (the node's), when they differ.
    pub labels: Option<BTreeMap<String, String>>,
    /// New images, when a tag was dropped or changed.
    pub images: Option<BTreeMap<String, ImageSpec>>,
    /// What changed, for the log.
    pub reasons: Vec<String>,
    /// Look again after this long (a TTL running).
    pub requeue_after: Option<Duration>,
}

fn owner_alive(owner: &ObjectReference, jobs: &LiveJobs) -> bool {
    let group = owner
        .api_version
        .as_deref()
        .and_then(|version| version.split_once('/'))
        .map_or("", |(group, _)| group);
    if group != "apps.kruise.io" || owner.kind.as_deref() != Some("ImagePullJob") {
        return true;
    }
    let key = (
        owner.namespace.clone().unwrap_or_default(),
        owner.name.clone().unwrap_or_default(),
    );
    jobs.get(&key)
        .is_some_and(|uid| owner.uid.as_deref() == Some(uid.as_str()))
}

/// Upstream's `doUpdateNodeImage`: labels from the node; a tag without `createdAt` (not defaulted by the
/// webhook) is dropped; owners that are gone are dropped, and a tag without owners with them; a tag whose
/// pull finished more than its TTL ago is dropped; images without tags are dropped.
#[must_use]
pub fn clean_spec(
    node_image: &NodeImage,
    node_labels: Option<&BTreeMap<String, String>>,
    jobs: &LiveJobs,
    now: Timestamp,
) -> SpecChange {
    let mut change = SpecChange::default();
    if let Some(labels) = node_labels
        && node_image.metadata.labels.as_ref() != Some(labels)
    {
        change.labels = Some(labels.clone());
        change.reasons.push("node labels changed".into());
    }
    let statuses = node_image
        .status
        .as_ref()
        .map(|status| &status.image_statuses);
    let mut modified = false;
    let mut images = BTreeMap::new();
    for (name, spec) in &node_image.spec.images {
        let mut tags = Vec::new();
        for tag in &spec.tags {
            let full = join(name, &tag.tag);
            if tag.created_at.is_none() {
                modified = true;
                change
                    .reasons
                    .push(format!("image {full} has no createdAt"));
                continue;
            }
            let mut tag = tag.clone();
            let alive: Vec<ObjectReference> = tag
                .owner_references
                .iter()
                .filter(|owner| owner_alive(owner, jobs))
                .cloned()
                .collect();
            if alive.len() != tag.owner_references.len() {
                modified = true;
                change.reasons.push(format!("image {full} lost owners"));
                if alive.is_empty() {
                    continue;
                }
                tag.owner_references = alive;
            }
            let ttl = tag
                .pull_policy
                .as_ref()
                .and_then(|policy| policy.ttl_seconds_after_finished);
            let completed = statuses
                .and_then(|statuses| statuses.get(name))
                .and_then(|status| {
                    status
                        .tags
                        .iter()
                        .find(|reported| reported.tag == tag.tag && reported.version == tag.version)
                })
                .and_then(|reported| reported.completion_time.as_ref());
            if let (Some(ttl), Some(completed)) = (ttl, completed) {
                let budget = Duration::from_secs(u64::try_from(ttl).unwrap_or_default());
                match wait_until(completed.0, budget, now) {
                    None => {
                        modified = true;
                        change
                            .reasons
                            .push(format!("image {full} exceeded its TTL ({ttl}s)"));
                        continue;
                    }
                    Some(wait) => {
                        change.requeue_after = Some(
                            change
                                .requeue_after
                                .map_or(wait, |current| current.min(wait)),
                        );
                    }
                }
            }
            tags.push(tag);
        }
        if tags.is_empty() {
            modified = true;
            change.reasons.push(format!("no longer has image {name}"));
            continue;
        }
        tags.sort_by(|a, b| a.tag.cmp(&b.tag));
        images.insert(
            name.clone(),
            ImageSpec {
                tags,
                ..spec.clone()
            },
        );
    }
    if modified {
        change.images = Some(images);
    }
    change
}

/// Upstream's `updateNodeImageStatus`: tags the daemon has not reported [`RESPONSE_TIMEOUT`] after they
/// were added, or still running [`RESPONSE_TIMEOUT`] past their `activeDeadlineSeconds`, become `Failed`;
/// statuses of tags no longer asked for are dropped, and the counts recomputed. `None` when nothing
/// changes; the requeue is at least [`MIN_REQUEUE`].
#[must_use]
pub fn refresh_status(
    node_image: &NodeImage,
    now: Timestamp,
) -> (Option<NodeImageStatus>, Option<Duration>) {
    let current = node_image.status.clone().unwrap_or_default();
    let mut statuses = current.image_statuses.clone();
    let mut requeue: Option<Duration> = None;
    let mut wanted = BTreeSet::new();
    let now_time = Time(Timestamp::from_second(now.as_second()).unwrap_or(now));
    for (name, spec) in &node_image.spec.images {
        let mut status = statuses.get(name).cloned().unwrap_or_default();
        for tag in &spec.tags {
            wanted.insert((name.clone(), tag.tag.clone()));
            let Some(created) = &tag.created_at else {
                continue;
            };
            let index = status
                .tags
                .iter()
                .position(|reported| reported.tag == tag.tag);
            let reported = index.and_then(|index| status.tags.get(index));
            let fail = |message: &str| ImageTagStatus {
                tag: tag.tag.clone(),
                phase: ImagePullPhase::Failed,
                completion_time: Some(now_time.clone()),
                version: tag.version,
                message: message.to_owned(),
                ..reported.cloned().unwrap_or_default()
            };
            let mut failed: Option<ImageTagStatus> = None;
            if reported.is_none_or(|reported| reported.version != tag.version) {
                if let Some(wait) = wait_until(created.0, RESPONSE_TIMEOUT, now) {
                    requeue = Some(requeue.map_or(wait, |current| current.min(wait)));
                    continue;
                }
                failed = Some(fail("node has not responded for a long time"));
            }
            let running = failed
                .as_ref()
                .or(reported)
                .is_some_and(|t| t.completion_time.is_none());
            if let Some(deadline) = tag
                .pull_policy
                .as_ref()
                .and_then(|p| p.active_deadline_seconds)
                && running
            {
                let budget = Duration::from_secs(u64::try_from(deadline).unwrap_or_default())
                    .saturating_add(RESPONSE_TIMEOUT);
                match wait_until(created.0, budget, now) {
                    Some(wait) => requeue = Some(requeue.map_or(wait, |current| current.min(wait))),
                    None => failed = Some(fail("pulling exceeds the activeDeadlineSeconds")),
                }
            }
            if let Some(failed) = failed {
                match index.and_then(|index| status.tags.get_mut(index)) {
                    Some(existing) => *existing = failed,
                    None => status.tags.push(failed),
                }
            }
        }
        if !status.tags.is_empty() {
            status.tags.sort_by(|a, b| a.tag.cmp(&b.tag));
            statuses.insert(name.clone(), status);
        }
    }
    let requeue = requeue.map(|wait| wait.max(MIN_REQUEUE));
    if statuses == current.image_statuses {
        return (None, requeue);
    }
    let mut new = NodeImageStatus {
        first_sync_status: current.first_sync_status.clone(),
        ..NodeImageStatus::default()
    };
    for (name, status) in statuses {
        if !node_image.spec.images.contains_key(&name) {
            continue;
        }
        let tags: Vec<ImageTagStatus> = status
            .tags
            .into_iter()
            .filter(|tag| wanted.contains(&(name.clone(), tag.tag.clone())))
            .collect();
        if !tags.is_empty() {
            new.image_statuses.insert(name, ImageStatus { tags });
        }
    }
    count(&mut new, wanted.len());
    (Some(new), requeue)
}

/// Sets `desired` and the per-phase counts from the tag statuses.
pub fn count(status: &mut NodeImageStatus, desired: usize) {
    let phases = status
        .image_statuses
        .values()
        .flat_map(|image| image.tags.iter().map(|tag| &tag.phase));
    let (mut succeeded, mut failed, mut pulling) = (0, 0, 0);
    for phase in phases {
        match phase {
            ImagePullPhase::Succeeded => succeeded += 1,
            ImagePullPhase::Failed => failed += 1,
            ImagePullPhase::Pulling => pulling += 1,
            _ => {}
        }
    }
    status.desired = i32::try_from(desired).unwrap_or(i32::MAX);
    status.succeeded = succeeded;
    status.failed = failed;
    status.pulling = pulling;
    status.waiting = (status.desired - succeeded - failed - pulling).max(0);
}

#[cfg(test)]
#[path = "node_image_tests.rs"]
mod tests;
