//! The node agent's NodeImage decisions (upstream `pkg/daemon/imagepuller`): which tags of its NodeImage still need a pull, the
//! credentials of a pull secret for an image's registry, the backoff between attempts, the tag status to
//! report, and whether a report still applies to the NodeImage as it is now ([`merge_report`]).
//!
//! A tag needs a pull when the status has no entry for it with the spec's `version` that is `Succeeded` or
//! `Failed` (a new `version` is a new round). Each pull attempt is bounded by the tag's `timeoutSeconds`
//! (600 by default); a failed attempt is retried up to `backoffLimit` times (3 by default), waiting 1 s,
//! 2 s, 4 s ... (at most 60 s) in between.
//!
//! The daemon decides what to pull from its watch cache, which lags behind its own writes: right after it
//! reported a tag `Succeeded`, the cache may still show the `Pulling` it wrote before. A report is therefore
//! merged into the NodeImage the API server returns now, and refused when that copy shows the decision was
//! stale ([`StaleReport`]); the write carries that copy's `resourceVersion`.
//!
//! ```
//! use kruise_api::apps::v1beta1::NodeImage;
//! use kruise_schedule::image_pull::node_pulls::pending;
//!
//! let node_image: NodeImage = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "node-0"},
//!     "spec": {"images": {"127.0.0.1:5000/app": {"tags": [{"tag": "v2", "version": 1,
//!         "createdAt": "2024-05-01T10:00:00Z"}]}}},
//! })).unwrap();
//! let tasks = pending(&node_image);
//! assert_eq!(tasks[0].reference(), "127.0.0.1:5000/app:v2");
//! assert_eq!((tasks[0].version, tasks[0].attempts), (1, 4));
//! ```

use std::time::Duration;

use base64::Engine;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::apps::v1beta1::{
    ImagePullPhase, ImagePullPolicy, ImageTagStatus, NodeImage, NodeImageStatus, ReferenceObject,
    SandboxConfig,
};
use serde_json::Value;

use super::node_image::count;
use super::reference::{join, registry};

/// The default bound of one pull attempt.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// The default number of retries after a failed attempt.
pub const DEFAULT_BACKOFF_LIMIT: u32 = 3;
/// The longest wait between attempts.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// One tag to pull.
#[derive(Clone, Debug, PartialEq)]
pub struct PullTask {
    /// The image name (the NodeImage key).
    pub name: String,
    /// The tag.
    pub tag: String,
    /// The spec version this pull answers.
    pub version: i64,
    /// The bound of one attempt.
    pub timeout: Duration,
    /// How many attempts at most (`backoffLimit + 1`).
    pub attempts: u32,
    /// The pull secrets to look credentials up in.
    pub secrets: Vec<ReferenceObject>,
    /// `IfNotPresent`: an image the runtime has already counts as pulled.
    pub if_not_present: bool,
    /// Labels and annotations for the sandbox config passed to the runtime.
    pub sandbox_config: Option<SandboxConfig>,
}

impl PullTask {
    /// `name:tag` (or `name@digest`), as given to the runtime.
    #[must_use]
    pub fn reference(&self) -> String {
        join(&self.name, &self.tag)
    }
}

/// The tags of `node_image` that need a pull, in image then tag order.
#[must_use]
pub fn pending(node_image: &NodeImage) -> Vec<PullTask> {
    let statuses = node_image
        .status
        .as_ref()
        .map(|status| &status.image_statuses);
    let mut tasks = Vec::new();
    for (name, spec) in &node_image.spec.images {
        for tag in &spec.tags {
            let done = statuses
                .and_then(|statuses| statuses.get(name))
                .and_then(|status| status.tags.iter().find(|reported| reported.tag == tag.tag))
                .is_some_and(|reported| {
                    reported.version == tag.version
                        && matches!(
                            reported.phase,
                            ImagePullPhase::Succeeded | ImagePullPhase::Failed
                        )
                });
            if done {
                continue;
            }
            let policy = tag.pull_policy.clone().unwrap_or_default();
            let timeout = policy
                .timeout_seconds
                .and_then(|seconds| u64::try_from(seconds).ok())
                .filter(|&seconds| seconds > 0)
                .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
            let retries = policy
                .backoff_limit
                .and_then(|limit| u32::try_from(limit).ok())
                .unwrap_or(DEFAULT_BACKOFF_LIMIT);
            tasks.push(PullTask {
                name: name.clone(),
                tag: tag.tag.clone(),
                version: tag.version,
                timeout,
                attempts: retries.saturating_add(1),
                secrets: spec.pull_secrets.clone(),
                if_not_present: tag.image_pull_policy != Some(ImagePullPolicy::Always),
                sandbox_config: spec.sandbox_config.clone(),
            });
        }
    }
    tasks
}

