//! Image pre-download for in-place updates, as the CloneSet controller runs it with the gate
//! `PreDownloadImageForInPlaceUpdate` (default off). The decision is
//! `kruise_schedule::image_pull::predownload::decide`; this module feeds it the
//! controller's revisions and carries it out, in each reconcile before the pods are touched:
//!
//! * while the update revision differs from the current one: decide, with `can_update_in_place` from
//!   `kruise_inplace::calculate::can_update_in_place` between the two revisions (the CloneSet's update
//!   options, as the planner uses them); create the ImagePullJobs `<update revision>-<container>` (one
//!   that exists already is fine; any other failure is an Event `FailedCreateImagePullJob` and a log line,
//!   as upstream, which goes on); then label the update ControllerRevision
//!   `apps.kruise.io/pre-predownload-created: "true"` (or `apps.kruise.io/image-predownload-ignored: "true"`
//!   when the decision is to ignore it), so the revision is decided once. The label write's
//!   `resourceVersion` becomes an expectation: the next reconcile waits for the cache to show it.
//! * when a rollout completes (the status's current revision moves to the update revision): delete the
//!   ImagePullJobs the CloneSet controls.
//!
//! Failures here never fail the reconcile (upstream logs them and goes on); a revision whose label could
//! not be written is decided again next time.
//!
//! Deviation: upstream deletes the CloneSet's jobs in every reconcile where the revisions agree (a list
//! from its informer cache); this controller has no ImagePullJob cache, so it lists and deletes them once,
//! when the rollout completes. Jobs left behind by a manager that stopped at that moment finish and go
//! after their TTL (600 s).

use kruise_runtime::harness::object_key;
use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{ObjectReference, PodTemplateSpec};
use kruise_api::apps::v1beta1::{CloneSet, CloneSetStatus, ImagePullJob};
use kruise_api::keys::inplace as keys;
use kruise_inplace::UpdateOptions;
use kube::api::{ListParams, Patch};
use kube::{Api, ResourceExt};
use serde_json::{Value, json};

use super::context::Shared;
use super::events::Record;
use crate::actions::{self, ActionError};
use crate::workload::owner::key_of;
use kruise_schedule::image_pull::predownload::{
    HASH_LABEL, PreDownload, PreDownloadError, Revisions, decide,
};

/// The pod template a CloneSet ControllerRevision holds (`data.spec.template`), if it reads as one.
#[must_use]
pub fn revision_template(revision: &ControllerRevision) -> Option<PodTemplateSpec> {
    let template = revision.data.0.get("spec")?.get("template")?;
    serde_json::from_value(template.clone()).ok()
}

/// The pre-download decision for `cloneset` rolling from `current` to `update`, with the CloneSet's
/// in-place `options`; `None` when there is no rollout (same revision).
///
/// # Errors
/// [`PreDownloadError`] when a setting does not parse.
pub fn decide_for_revisions(
    cloneset: &CloneSet,
    current: &ControllerRevision,
    update: &ControllerRevision,
    options: &UpdateOptions,
) -> Result<Option<PreDownload>, PreDownloadError> {
    let update_name = update.name_any();
    if current.name_any() == update_name {
        return Ok(None);
    }
    let no_labels = BTreeMap::new();
    let labels = update.metadata.labels.as_ref().unwrap_or(&no_labels);
    if labels.contains_key(keys::IMAGE_PRE_DOWNLOAD_CREATED_LABEL)
        || labels.contains_key(keys::IMAGE_PRE_DOWNLOAD_IGNORED_LABEL)
    {
        // Decided before: skip the in-place calculation.
        return Ok(Some(PreDownload::Done));
    }
    let can_update_in_place =
        kruise_inplace::calculate::can_update_in_place(current, update, options);
    let current_template = revision_template(current).unwrap_or_default();
    let update_template = revision_template(update).unwrap_or_default();
    let revisions = Revisions {
        current: &current_template,
        update: &update_template,
        update_name: &update_name,
        update_hash: labels.get(HASH_LABEL).map_or("", String::as_str),
        update_labels: labels,
    };
    decide(cloneset, &revisions, can_update_in_place).map(Some)
}

/// Whether this reconcile completes a rollout: the current revision moves from `old`'s to `new`'s, which
/// is the update revision (not the first status of a new CloneSet).
#[must_use]
pub fn rollout_completed(old: Option<&CloneSetStatus>, new: &CloneSetStatus) -> bool {
    let old_current = old.map_or("", |status| status.current_revision.as_str());
    !old_current.is_empty()
        && old_current != new.current_revision
        && new.current_revision == new.update_revision
}

