//! Copies of ImagePullJob pull secrets in the `kruise-daemon-config` namespace (upstream's
//! `syncJobPullSecrets`). kruise-daemon may read Secrets only there, so kruise-manager copies each pull secret a
//! running job names into that namespace and the NodeImages reference the copies (mode `batch`). A copy records
//! its source (`imagepulljobs.kruise.io/source-key`: `namespace/name`, and the source's UID as the label
//! `imagepulljobs.kruise.io/source-uid`) and the jobs using it (`imagepulljobs.kruise.io/references`: sorted
//! `namespace/name` keys, comma-separated). A job reuses a copy of the same source (one it already uses first),
//! brings its data and type up to date with the source, and adds itself to its references; a job in
//! `kruise-daemon-config` itself uses its secrets as they are. A copy is kept while a running job that still
//! names its source references it: the references of jobs that are gone, finished, being deleted or no longer
//! name the source are dropped, and a copy left without references is deleted. Secrets of that namespace that
//! are not copies (no source key) are never touched.
//!
//! ```
//! use k8s_openapi::api::core::v1::Secret;
//! use kruise_api::apps::v1beta1::ImagePullJob;
//! use kruise_schedule::image_pull::pull_secret_copies::{job_key, new_copy, referencing_jobs};
//!
//! let job: ImagePullJob = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "pull", "namespace": "team"},
//!     "spec": {"image": "nginx", "pullSecrets": ["regcred"], "completionPolicy": {}},
//! })).unwrap();
//! let source: Secret = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "regcred", "namespace": "team", "uid": "u1"},
//!     "type": "kubernetes.io/dockerconfigjson",
//! })).unwrap();
//! let copy = new_copy(&source, &job_key(&job));
//! assert_eq!(copy.metadata.namespace.as_deref(), Some("kruise-daemon-config"));
//! assert_eq!(copy.metadata.generate_name.as_deref(), Some("regcred-"));
//! assert_eq!(referencing_jobs(&copy).into_iter().collect::<Vec<_>>(), ["team/pull"]);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kruise_api::apps::v1beta1::{ImagePullJob, ReferenceObject};
use kruise_api::keys::image_pull::{
    DAEMON_CONFIG_NAMESPACE, SECRET_MODE_ANNOTATION, SECRET_MODE_BATCH,
    SECRET_REFERENCES_ANNOTATION, SECRET_SOURCE_KEY_ANNOTATION, SECRET_SOURCE_UID_LABEL,
};

/// `namespace/name` of a job, as copies record the jobs using them.
#[must_use]
pub fn job_key(job: &ImagePullJob) -> String {
    format!(
        "{}/{}",
        job.metadata.namespace.as_deref().unwrap_or_default(),
        job.metadata.name.as_deref().unwrap_or_default()
    )
}

/// `namespace/name` of a source secret.
#[must_use]
pub fn secret_key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

/// Whether a job's pull secrets are used as they are (the job is in `kruise-daemon-config`).
#[must_use]
pub fn uses_secrets_in_place(job: &ImagePullJob) -> bool {
    job.metadata.namespace.as_deref() == Some(DAEMON_CONFIG_NAMESPACE)
}

/// Whether a job still needs its pull secrets: not finished and not being deleted.
#[must_use]
pub fn is_running(job: &ImagePullJob) -> bool {
    job.metadata.deletion_timestamp.is_none()
        && job
            .status
            .as_ref()
            .is_none_or(|status| status.completion_time.is_none())
}

fn annotation<'a>(secret: &'a Secret, key: &str) -> Option<&'a str> {
    secret
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(key))
        .map(String::as_str)
}

/// The source (`namespace/name`) of a copy; `None` for a Secret that is not a copy.
#[must_use]
pub fn source_key(copy: &Secret) -> Option<&str> {
    annotation(copy, SECRET_SOURCE_KEY_ANNOTATION).filter(|key| !key.is_empty())
}

/// The jobs (`namespace/name`) a copy records as using it.
#[must_use]
pub fn referencing_jobs(copy: &Secret) -> BTreeSet<String> {
    annotation(copy, SECRET_REFERENCES_ANNOTATION)
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|key| !key.is_empty())
        .map(str::to_owned)
        .collect()
}

fn joined(references: &BTreeSet<String>) -> String {
    references
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(",")
}

/// The copy a job uses for the source `source`: among `copies` (of `kruise-daemon-config`, not being deleted)
/// of that source, one that already references `job`, else the first by name; `None`: one must be created.
#[must_use]
pub fn copy_for<'a>(copies: &'a [Secret], source: &str, job: &str) -> Option<&'a Secret> {
    let mut candidates: Vec<&Secret> = copies
        .iter()
        .filter(|copy| copy.metadata.deletion_timestamp.is_none())
        .filter(|copy| source_key(copy) == Some(source))
        .collect();
    candidates.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    candidates
        .iter()
        .find(|copy| referencing_jobs(copy).contains(job))
        .or_else(|| candidates.first())
        .copied()
}

