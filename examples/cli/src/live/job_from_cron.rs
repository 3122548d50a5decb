//! The object `kruise create job NAME --from=advancedcronjob/ACJ` creates (pure): what the AdvancedCronJob
//! would create if it fired now, as upstream kubectl-kruise builds it for a Job (`create_job.go`,
//! `createJobFromJobTemplate`) and as this project's AdvancedCronJob controller builds its children
//! (`kruise_schedule::advanced_cron_job`), for every template kind.
//!
//! The template is chosen as the controller chooses it: `jobTemplate`, else `imageListPullJobTemplate`, else
//! `broadcastJobTemplate`. The object gets the template's labels and annotations, the annotation
//! `cronjob.kubernetes.io/instantiate: manual` (kubectl's mark of a hand-made run, written last so a template
//! cannot hide it), the template's spec, and an owner reference to the AdvancedCronJob. Like kubectl's, the
//! reference is not a controller reference: the AdvancedCronJob controller does not count the object as one
//! of its runs (no concurrency policy, no history cleanup), while deleting the AdvancedCronJob still
//! garbage-collects it. It has no `apps.kruise.io/scheduled-at`, since no schedule chose it.

use serde_json::{Map, Value, json};

/// The annotation that marks a run created by hand rather than by the schedule.
pub const INSTANTIATE_ANNOTATION: &str = "cronjob.kubernetes.io/instantiate";

/// Its value.
pub const INSTANTIATE_MANUAL: &str = "manual";

/// The kind of object an AdvancedCronJob's template makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChildKind {
    /// batch/v1 Job, from `jobTemplate`.
    Job,
    /// apps.kruise.io ImageListPullJob, from `imageListPullJobTemplate`.
    ImageListPullJob,
    /// apps.kruise.io BroadcastJob, from `broadcastJobTemplate`.
    BroadcastJob,
}

impl ChildKind {
    /// The template field of the AdvancedCronJob, in the controller's order of precedence.
    const BY_PRECEDENCE: [(Self, &'static str); 3] = [
        (Self::Job, "jobTemplate"),
        (Self::ImageListPullJob, "imageListPullJobTemplate"),
        (Self::BroadcastJob, "broadcastJobTemplate"),
    ];

    /// The kind's name in the API.
    #[must_use]
    pub fn kind(self) -> &'static str {
        match self {
            Self::Job => "Job",
            Self::ImageListPullJob => "ImageListPullJob",
            Self::BroadcastJob => "BroadcastJob",
        }
    }

    /// The resource's plural.
    #[must_use]
    pub fn plural(self) -> &'static str {
        match self {
            Self::Job => "jobs",
            Self::ImageListPullJob => "imagelistpulljobs",
            Self::BroadcastJob => "broadcastjobs",
        }
    }

    /// `kind.group`, as kubectl prints the object it created (`job.batch`, `broadcastjob.apps.kruise.io`).
    #[must_use]
    pub fn resource_name(self) -> String {
        let group = match self {
            Self::Job => "batch",
            Self::ImageListPullJob | Self::BroadcastJob => super::target::GROUP,
        };
        format!("{}.{group}", self.kind().to_ascii_lowercase())
    }
}

/// Whether `name` can name the object: a DNS-1123 subdomain (lower-case letters, digits, `-` and `.`,
/// starting and ending with a letter or digit, at most 253 characters).
fn is_object_name(name: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    name.len() <= 253
        && edge(name.chars().next())
        && edge(name.chars().last())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
}

