//! CloneSet image pre-download for in-place updates (upstream `pkg/controller/cloneset`), pure: when a CloneSet's
//! update revision differs from its current one, whether to create ImagePullJobs for the changed images, and the
//! jobs. The CloneSet controller calls [`decide`] and executes it (create the jobs, then label the update revision
//! `apps.kruise.io/pre-predownload-created`, or `apps.kruise.io/image-predownload-ignored` when told to ignore).
//!
//! Rules (upstream's `createImagePullJobsForInPlaceUpdate`, in this order):
//! * a revision already labelled created or ignored: nothing to do;
//! * fewer updated-ready replicas than the min-updated-ready setting (`imagePreDownloadMinUpdatedReadyPods`,
//!   or the v1alpha1 annotation, scaled against `replicas`, rounding up): not yet;
//! * ignored (label the revision) when the pods are recreated (`podUpdatePolicy` `ReCreate`, the default),
//!   when `replicas <= 3`, when every pod would update in one batch (partition 0 and `maxUnavailable`, 20 %
//!   by default rounding down, at least `replicas`), or when the revision cannot be updated in place;
//! * otherwise one job per container whose image changed, named `<update revision>-<container>`, owned by
//!   the CloneSet, targeting its pods that are not yet at the update revision, with the template's labels
//!   (plus `controller.kubernetes.io/hash`), annotations and pull secrets, parallelism (default 1), timeout
//!   (default 300 s), `backoffLimit` 1, completion policy `Always` with a TTL of 600 s.
//!
//! ```
//! use kruise_schedule::image_pull::predownload::{MIN_REPLICAS_EXCLUSIVE, PreDownload, Revisions, decide};
//! # use kruise_api::apps::v1beta1::CloneSet;
//! # let template = |image: &str| serde_json::json!({"metadata": {"labels": {"app": "web"}},
//! #     "spec": {"containers": [{"name": "app", "image": image}]}});
//! # let cloneset: CloneSet = serde_json::from_value(serde_json::json!({
//! #     "metadata": {"name": "web", "namespace": "ns", "uid": "cs-uid"},
//! #     "spec": {"replicas": 10, "selector": {"matchLabels": {"app": "web"}}, "template": template("app:v2"),
//! #         "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}},
//! # })).unwrap();
//! # let current = serde_json::from_value(template("app:v1")).unwrap();
//! let revisions = Revisions { current: &current, update: &cloneset.spec.template,
//!     update_name: "web-7d9f", update_hash: "7d9f", update_labels: &Default::default() };
//! let PreDownload::Create(jobs) = decide(&cloneset, &revisions, true).unwrap() else { panic!() };
//! assert_eq!(jobs[0].metadata.name.as_deref(), Some("web-7d9f-app"));
//! assert_eq!(jobs[0].spec.image, "app:v2");
//! assert!(MIN_REPLICAS_EXCLUSIVE == 3);
//! ```

use std::collections::BTreeMap;

use crate::int_or_percent::{Rounding, ScaleError, kruise_scaled, legacy_scaled};
use crate::partition::partition_replicas;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelectorRequirement, OwnerReference};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1beta1::{
    CloneSet, CloneSetPodUpdatePolicy, CompletionPolicy, CompletionPolicyType, ImagePullJob,
    ImagePullJobPodSelector, ImagePullJobSpec, ImagePullJobTemplate, PullPolicy, SandboxConfig,
};
use kruise_api::keys::inplace as keys;

/// Pre-download only happens for more replicas than this.
pub const MIN_REPLICAS_EXCLUSIVE: i32 = 3;
/// The label of a revision's pod hash (`controller-revision-hash`), which the jobs' pod selector tests.
pub const REVISION_HASH_LABEL: &str = "controller-revision-hash";
/// The label of a ControllerRevision's hash (`controller.kubernetes.io/hash`), which the jobs carry.
pub const HASH_LABEL: &str = "controller.kubernetes.io/hash";
/// The default timeout of each pull.
pub const DEFAULT_TIMEOUT_SECONDS: i32 = 300;
/// The TTL of the jobs after they finish.
pub const JOB_TTL_SECONDS: i32 = 600;