/// The strategic merge patch that puts `label: "true"` on a revision.
#[must_use]
pub fn label_patch(label: &str) -> Value {
    json!({"metadata": {"labels": {label: "true"}}})
}

/// Whether `job`'s controller owner is the object with `uid`.
#[must_use]
pub fn controlled_by(job: &ImagePullJob, uid: &str) -> bool {
    job.owner_references()
        .iter()
        .any(|owner| owner.controller == Some(true) && owner.uid == uid)
}

/// What [`sync`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Synced {
    /// Jobs created.
    pub created: Vec<String>,
    /// Jobs that existed already.
    pub existing: Vec<String>,
    /// Jobs whose creation failed otherwise.
    pub failed: Vec<String>,
    /// The label written on the update revision.
    pub labelled: Option<&'static str>,
}

/// Runs the pre-download step for `cloneset` (not being deleted) rolling from `current` to `update`:
/// creates the jobs and labels the update revision as decided. Failures are logged (and recorded as
/// Events for job creations), never returned.
pub async fn sync(
    shared: &Shared,
    cloneset: &CloneSet,
    reference: &ObjectReference,
    current: &ControllerRevision,
    update: &ControllerRevision,
    options: &UpdateOptions,
) -> Synced {
    let key = object_key(cloneset);
    let mut synced = Synced::default();
    let decision = match decide_for_revisions(cloneset, current, update, options) {
        Ok(Some(decision)) => decision,
        Ok(None) => return synced,
        Err(error) => {
            tracing::warn!(cloneset = %key, %error, "image pre-download not decided");
            return synced;
        }
    };
    let namespace = cloneset.namespace().unwrap_or_default();
    let label = match decision {
        PreDownload::Done | PreDownload::NotYet => return synced,
        PreDownload::Ignore(reason) => {
            tracing::debug!(cloneset = %key, revision = %update.name_any(), reason, "no image pre-download");
            keys::IMAGE_PRE_DOWNLOAD_IGNORED_LABEL
        }
        PreDownload::Create(jobs) => {
            let api: Api<ImagePullJob> = Api::namespaced(shared.client.clone(), &namespace);
            for job in &jobs {
                let name = job.name_any();
                match actions::create(&api, job).await {
                    Ok(_) => {
                        tracing::info!(cloneset = %key, job = %name, image = %job.spec.image, "created an ImagePullJob");
                        shared.events.record(
                            reference,
                            Record::created_image_pull_job(&name, &job.spec.image),
                        );
                        synced.created.push(name);
                    }
                    Err(ActionError::Conflict { .. }) => synced.existing.push(name),
                    Err(error) => {
                        tracing::warn!(cloneset = %key, job = %name, %error, "creating an ImagePullJob failed");
                        shared
                            .events
                            .record(reference, Record::image_pull_job_failed(&name, &error));
                        synced.failed.push(name);
                    }
                }
            }
            keys::IMAGE_PRE_DOWNLOAD_CREATED_LABEL
        }
    };
    let revisions: Api<ControllerRevision> = Api::namespaced(shared.client.clone(), &namespace);
    let name = update.name_any();
    let object = format!("{namespace}/{name}");
    match actions::patch(
        &revisions,
        &object,
        &name,
        None,
        &Patch::Strategic(label_patch(label)),
    )
    .await
    {
        Ok(patched) => {
            if let Some(version) = patched.resource_version()
                && Some(version.as_str()) != update.metadata.resource_version.as_deref()
            {
                shared
                    .expectations
                    .expect_version(&key_of("rev", &namespace, &name), &version);
            }
            synced.labelled = Some(label);
        }
        Err(error) => {
            tracing::warn!(cloneset = %key, revision = %name, label, %error, "labelling the update revision failed");
        }
    }
    synced
}