/// The wait before attempt number `attempt` (0-based; the first has none).
#[must_use]
pub fn backoff(attempt: u32) -> Duration {
    if attempt == 0 {
        return Duration::ZERO;
    }
    Duration::from_secs(1u64 << (attempt - 1).min(6)).min(MAX_BACKOFF)
}

/// Credentials for a registry.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// User name.
    pub username: String,
    /// Password.
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .finish_non_exhaustive()
    }
}

fn host_of(key: &str) -> &str {
    let key = key
        .strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
        .unwrap_or(key);
    key.split('/').next().unwrap_or(key)
}

/// The credentials for the registry of image `name` in a pull secret's data: `.dockerconfigjson`
/// (`{"auths": {REGISTRY: {...}}}`) or the older `.dockercfg` (`{REGISTRY: {...}}`), each entry with
/// `username` and `password` or a base64 `auth` of `user:password`. Docker Hub images match the keys
/// `docker.io`, `index.docker.io` and `https://index.docker.io/v1/`.
#[must_use]
pub fn credentials(
    data: &std::collections::BTreeMap<String, Vec<u8>>,
    name: &str,
) -> Option<Credentials> {
    let wanted = registry(name);
    let hub = |host: &str| {
        matches!(
            host,
            "docker.io" | "index.docker.io" | "registry-1.docker.io"
        )
    };
    let entries: Value = if let Some(json) = data.get(".dockerconfigjson") {
        serde_json::from_slice::<Value>(json)
            .ok()?
            .get("auths")?
            .clone()
    } else {
        serde_json::from_slice(data.get(".dockercfg")?).ok()?
    };
    let (_, entry) = entries.as_object()?.iter().find(|(key, _)| {
        let host = host_of(key);
        host == wanted || (hub(host) && hub(wanted))
    })?;
    let field = |key: &str| {
        entry
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (username, password) = (field("username"), field("password"));
    if !username.is_empty() {
        return Some(Credentials { username, password });
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(field("auth"))
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (username, password) = text.split_once(':')?;
    Some(Credentials {
        username: username.to_owned(),
        password: password.to_owned(),
    })
}

/// The status of a tag being pulled (`Pulling`, progress 0, started now).
#[must_use]
pub fn pulling(task: &PullTask, now: Time) -> ImageTagStatus {
    ImageTagStatus {
        tag: task.tag.clone(),
        phase: ImagePullPhase::Pulling,
        progress: 0,
        start_time: Some(now),
        version: task.version,
        ..ImageTagStatus::default()
    }
}

/// The status of a finished pull: `Succeeded` with the image ID and progress 100, or `Failed` with the
/// last error.
#[must_use]
pub fn finished(
    started: &ImageTagStatus,
    outcome: Result<String, String>,
    now: Time,
) -> ImageTagStatus {
    match outcome {
        Ok(image_id) => ImageTagStatus {
            phase: ImagePullPhase::Succeeded,
            progress: 100,
            completion_time: Some(now),
            image_id,
            message: String::new(),
            ..started.clone()
        },
        Err(message) => ImageTagStatus {
            phase: ImagePullPhase::Failed,
            completion_time: Some(now),
            message,
            ..started.clone()
        },
    }
}

/// Why a tag report is not written: the NodeImage as it is now shows the report answers a question no one
/// asks any more.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StaleReport {
    /// The spec no longer asks for this tag at this version (the tag was dropped, or a new round began).
    #[error("{image}: the spec no longer asks for version {version}")]
    NotAsked {
        /// `name:tag`.
        image: String,
        /// The version the report answers.
        version: i64,
    },
    /// A `Pulling` report for a pull that has already finished: the decision to pull was made on a copy
    /// older than the finished report.
    #[error("{image}: version {version} has already finished ({phase:?})")]
    AlreadyFinished {
        /// `name:tag`.
        image: String,
        /// The version the report answers.
        version: i64,
        /// The phase the NodeImage holds.
        phase: ImagePullPhase,
    },
}

fn finished_phase(phase: &ImagePullPhase) -> bool {
    matches!(phase, ImagePullPhase::Succeeded | ImagePullPhase::Failed)
}

/// The status of `current` (the NodeImage as the API server returned it just now) with `report` (the
/// daemon's status of one tag of image `name`) in place of that tag's entry, the tags in order and the
/// counts recomputed.
///
/// A report is refused when `current`'s spec no longer asks for the tag at the report's version, or when it
/// says `Pulling` while `current` already holds a finished (`Succeeded` / `Failed`) status of that version.
/// A finished report replaces whatever `current` holds for its version (the daemon knows better than a
/// "node did not answer" written by kruise-manager).
///
/// # Errors
/// [`StaleReport`] when the report must not be written.
pub fn merge_report(
    current: &NodeImage,
    name: &str,
    report: &ImageTagStatus,
) -> Result<NodeImageStatus, StaleReport> {
    let asked = current
        .spec
        .images
        .get(name)
        .and_then(|image| image.tags.iter().find(|tag| tag.tag == report.tag))
        .is_some_and(|tag| tag.version == report.version);
    if !asked {
        return Err(StaleReport::NotAsked {
            image: join(name, &report.tag),
            version: report.version,
        });
    }
    let mut status = current.status.clone().unwrap_or_default();
    let entry = status.image_statuses.entry(name.to_owned()).or_default();
    let existing = entry.tags.iter_mut().find(|tag| tag.tag == report.tag);
    match existing {
        Some(existing)
            if existing.version == report.version
                && finished_phase(&existing.phase)
                && !finished_phase(&report.phase) =>
        {
            return Err(StaleReport::AlreadyFinished {
                image: join(name, &report.tag),
                version: report.version,
                phase: existing.phase.clone(),
            });
        }
        Some(existing) => *existing = report.clone(),
        None => entry.tags.push(report.clone()),
    }
    entry.tags.sort_by(|a, b| a.tag.cmp(&b.tag));
    let desired: usize = current
        .spec
        .images
        .values()
        .map(|image| image.tags.len())
        .sum();
    count(&mut status, desired);
    Ok(status)
}

#[cfg(test)]
#[allow(clippy::needless_pass_by_value, clippy::type_complexity)] // table helpers take owned JSON values
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    fn node_image(status: Value) -> NodeImage {
        serde_json::from_value(json!({
            "metadata": {"name": "n"},
            "spec": {"images": {
                "127.0.0.1:5000/app": {"tags": [
                    {"tag": "v1", "version": 0, "pullPolicy": {"timeoutSeconds": 5, "backoffLimit": 1}},
                    {"tag": "v2", "version": 2, "imagePullPolicy": "Always"}],
                    "pullSecrets": [{"namespace": "ns", "name": "regcred"}]}}},
            "status": status,
        }))
        .unwrap()
    }

    #[test]
    fn pending_tags_are_those_without_a_final_status_of_their_version() {
        let all = pending(&node_image(json!({})));
        assert_eq!(all.len(), 2);
        assert_eq!(
            (all[0].timeout, all[0].attempts, all[0].if_not_present),
            (Duration::from_secs(5), 2, true)
        );
        assert_eq!(
            (all[1].timeout, all[1].attempts, all[1].if_not_present),
            (DEFAULT_TIMEOUT, 4, false)
        );
        assert_eq!(all[0].secrets[0].name, "regcred");
        let status = |phase: &str, version: i64| {
            json!({"imageStatuses": {"127.0.0.1:5000/app": {"tags": [
                {"tag": "v1", "phase": phase, "version": 0},
                {"tag": "v2", "phase": phase, "version": version}]}}})
        };
        assert!(pending(&node_image(status("Succeeded", 2))).is_empty());
        assert!(pending(&node_image(status("Failed", 2))).is_empty());
        let again: Vec<String> = pending(&node_image(status("Succeeded", 1)))
            .iter()
            .map(|t| t.tag.clone())
            .collect();
        assert_eq!(again, ["v2"], "a new version is a new round");
        assert_eq!(
            pending(&node_image(status("Pulling", 2))).len(),
            2,
            "an interrupted pull starts again"
        );
    }

    #[test]
    fn backoff_doubles() {
        let waits: Vec<u64> = (0..4).map(|attempt| backoff(attempt).as_secs()).collect();
        assert_eq!(waits, [0, 1, 2, 4]);
        assert_eq!(backoff(40), MAX_BACKOFF);
    }

    #[test]
    fn credentials_from_docker_config_secrets() {
        let config = |value: Value| {
            BTreeMap::from([(
                ".dockerconfigjson".to_owned(),
                value.to_string().into_bytes(),
            )])
        };
        let plain = config(
            json!({"auths": {"127.0.0.1:5001": {"username": "kruise", "password": "s3cret"}}}),
        );
        let found = credentials(&plain, "127.0.0.1:5001/private/busybox").unwrap();
        assert_eq!(
            (found.username.as_str(), found.password.as_str()),
            ("kruise", "s3cret")
        );
        assert!(credentials(&plain, "127.0.0.1:5000/private/busybox").is_none());
        assert!(
            !format!("{found:?}").contains("s3cret"),
            "passwords stay out of logs"
        );

        let encoded = config(json!({"auths": {"https://index.docker.io/v1/": {"auth": "dTpw"}}}));
        let hub = credentials(&encoded, "nginx").unwrap();
        assert_eq!((hub.username.as_str(), hub.password.as_str()), ("u", "p"));

        let legacy = BTreeMap::from([(
            ".dockercfg".to_owned(),
            br#"{"quay.io": {"auth": "dTpw"}}"#.to_vec(),
        )]);
        assert!(credentials(&legacy, "quay.io/org/app").is_some());
        assert!(credentials(&BTreeMap::new(), "quay.io/org/app").is_none());
        let garbage = BTreeMap::from([(".dockerconfigjson".to_owned(), b"{".to_vec())]);
        assert!(credentials(&garbage, "quay.io/org/app").is_none());
    }

    #[test]
    fn statuses() {
        let task = &pending(&node_image(json!({})))[1];
        let now = Time("2024-05-01T10:00:00Z".parse().unwrap());
        let started = pulling(task, now.clone());
        assert_eq!(
            (started.phase.clone(), started.version),
            (ImagePullPhase::Pulling, 2)
        );
        let ok = finished(&started, Ok("sha256:abc".into()), now.clone());
        assert_eq!(
            (ok.phase, ok.progress, ok.image_id.as_str()),
            (ImagePullPhase::Succeeded, 100, "sha256:abc")
        );
        let failed = finished(&started, Err("401 Unauthorized".into()), now);
        assert_eq!(
            (failed.phase, failed.message.as_str()),
            (ImagePullPhase::Failed, "401 Unauthorized")
        );
    }

    fn report(tag: &str, phase: ImagePullPhase, version: i64) -> ImageTagStatus {
        ImageTagStatus {
            tag: tag.into(),
            phase,
            version,
            ..ImageTagStatus::default()
        }
    }

    #[test]
    fn a_pulling_report_made_from_a_stale_copy_does_not_undo_a_finished_pull() {
        // The daemon's cache still shows its own `Pulling`, the API server already has `Succeeded`.
        let stale = node_image(json!({"imageStatuses": {"127.0.0.1:5000/app": {"tags": [
            {"tag": "v2", "phase": "Pulling", "version": 2}]}}}));
        let current = node_image(json!({"imageStatuses": {"127.0.0.1:5000/app": {"tags": [
            {"tag": "v2", "phase": "Succeeded", "progress": 100, "version": 2, "imageID": "sha256:abc"}]}}}));
        let task = pending(&stale)
            .into_iter()
            .find(|task| task.tag == "v2")
            .unwrap();
        let now = Time("2024-05-01T10:00:00Z".parse().unwrap());
        let refused = merge_report(&current, &task.name, &pulling(&task, now.clone()));
        assert!(
            matches!(
                refused,
                Err(StaleReport::AlreadyFinished { version: 2, .. })
            ),
            "{refused:?}"
        );
        let failed = node_image(json!({"imageStatuses": {"127.0.0.1:5000/app": {"tags": [
            {"tag": "v2", "phase": "Failed", "version": 2}]}}}));
        assert!(merge_report(&failed, &task.name, &pulling(&task, now)).is_err());
    }

    #[test]
    fn reports_merge_into_the_current_status() {
        let name = "127.0.0.1:5000/app";
        let current = node_image(json!({"imageStatuses": {name: {"tags": [
            {"tag": "v1", "phase": "Succeeded", "version": 0},
            {"tag": "v2", "phase": "Pulling", "version": 2}]}}}));
        let status =
            merge_report(&current, name, &report("v2", ImagePullPhase::Succeeded, 2)).unwrap();
        let tags = &status.image_statuses[name].tags;
        assert_eq!(
            tags.iter()
                .map(|t| (t.tag.as_str(), t.phase.clone()))
                .collect::<Vec<_>>(),
            [
                ("v1", ImagePullPhase::Succeeded),
                ("v2", ImagePullPhase::Succeeded)
            ]
        );
        assert_eq!(
            (
                status.desired,
                status.succeeded,
                status.pulling,
                status.waiting
            ),
            (2, 2, 0, 0)
        );

        // An interrupted pull of the same version starts again; an older version's result is replaced.
        assert!(merge_report(&current, name, &report("v2", ImagePullPhase::Pulling, 2)).is_ok());
        let older = node_image(json!({"imageStatuses": {name: {"tags": [
            {"tag": "v2", "phase": "Succeeded", "version": 1}]}}}));
        let restarted =
            merge_report(&older, name, &report("v2", ImagePullPhase::Pulling, 2)).unwrap();
        assert_eq!(restarted.image_statuses[name].tags[0].version, 2);
        assert_eq!((restarted.pulling, restarted.waiting), (1, 1));

        // The daemon's result replaces kruise-manager's "node did not answer".
        let timed_out = node_image(json!({"imageStatuses": {name: {"tags": [
            {"tag": "v2", "phase": "Failed", "version": 2, "message": "node has not responded for a long time"}]}}}));
        let answered = merge_report(
            &timed_out,
            name,
            &report("v2", ImagePullPhase::Succeeded, 2),
        )
        .unwrap();
        assert_eq!(
            answered.image_statuses[name].tags[0].phase,
            ImagePullPhase::Succeeded
        );
        assert!(answered.image_statuses[name].tags[0].message.is_empty());
    }

    #[test]
    fn reports_for_versions_the_spec_no_longer_asks_for_are_refused() {
        let current = node_image(json!({}));
        for (tag, version) in [("v2", 1), ("v2", 3), ("v9", 0)] {
            let refused = merge_report(
                &current,
                "127.0.0.1:5000/app",
                &report(tag, ImagePullPhase::Succeeded, version),
            );
            assert!(
                matches!(refused, Err(StaleReport::NotAsked { .. })),
                "{tag}@{version}: {refused:?}"
            );
        }
        let other_image = merge_report(
            &current,
            "127.0.0.1:5000/other",
            &report("v2", ImagePullPhase::Succeeded, 2),
        );
        assert!(matches!(other_image, Err(StaleReport::NotAsked { .. })));
    }
}