/// The two revisions being rolled between.
#[derive(Clone, Copy, Debug)]
pub struct Revisions<'a> {
    /// The pod template of the current revision.
    pub current: &'a PodTemplateSpec,
    /// The pod template of the update revision.
    pub update: &'a PodTemplateSpec,
    /// The update revision's name.
    pub update_name: &'a str,
    /// The update revision's hash label value.
    pub update_hash: &'a str,
    /// The update revision's labels (the created/ignored markers).
    pub update_labels: &'a BTreeMap<String, String>,
}

/// What to do.
#[derive(Clone, Debug, PartialEq)]
pub enum PreDownload {
    /// The revision was handled already.
    Done,
    /// Not enough updated pods are ready yet: look again later.
    NotYet,
    /// Label the update revision ignored, for this reason.
    Ignore(&'static str),
    /// Create these jobs, then label the update revision created.
    Create(Vec<ImagePullJob>),
}

/// Why the decision could not be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PreDownloadError {
    /// A setting does not parse.
    #[error("CloneSet {cloneset}: {field}: {source}")]
    Setting {
        /// `namespace/name`.
        cloneset: String,
        /// The field or annotation.
        field: &'static str,
        /// What is wrong.
        #[source]
        source: ScaleError,
    },
}

fn annotation<'a>(cloneset: &'a CloneSet, key: &str) -> Option<&'a str> {
    cloneset
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(key))
        .map(String::as_str)
}

/// The decision for `cloneset` rolling between `revisions`; `can_update_in_place` is whether the update
/// revision can be applied in place (`kruise_inplace`'s check, done by the caller).
///
/// # Errors
/// [`PreDownloadError`] when the partition or the min-updated-ready setting does not parse.
pub fn decide(
    cloneset: &CloneSet,
    revisions: &Revisions<'_>,
    can_update_in_place: bool,
) -> Result<PreDownload, PreDownloadError> {
    if revisions
        .update_labels
        .contains_key(keys::IMAGE_PRE_DOWNLOAD_CREATED_LABEL)
        || revisions
            .update_labels
            .contains_key(keys::IMAGE_PRE_DOWNLOAD_IGNORED_LABEL)
    {
        return Ok(PreDownload::Done);
    }
    let name = format!(
        "{}/{}",
        cloneset.metadata.namespace.as_deref().unwrap_or_default(),
        cloneset.metadata.name.as_deref().unwrap_or_default()
    );
    let error = |field| {
        let name = name.clone();
        move |source| PreDownloadError::Setting {
            cloneset: name,
            field,
            source,
        }
    };
    let replicas = cloneset.spec.replicas.unwrap_or(1);
    let rolling = cloneset
        .spec
        .update_strategy
        .rolling_update
        .clone()
        .unwrap_or_default();
    let strategy = rolling.in_place_update_strategy.clone().unwrap_or_default();
    let min_ready = match (
        strategy.image_pre_download_min_updated_ready_pods,
        annotation(
            cloneset,
            keys::IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION,
        ),
    ) {
        (Some(count), _) => i64::from(count),
        (None, Some(text)) => {
            let value = text
                .parse::<i32>()
                .map_or_else(|_| IntOrString::String(text.to_owned()), IntOrString::Int);
            kruise_scaled(&value, i64::from(replicas), Rounding::Up)
                .map_err(error("imagePreDownloadMinUpdatedReadyPods"))?
        }
        (None, None) => 0,
    };
    let status = cloneset.status.clone().unwrap_or_default();
    let updated_ready = if status.update_revision == revisions.update_name {
        i64::from(status.updated_ready_replicas)
    } else {
        0
    };
    if updated_ready < min_ready {
        return Ok(PreDownload::NotYet);
    }
    let policy = rolling
        .pod_update_policy
        .clone()
        .unwrap_or(CloneSetPodUpdatePolicy::ReCreate);
    if policy == CloneSetPodUpdatePolicy::ReCreate {
        return Ok(PreDownload::Ignore("pods are recreated"));
    }
    if replicas <= MIN_REPLICAS_EXCLUSIVE {
        return Ok(PreDownload::Ignore("replicas <= 3"));
    }
    let partition = partition_replicas(rolling.partition.as_ref(), Some(replicas))
        .map_err(error("partition"))?;
    let max_unavailable = rolling
        .max_unavailable
        .clone()
        .unwrap_or_else(|| IntOrString::String("20%".to_owned()));
    let max_unavailable =
        legacy_scaled(&max_unavailable, i64::from(replicas), Rounding::Down).unwrap_or(0);
    if partition == 0 && max_unavailable >= i64::from(replicas) {
        return Ok(PreDownload::Ignore("every pod updates in one batch"));
    }
    if !can_update_in_place {
        return Ok(PreDownload::Ignore(
            "the revision cannot be updated in place",
        ));
    }
    Ok(PreDownload::Create(jobs(cloneset, revisions, &strategy)))
}