/// The object to create: its kind and the object (`apiVersion` left to the caller when the kind is a Kruise
/// kind, whose version depends on what the cluster serves; batch/v1 for a Job).
///
/// # Errors
/// `name` is not a valid object name, or the AdvancedCronJob has no template.
pub fn child_from_cron_job(name: &str, acj: &Value) -> Result<(ChildKind, Value), String> {
    let acj_name = acj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !is_object_name(name) {
        return Err(format!(
            "{name:?} is not a valid name for the new object (lower-case letters, digits, '-' and '.', \
             starting and ending with a letter or digit)"
        ));
    }
    let (kind, template) = ChildKind::BY_PRECEDENCE
        .iter()
        .find_map(|(kind, field)| {
            acj.pointer(&format!("/spec/template/{field}"))
                .filter(|template| template.is_object())
                .map(|template| (*kind, template))
        })
        .ok_or_else(|| {
            format!(
                "advancedcronjob {acj_name} has no spec.template.jobTemplate, imageListPullJobTemplate or \
                 broadcastJobTemplate"
            )
        })?;
    let text = |pointer: &str| acj.pointer(pointer).cloned().unwrap_or(Value::Null);
    let mut annotations = template
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    annotations.insert(
        INSTANTIATE_ANNOTATION.to_owned(),
        Value::String(INSTANTIATE_MANUAL.to_owned()),
    );
    let mut metadata = Map::new();
    metadata.insert("name".to_owned(), Value::String(name.to_owned()));
    if let Some(namespace) = acj.pointer("/metadata/namespace") {
        metadata.insert("namespace".to_owned(), namespace.clone());
    }
    if let Some(labels) = template
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .filter(|labels| !labels.is_empty())
    {
        metadata.insert("labels".to_owned(), Value::Object(labels.clone()));
    }
    metadata.insert("annotations".to_owned(), Value::Object(annotations));
    metadata.insert(
        "ownerReferences".to_owned(),
        json!([{
            "apiVersion": text("/apiVersion"),
            "kind": "AdvancedCronJob",
            "name": acj_name,
            "uid": text("/metadata/uid"),
        }]),
    );
    let mut object = Map::new();
    if kind == ChildKind::Job {
        object.insert(
            "apiVersion".to_owned(),
            Value::String("batch/v1".to_owned()),
        );
    }
    object.insert("kind".to_owned(), Value::String(kind.kind().to_owned()));
    object.insert("metadata".to_owned(), Value::Object(metadata));
    object.insert(
        "spec".to_owned(),
        template.get("spec").cloned().unwrap_or_else(|| json!({})),
    );
    Ok((kind, Value::Object(object)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acj(template: &Value) -> Value {
        json!({
            "apiVersion": "apps.kruise.io/v1beta1",
            "kind": "AdvancedCronJob",
            "metadata": {"name": "nightly", "namespace": "team", "uid": "u-1", "resourceVersion": "9",
                         "labels": {"of": "the-acj"}},
            "spec": {"schedule": "0 2 * * *", "template": template}
        })
    }

    fn job_template() -> Value {
        json!({"jobTemplate": {
            "metadata": {"labels": {"app": "report"}, "annotations": {"team": "data"}},
            "spec": {"backoffLimit": 2, "template": {"spec": {"restartPolicy": "Never",
                     "containers": [{"name": "main", "image": "busybox"}]}}}
        }})
    }

    #[test]
    fn a_job_template_makes_a_job_owned_by_the_advanced_cron_job() {
        let (kind, job) = child_from_cron_job("manual-1", &acj(&job_template())).unwrap();
        assert_eq!(kind, ChildKind::Job);
        assert_eq!(
            job,
            json!({
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {
                    "name": "manual-1",
                    "namespace": "team",
                    "labels": {"app": "report"},
                    "annotations": {"team": "data", "cronjob.kubernetes.io/instantiate": "manual"},
                    "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "AdvancedCronJob",
                                         "name": "nightly", "uid": "u-1"}]
                },
                "spec": {"backoffLimit": 2, "template": {"spec": {"restartPolicy": "Never",
                         "containers": [{"name": "main", "image": "busybox"}]}}}
            })
        );
        assert_eq!(kind.resource_name(), "job.batch");
    }

    #[test]
    fn the_template_kind_follows_the_controllers_precedence() {
        let broadcast = json!({"broadcastJobTemplate": {
            "metadata": {"annotations": {"cronjob.kubernetes.io/instantiate": "scheduled"}},
            "spec": {"parallelism": 1}
        }});
        let (kind, object) = child_from_cron_job("bj", &acj(&broadcast)).unwrap();
        assert_eq!(kind, ChildKind::BroadcastJob);
        assert_eq!(object["kind"], "BroadcastJob");
        assert_eq!(
            object.get("apiVersion"),
            None,
            "the caller picks the served version"
        );
        assert_eq!(object["spec"], json!({"parallelism": 1}));
        assert_eq!(object["metadata"].get("labels"), None);
        assert_eq!(
            object["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"], "manual",
            "the mark cannot be hidden by the template"
        );
        assert_eq!(kind.resource_name(), "broadcastjob.apps.kruise.io");

        let mut both = job_template();
        both["broadcastJobTemplate"] = broadcast["broadcastJobTemplate"].clone();
        both["imageListPullJobTemplate"] = json!({"spec": {"images": ["nginx"]}});
        assert_eq!(
            child_from_cron_job("x", &acj(&both)).unwrap().0,
            ChildKind::Job
        );
        both.as_object_mut().unwrap().remove("jobTemplate");
        let (kind, object) = child_from_cron_job("x", &acj(&both)).unwrap();
        assert_eq!(kind, ChildKind::ImageListPullJob);
        assert_eq!(object["spec"]["images"][0], "nginx");
    }

    #[test]
    fn bad_names_and_missing_templates_are_refused() {
        let error = child_from_cron_job("x", &acj(&json!({}))).unwrap_err();
        assert!(error.contains("advancedcronjob nightly has no"), "{error}");
        for bad in ["", "Manual", "-x", "x-", "a_b", &"a".repeat(254)] {
            let error = child_from_cron_job(bad, &acj(&job_template())).unwrap_err();
            assert!(error.contains("not a valid name"), "{bad}: {error}");
        }
        assert!(child_from_cron_job("a.b-1", &acj(&job_template())).is_ok());
    }
}