/// A new copy of `source` for the job `job` (`namespace/name`): in `kruise-daemon-config`, named after the
/// source with a generated suffix, with the source's type and data.
#[must_use]
pub fn new_copy(source: &Secret, job: &str) -> Secret {
    let namespace = source.metadata.namespace.as_deref().unwrap_or_default();
    let name = source.metadata.name.as_deref().unwrap_or_default();
    let mut labels = BTreeMap::new();
    if let Some(uid) = &source.metadata.uid {
        labels.insert(SECRET_SOURCE_UID_LABEL.to_owned(), uid.clone());
    }
    Secret {
        metadata: ObjectMeta {
            namespace: Some(DAEMON_CONFIG_NAMESPACE.to_owned()),
            generate_name: Some(format!("{name}-")),
            labels: Some(labels),
            annotations: Some(BTreeMap::from([
                (SECRET_REFERENCES_ANNOTATION.to_owned(), job.to_owned()),
                (
                    SECRET_SOURCE_KEY_ANNOTATION.to_owned(),
                    secret_key(namespace, name),
                ),
                (
                    SECRET_MODE_ANNOTATION.to_owned(),
                    SECRET_MODE_BATCH.to_owned(),
                ),
            ])),
            ..ObjectMeta::default()
        },
        type_: source.type_.clone(),
        data: source.data.clone(),
        ..Secret::default()
    }
}

/// `copy` as the job `job` needs it: the source's type and data, `job` among its references; `None` when it
/// already is so (nothing to write).
#[must_use]
pub fn claimed_copy(copy: &Secret, source: &Secret, job: &str) -> Option<Secret> {
    let mut references = referencing_jobs(copy);
    let added = references.insert(job.to_owned());
    if !added && copy.data == source.data && copy.type_ == source.type_ {
        return None;
    }
    let mut claimed = copy.clone();
    claimed.data.clone_from(&source.data);
    claimed.type_.clone_from(&source.type_);
    claimed.string_data = None;
    claimed
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(SECRET_REFERENCES_ANNOTATION.to_owned(), joined(&references));
    Some(claimed)
}

/// How a NodeImage references a copy: its namespace and name, and the mode it records (`batch`).
#[must_use]
pub fn copy_reference(copy: &Secret) -> ReferenceObject {
    ReferenceObject {
        namespace: copy
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| DAEMON_CONFIG_NAMESPACE.to_owned()),
        name: copy.metadata.name.clone().unwrap_or_default(),
        mode: annotation(copy, SECRET_MODE_ANNOTATION)
            .unwrap_or(SECRET_MODE_BATCH)
            .to_owned(),
    }
}

/// What the sweep does with one copy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Sweep {
    /// Every job it records still needs it (or it is not a copy).
    Keep,
    /// Some jobs no longer need it: these are the references left.
    Release(BTreeSet<String>),
    /// No job needs it any more.
    Delete,
}

/// Whether `copy` is still needed by the jobs it records, given every ImagePullJob `jobs`: a reference stays
/// while its job exists, runs, and still names the copy's source among its pull secrets.
#[must_use]
pub fn sweep(copy: &Secret, jobs: &[&ImagePullJob]) -> Sweep {
    let Some(source) = source_key(copy) else {
        return Sweep::Keep;
    };
    if copy.metadata.deletion_timestamp.is_some() {
        return Sweep::Keep;
    }
    let references = referencing_jobs(copy);
    let kept: BTreeSet<String> = references
        .iter()
        .filter(|key| {
            jobs.iter().any(|job| {
                job_key(job) == **key
                    && is_running(job)
                    && job.spec.template.pull_secrets.iter().any(|name| {
                        secret_key(job.metadata.namespace.as_deref().unwrap_or_default(), name)
                            == source
                    })
            })
        })
        .cloned()
        .collect();
    if kept.is_empty() {
        Sweep::Delete
    } else if kept.len() == references.len() {
        Sweep::Keep
    } else {
        Sweep::Release(kept)
    }
}

/// `copy` with only the references `kept` (see [`sweep`]).
#[must_use]
pub fn released_copy(copy: &Secret, kept: &BTreeSet<String>) -> Secret {
    let mut released = copy.clone();
    released
        .metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(SECRET_REFERENCES_ANNOTATION.to_owned(), joined(kept));
    released
}

#[cfg(test)]
#[path = "pull_secret_copies_tests.rs"]
mod tests;