/// The images that changed between the revisions, by container name.
#[must_use]
pub fn changed_images(
    current: &PodTemplateSpec,
    update: &PodTemplateSpec,
) -> BTreeMap<String, String> {
    let containers = |template: &PodTemplateSpec| {
        template
            .spec
            .as_ref()
            .map(|spec| spec.containers.clone())
            .unwrap_or_default()
    };
    let old = containers(current);
    containers(update)
        .into_iter()
        .filter(|container| {
            old.iter()
                .find(|previous| previous.name == container.name)
                .is_none_or(|previous| previous.image != container.image)
        })
        .map(|container| (container.name, container.image.unwrap_or_default()))
        .collect()
}

fn jobs(
    cloneset: &CloneSet,
    revisions: &Revisions<'_>,
    strategy: &kruise_api::inplace::InPlaceUpdateStrategy,
) -> Vec<ImagePullJob> {
    let parallelism = strategy
        .image_pre_download_parallelism
        .clone()
        .unwrap_or_else(|| {
            IntOrString::Int(
                annotation(cloneset, keys::IMAGE_PRE_DOWNLOAD_PARALLELISM_ANNOTATION)
                    .and_then(|text| text.parse().ok())
                    .unwrap_or(1),
            )
        });
    let timeout = strategy
        .image_pre_download_timeout_seconds
        .unwrap_or_else(|| {
            annotation(
                cloneset,
                keys::IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS_ANNOTATION,
            )
            .and_then(|text| text.parse().ok())
            .unwrap_or(DEFAULT_TIMEOUT_SECONDS)
        });
    let template = &cloneset.spec.template;
    let mut labels = template
        .metadata
        .as_ref()
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    labels.insert(HASH_LABEL.to_owned(), revisions.update_hash.to_owned());
    let annotations = template
        .metadata
        .as_ref()
        .and_then(|m| m.annotations.clone())
        .unwrap_or_default();
    let mut selector = cloneset.spec.selector.clone();
    selector
        .match_expressions
        .get_or_insert_with(Vec::new)
        .push(LabelSelectorRequirement {
            key: REVISION_HASH_LABEL.to_owned(),
            operator: "NotIn".to_owned(),
            values: Some(vec![
                revisions.update_name.to_owned(),
                revisions.update_hash.to_owned(),
            ]),
        });
    let pull_secrets: Vec<String> = template
        .spec
        .as_ref()
        .and_then(|spec| spec.image_pull_secrets.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|secret| secret.name)
        .collect();
    let owner = OwnerReference {
        api_version: "apps.kruise.io/v1alpha1".to_owned(),
        kind: "CloneSet".to_owned(),
        name: cloneset.metadata.name.clone().unwrap_or_default(),
        uid: cloneset.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    changed_images(revisions.current, revisions.update)
        .into_iter()
        .map(|(container, image)| ImagePullJob {
            metadata: ObjectMeta {
                name: Some(format!("{}-{container}", revisions.update_name)),
                namespace: cloneset.metadata.namespace.clone(),
                labels: Some(labels.clone()),
                owner_references: Some(vec![owner.clone()]),
                ..ObjectMeta::default()
            },
            spec: ImagePullJobSpec {
                image,
                template: ImagePullJobTemplate {
                    pull_secrets: pull_secrets.clone(),
                    pod_selector: Some(ImagePullJobPodSelector {
                        label_selector: selector.clone(),
                    }),
                    parallelism: Some(parallelism.clone()),
                    pull_policy: Some(PullPolicy {
                        backoff_limit: Some(1),
                        timeout_seconds: Some(timeout),
                    }),
                    completion_policy: CompletionPolicy {
                        type_: Some(CompletionPolicyType::Always),
                        ttl_seconds_after_finished: Some(JOB_TTL_SECONDS),
                        ..CompletionPolicy::default()
                    },
                    sandbox_config: Some(SandboxConfig {
                        labels: labels.clone(),
                        annotations: annotations.clone(),
                    }),
                    ..ImagePullJobTemplate::default()
                },
            },
            status: None,
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::needless_pass_by_value, clippy::type_complexity)] // table helpers take owned JSON values
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn template(app: &str, side: &str) -> Value {
        json!({"metadata": {"labels": {"app": "web"}, "annotations": {"note": "x"}},
            "spec": {"imagePullSecrets": [{"name": "regcred"}],
                "containers": [{"name": "app", "image": app}, {"name": "side", "image": side}]}})
    }

    fn cloneset(replicas: i32, rolling: Value, annotations: Value, status: Value) -> CloneSet {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "namespace": "ns", "uid": "cs-uid", "annotations": annotations},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}},
                "template": template("app:v2", "side:v1"), "updateStrategy": {"rollingUpdate": rolling}},
            "status": status,
        }))
        .unwrap()
    }

    fn in_place() -> Value {
        json!({"podUpdatePolicy": "InPlaceIfPossible"})
    }

    fn run(cs: &CloneSet, labels: &BTreeMap<String, String>, can: bool) -> PreDownload {
        let current: PodTemplateSpec =
            serde_json::from_value(template("app:v1", "side:v1")).unwrap();
        let revisions = Revisions {
            current: &current,
            update: &cs.spec.template,
            update_name: "web-abc",
            update_hash: "abc",
            update_labels: labels,
        };
        decide(cs, &revisions, can).unwrap()
    }

    #[test]
    fn decisions_table() {
        let none = BTreeMap::new();
        let created = BTreeMap::from([(
            keys::IMAGE_PRE_DOWNLOAD_CREATED_LABEL.to_owned(),
            "true".to_owned(),
        )]);
        let ignored = BTreeMap::from([(
            keys::IMAGE_PRE_DOWNLOAD_IGNORED_LABEL.to_owned(),
            "true".to_owned(),
        )]);
        let plain = cloneset(10, in_place(), json!({}), json!({}));
        let cases: Vec<(&str, CloneSet, &BTreeMap<String, String>, bool, &str)> = vec![
            ("created before", plain.clone(), &created, true, "done"),
            ("ignored before", plain.clone(), &ignored, true, "done"),
            (
                "recreate",
                cloneset(10, json!({}), json!({}), json!({})),
                &none,
                true,
                "ignore",
            ),
            (
                "3 replicas",
                cloneset(3, in_place(), json!({}), json!({})),
                &none,
                true,
                "ignore",
            ),
            (
                "4 replicas",
                cloneset(4, in_place(), json!({}), json!({})),
                &none,
                true,
                "create",
            ),
            (
                "one batch",
                cloneset(
                    10,
                    json!({"podUpdatePolicy": "InPlaceIfPossible", "maxUnavailable": "100%"}),
                    json!({}),
                    json!({}),
                ),
                &none,
                true,
                "ignore",
            ),
            (
                "one batch but partitioned",
                cloneset(
                    10,
                    json!({"podUpdatePolicy": "InPlaceIfPossible",
                "maxUnavailable": "100%", "partition": 2}),
                    json!({}),
                    json!({}),
                ),
                &none,
                true,
                "create",
            ),
            ("not in place", plain.clone(), &none, false, "ignore"),
            (
                "min ready not reached",
                cloneset(
                    10,
                    in_place(),
                    json!({keys::IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION: "20%"}),
                    json!({"updateRevision": "web-abc", "updatedReadyReplicas": 1}),
                ),
                &none,
                true,
                "not yet",
            ),
            (
                "min ready reached",
                cloneset(
                    10,
                    in_place(),
                    json!({keys::IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION: "20%"}),
                    json!({"updateRevision": "web-abc", "updatedReadyReplicas": 2}),
                ),
                &none,
                true,
                "create",
            ),
            (
                "ready pods of another revision do not count",
                cloneset(
                    10,
                    in_place(),
                    json!({keys::IMAGE_PRE_DOWNLOAD_MIN_UPDATED_READY_PODS_ANNOTATION: "2"}),
                    json!({"updateRevision": "web-old", "updatedReadyReplicas": 5}),
                ),
                &none,
                true,
                "not yet",
            ),
        ];
        for (what, cs, labels, can, expected) in cases {
            let got = match run(&cs, labels, can) {
                PreDownload::Done => "done",
                PreDownload::NotYet => "not yet",
                PreDownload::Ignore(_) => "ignore",
                PreDownload::Create(_) => "create",
            };
            assert_eq!(got, expected, "{what}");
        }
    }

    #[test]
    fn jobs_cover_the_changed_images_only() {
        let cs = cloneset(
            10,
            in_place(),
            json!({keys::IMAGE_PRE_DOWNLOAD_PARALLELISM_ANNOTATION: "3", keys::IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS_ANNOTATION: "90"}),
            json!({}),
        );
        let PreDownload::Create(jobs) = run(&cs, &BTreeMap::new(), true) else {
            panic!("no jobs");
        };
        assert_eq!(jobs.len(), 1, "side did not change");
        let job = &jobs[0];
        assert_eq!(job.metadata.name.as_deref(), Some("web-abc-app"));
        assert_eq!(job.spec.image, "app:v2");
        let template = &job.spec.template;
        assert_eq!(template.parallelism, Some(IntOrString::Int(3)));
        assert_eq!(
            template.pull_policy.as_ref().unwrap().timeout_seconds,
            Some(90)
        );
        assert_eq!(
            template.pull_policy.as_ref().unwrap().backoff_limit,
            Some(1)
        );
        assert_eq!(template.pull_secrets, ["regcred"]);
        assert_eq!(
            template.completion_policy.ttl_seconds_after_finished,
            Some(600)
        );
        let selector = &template.pod_selector.as_ref().unwrap().label_selector;
        let expression = &selector.match_expressions.as_ref().unwrap()[0];
        assert_eq!(expression.values.as_deref().unwrap(), ["web-abc", "abc"]);
        assert_eq!(job.metadata.labels.as_ref().unwrap()[HASH_LABEL], "abc");
        assert!(
            !job.metadata
                .labels
                .as_ref()
                .unwrap()
                .contains_key(REVISION_HASH_LABEL)
        );
        let owner = &job.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.controller),
            ("CloneSet", Some(true))
        );
        assert_eq!(
            template.sandbox_config.as_ref().unwrap().annotations["note"],
            "x"
        );
    }

    #[test]
    fn spec_fields_win_over_annotations_and_defaults_apply() {
        let cs = cloneset(
            10,
            json!({"podUpdatePolicy": "InPlaceIfPossible", "inPlaceUpdateStrategy": {"imagePreDownloadParallelism": 5}}),
            json!({keys::IMAGE_PRE_DOWNLOAD_PARALLELISM_ANNOTATION: "3"}),
            json!({}),
        );
        let PreDownload::Create(jobs) = run(&cs, &BTreeMap::new(), true) else {
            panic!("no jobs");
        };
        assert_eq!(jobs[0].spec.template.parallelism, Some(IntOrString::Int(5)));
        assert_eq!(
            jobs[0]
                .spec
                .template
                .pull_policy
                .as_ref()
                .unwrap()
                .timeout_seconds,
            Some(DEFAULT_TIMEOUT_SECONDS)
        );
    }
}