/// Deletes the ImagePullJobs `cloneset` controls (its rollout completed). Returns how many were deleted;
/// failures are logged.
pub async fn delete_jobs(shared: &Shared, cloneset: &CloneSet) -> usize {
    let key = object_key(cloneset);
    let Some(uid) = cloneset.uid() else {
        return 0;
    };
    let api: Api<ImagePullJob> = Api::namespaced(
        shared.client.clone(),
        &cloneset.namespace().unwrap_or_default(),
    );
    let jobs = match api.list(&ListParams::default()).await {
        Ok(list) => list.items,
        Err(error) => {
            tracing::warn!(cloneset = %key, %error, "listing ImagePullJobs failed");
            return 0;
        }
    };
    let mut deleted = 0;
    for job in jobs.iter().filter(|job| controlled_by(job, &uid)) {
        match actions::delete(&api, job).await {
            Ok(()) => {
                tracing::info!(cloneset = %key, job = %job.name_any(), "deleted the ImagePullJob of a completed rollout");
                deleted += 1;
            }
            Err(error) => {
                tracing::warn!(cloneset = %key, job = %job.name_any(), %error, "deleting an ImagePullJob failed");
                return deleted;
            }
        }
    }
    deleted
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use axum::http::{Request, Response};
    use kruise_schedule::cloneset::Options;
    use serde_json::json;

    use super::*;
    use crate::cloneset::events::EventSink;
    use crate::cloneset::revisions::new_revision;
    use crate::metrics::Metrics;

    fn cloneset(replicas: i32, main: &str, side: &str) -> CloneSet {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "ns", "uid": "cs-uid"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "main", "image": main},
                        {"name": "side", "image": side}]}},
                "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible",
                    "partition": 1, "maxUnavailable": 1}},
            },
        }))
        .unwrap()
    }

    fn revisions(old: &CloneSet, new: &CloneSet) -> (ControllerRevision, ControllerRevision) {
        (
            new_revision(old, 1, 0).unwrap(),
            new_revision(new, 2, 0).unwrap(),
        )
    }

    #[test]
    fn the_decision_reads_the_controller_revisions() {
        let old = cloneset(4, "app:v1", "side:v1");
        let new = cloneset(4, "app:v2", "side:v1");
        let (current, update) = revisions(&old, &new);
        let options = UpdateOptions::default();
        let Some(PreDownload::Create(jobs)) =
            decide_for_revisions(&new, &current, &update, &options).unwrap()
        else {
            panic!("no jobs");
        };
        assert_eq!(jobs.len(), 1, "only the changed image");
        assert_eq!(
            jobs[0].metadata.name.as_deref(),
            Some(format!("{}-main", update.name_any()).as_str())
        );
        assert_eq!(jobs[0].spec.image, "app:v2");
        assert_eq!(
            jobs[0].metadata.labels.as_ref().unwrap()[HASH_LABEL],
            update.labels()[HASH_LABEL]
        );
        assert!(controlled_by(&jobs[0], "cs-uid"));
        assert!(!controlled_by(&jobs[0], "other"));
        assert_eq!(
            revision_template(&update)
                .and_then(|t| t.spec)
                .map(|s| s.containers[0].image.clone()),
            Some(Some("app:v2".to_owned()))
        );

        // No rollout, or decided before.
        assert_eq!(
            decide_for_revisions(&new, &update, &update, &options).unwrap(),
            None
        );
        let mut labelled = update.clone();
        labelled.labels_mut().insert(
            keys::IMAGE_PRE_DOWNLOAD_IGNORED_LABEL.to_owned(),
            "true".to_owned(),
        );
        assert_eq!(
            decide_for_revisions(&new, &current, &labelled, &options).unwrap(),
            Some(PreDownload::Done)
        );

        // Three replicas, or a change that cannot be made in place: ignored.
        let small = cloneset(3, "app:v2", "side:v1");
        assert!(matches!(
            decide_for_revisions(&small, &current, &update, &options).unwrap(),
            Some(PreDownload::Ignore(_))
        ));
        let mut recreate = new.clone();
        if let Some(spec) = recreate.spec.template.spec.as_mut() {
            spec.containers[0].command = Some(vec!["sh".to_owned()]);
        }
        let (_, not_in_place) = revisions(&old, &recreate);
        assert_eq!(
            decide_for_revisions(&recreate, &current, &not_in_place, &options).unwrap(),
            Some(PreDownload::Ignore(
                "the revision cannot be updated in place"
            ))
        );
    }

    #[test]
    fn a_rollout_completes_when_the_current_revision_reaches_the_update_revision() {
        let status = |current: &str, update: &str| CloneSetStatus {
            current_revision: current.to_owned(),
            update_revision: update.to_owned(),
            ..CloneSetStatus::default()
        };
        assert!(rollout_completed(
            Some(&status("web-1", "web-2")),
            &status("web-2", "web-2")
        ));
        assert!(!rollout_completed(
            Some(&status("web-1", "web-2")),
            &status("web-1", "web-2")
        ));
        assert!(!rollout_completed(
            Some(&status("web-2", "web-2")),
            &status("web-2", "web-2")
        ));
        assert!(
            !rollout_completed(None, &status("web-1", "web-1")),
            "a new CloneSet"
        );
        assert!(!rollout_completed(
            Some(&status("", "")),
            &status("web-1", "web-1")
        ));
        assert_eq!(
            label_patch(keys::IMAGE_PRE_DOWNLOAD_CREATED_LABEL),
            json!({"metadata": {"labels": {"apps.kruise.io/pre-predownload-created": "true"}}})
        );
    }

    /// A request the fake API server saw: method, path, content type, body.
    type Seen = Arc<Mutex<Vec<(String, String, String, Value)>>>;

    /// A client whose API server creates the first ImagePullJob, answers 409 for the others, and
    /// patches revisions to `resourceVersion` 2.
    fn fake_client(seen: Seen) -> kube::Client {
        let service = tower::service_fn(move |request: Request<kube::client::Body>| {
            let seen = Arc::clone(&seen);
            async move {
                let (parts, body) = request.into_parts();
                let bytes = body.collect_bytes().await.unwrap();
                let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                let content_type = parts
                    .headers
                    .get("content-type")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                let path = parts.uri.path().to_owned();
                let method = parts.method.to_string();
                let creates = {
                    let mut seen = seen.lock().unwrap();
                    seen.push((method.clone(), path.clone(), content_type, body.clone()));
                    seen.iter().filter(|(m, ..)| m == "POST").count()
                };
                let (status, reply) = match method.as_str() {
                    "POST" if creates == 1 => (201, body),
                    "POST" => (
                        409,
                        json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                            "reason": "AlreadyExists", "code": 409, "message": "exists"}),
                    ),
                    _ => (
                        200,
                        json!({"apiVersion": "apps/v1", "kind": "ControllerRevision",
                            "metadata": {"name": path.rsplit('/').next(), "namespace": "ns",
                                "resourceVersion": "2"},
                            "data": {}, "revision": 2}),
                    ),
                };
                Ok::<_, std::convert::Infallible>(
                    Response::builder()
                        .status(status)
                        .body(kube::client::Body::from(
                            serde_json::to_vec(&reply).unwrap(),
                        ))
                        .unwrap(),
                )
            }
        });
        kube::Client::new(service, "default")
    }

    #[tokio::test]
    async fn sync_creates_the_jobs_then_labels_the_revision() {
        let seen: Seen = Arc::default();
        let shared = Shared::new(
            fake_client(Arc::clone(&seen)),
            EventSink::disabled(),
            Options::default(),
            Metrics::new().controller("cloneset"),
        );
        let old = cloneset(4, "app:v1", "side:v1");
        let new = cloneset(4, "app:v2", "side:v2");
        let (current, mut update) = revisions(&old, &new);
        update.metadata.resource_version = Some("1".to_owned());
        let reference = ObjectReference::default();
        let synced = sync(
            &shared,
            &new,
            &reference,
            &current,
            &update,
            &UpdateOptions::default(),
        )
        .await;
        let name = update.name_any();
        assert_eq!(synced.created, [format!("{name}-main")]);
        assert_eq!(synced.existing, [format!("{name}-side")], "409 is fine");
        assert!(synced.failed.is_empty());
        assert_eq!(
            synced.labelled,
            Some(keys::IMAGE_PRE_DOWNLOAD_CREATED_LABEL)
        );
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 3, "{seen:?}");
        assert_eq!(
            (seen[0].0.as_str(), seen[0].1.as_str()),
            (
                "POST",
                "/apis/apps.kruise.io/v1beta1/namespaces/ns/imagepulljobs"
            )
        );
        assert_eq!(seen[0].3["spec"]["image"], "app:v2");
        assert_eq!(seen[1].3["spec"]["image"], "side:v2");
        let (method, path, content_type, body) = &seen[2];
        assert_eq!(method, "PATCH");
        assert_eq!(
            path,
            &format!("/apis/apps/v1/namespaces/ns/controllerrevisions/{name}")
        );
        assert_eq!(content_type, "application/strategic-merge-patch+json");
        assert_eq!(body, &label_patch(keys::IMAGE_PRE_DOWNLOAD_CREATED_LABEL));
        // The next reconcile waits until the cache shows the labelled revision.
        let key = key_of("rev", "ns", &name);
        assert!(!shared.expectations.version_satisfied(&key, "1"));
        assert!(shared.expectations.version_satisfied(&key, "2"));

        // Decided: a second pass with the labelled revision does nothing.
        let mut labelled = update.clone();
        labelled.labels_mut().insert(
            keys::IMAGE_PRE_DOWNLOAD_CREATED_LABEL.to_owned(),
            "true".to_owned(),
        );
        let again = sync(
            &shared,
            &new,
            &reference,
            &current,
            &labelled,
            &UpdateOptions::default(),
        )
        .await;
        assert_eq!(again, Synced::default());
    }
}
