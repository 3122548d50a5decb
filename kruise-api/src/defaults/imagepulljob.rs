//! ImagePullJob and ImageListPullJob defaults (upstream `SetDefaultsImagePullJob`,
//! `SetDefaultsImageListPullJob`): `completionPolicy.type: Always`, `pullPolicy`
//! with `timeoutSeconds: 600` and `backoffLimit: 3`, and for ImagePullJobs `imagePullPolicy:
//! IfNotPresent` (upstream does not default an ImageListPullJob's `imagePullPolicy`; the ImagePullJobs it
//! creates get it).
//!
//! Upstream's webhook also adds the [`DELETION_PROTECTION_FINALIZER`] to an ImagePullJob it creates. That is
//! not a fill-in of an unset field, so it is left out of [`ApplyDefaults`]: call [`add_deletion_protection`]
//! where the webhook would.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::ApplyDefaults;
use crate::apps::v1beta1::{
    CompletionPolicyType, ImagePullJobTemplate, ImagePullPolicy, PullPolicy,
};
use crate::apps::{v1alpha1, v1beta1};
use crate::keys::image_pull::DELETION_PROTECTION_FINALIZER;

/// Seconds one pull attempt may take when `timeoutSeconds` is unset.
const DEFAULT_TIMEOUT_SECONDS: i32 = 600;
/// Attempts per pull when `backoffLimit` is unset.
const DEFAULT_BACKOFF_LIMIT: i32 = 3;

/// Creates the pull policy if needed and fills its timeout and retries.
pub(super) fn apply_pull_policy_defaults(pull_policy: &mut Option<PullPolicy>) {
    let pull_policy = pull_policy.get_or_insert_with(PullPolicy::default);
    pull_policy
        .timeout_seconds
        .get_or_insert(DEFAULT_TIMEOUT_SECONDS);
    pull_policy
        .backoff_limit
        .get_or_insert(DEFAULT_BACKOFF_LIMIT);
}

fn apply_image_list_template_defaults(template: &mut ImagePullJobTemplate) {
    template
        .completion_policy
        .type_
        .get_or_insert(CompletionPolicyType::Always);
    apply_pull_policy_defaults(&mut template.pull_policy);
}

fn apply_image_template_defaults(template: &mut ImagePullJobTemplate) {
    apply_image_list_template_defaults(template);
    template
        .image_pull_policy
        .get_or_insert(ImagePullPolicy::IfNotPresent);
}

impl ApplyDefaults for v1alpha1::ImagePullJob {
    fn apply_defaults(&mut self) {
        apply_image_template_defaults(&mut self.spec.template);
    }
}

impl ApplyDefaults for v1beta1::ImagePullJob {
    fn apply_defaults(&mut self) {
        apply_image_template_defaults(&mut self.spec.template);
    }
}

impl ApplyDefaults for v1alpha1::ImageListPullJob {
    fn apply_defaults(&mut self) {
        apply_image_list_template_defaults(&mut self.spec.template);
    }
}

impl ApplyDefaults for v1beta1::ImageListPullJob {
    fn apply_defaults(&mut self) {
        apply_image_list_template_defaults(&mut self.spec.template);
    }
}

/// Adds the `apps.kruise.io/deletion-protection` finalizer to an ImagePullJob's metadata unless it is
/// already there, as upstream's webhook does when the job is created (the controller removes it once the
/// job's pull secrets and NodeImage entries are cleaned up). Returns whether it was added.
///
/// ```
/// use kruise_api::apps::v1alpha1::ImagePullJob;
/// use kruise_api::defaults::add_deletion_protection;
///
/// let mut job = ImagePullJob::default();
/// assert!(add_deletion_protection(&mut job.metadata));
/// assert!(!add_deletion_protection(&mut job.metadata));
/// assert_eq!(job.metadata.finalizers.unwrap(), ["apps.kruise.io/deletion-protection"]);
/// ```
pub fn add_deletion_protection(metadata: &mut ObjectMeta) -> bool {
    let finalizers = metadata.finalizers.get_or_insert_with(Vec::new);
    if finalizers
        .iter()
        .any(|finalizer| finalizer == DELETION_PROTECTION_FINALIZER)
    {
        return false;
    }
    finalizers.push(DELETION_PROTECTION_FINALIZER.to_owned());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    const JOB: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: ImagePullJob
metadata: {name: job-with-always}
spec:
  image: nginx:1.9.1
  completionPolicy: {}
";

    #[test]
    fn image_pull_job_defaults() {
        let mut job: v1alpha1::ImagePullJob = serde_saphyr::from_str(JOB).unwrap();
        job.apply_defaults();
        let template = &job.spec.template;
        assert_eq!(
            template.completion_policy.type_,
            Some(v1alpha1::CompletionPolicyType::Always)
        );
        let pull = template.pull_policy.as_ref().unwrap();
        assert_eq!(
            (pull.timeout_seconds, pull.backoff_limit),
            (Some(600), Some(3))
        );
        assert_eq!(
            template.image_pull_policy,
            Some(v1alpha1::ImagePullPolicy::IfNotPresent)
        );
        assert_eq!(
            template.parallelism, None,
            "the controller treats unset as 1"
        );
        assert_eq!(
            job.metadata.finalizers, None,
            "no finalizer from defaulting"
        );
        let before = job.clone();
        job.apply_defaults();
        assert_eq!(job, before, "idempotent");
    }

    #[test]
    fn set_fields_are_kept() {
        let mut job: v1beta1::ImagePullJob = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1beta1
kind: ImagePullJob
metadata: {name: job-with-never}
spec:
  image: nginx:1.9.1
  completionPolicy: {type: Never}
  pullPolicy: {timeoutSeconds: 300}
  imagePullPolicy: Always
",
        )
        .unwrap();
        job.apply_defaults();
        let template = &job.spec.template;
        assert_eq!(
            template.completion_policy.type_,
            Some(v1beta1::CompletionPolicyType::Never)
        );
        let pull = template.pull_policy.as_ref().unwrap();
        assert_eq!(
            (pull.timeout_seconds, pull.backoff_limit),
            (Some(300), Some(3))
        );
        assert_eq!(
            template.image_pull_policy,
            Some(v1beta1::ImagePullPolicy::Always)
        );
    }

    #[test]
    fn image_list_pull_job_defaults() {
        let mut job: v1alpha1::ImageListPullJob = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1alpha1
kind: ImageListPullJob
metadata: {name: job-with-always}
spec:
  images: ['nginx:1.9.1', 'busybox:1.29.2']
  completionPolicy: {}
",
        )
        .unwrap();
        job.apply_defaults();
        let template = &job.spec.template;
        assert_eq!(
            template.completion_policy.type_,
            Some(v1alpha1::CompletionPolicyType::Always)
        );
        let pull = template.pull_policy.as_ref().unwrap();
        assert_eq!(
            (pull.timeout_seconds, pull.backoff_limit),
            (Some(600), Some(3))
        );
        assert_eq!(template.image_pull_policy, None, "not defaulted upstream");
        let before = job.clone();
        job.apply_defaults();
        assert_eq!(job, before, "idempotent");

        let mut beta = v1beta1::ImageListPullJob::from(
            serde_saphyr::from_str::<v1alpha1::ImageListPullJob>(
                "{apiVersion: apps.kruise.io/v1alpha1, kind: ImageListPullJob, metadata: {name: j}, spec: {images: [a], completionPolicy: {}}}",
            )
            .unwrap(),
        );
        beta.apply_defaults();
        assert_eq!(beta.spec.template, job.spec.template, "both versions agree");
    }

    #[test]
    fn deletion_protection_keeps_other_finalizers() {
        let mut meta = ObjectMeta {
            finalizers: Some(vec!["example.com/keep".to_owned()]),
            ..ObjectMeta::default()
        };
        assert!(add_deletion_protection(&mut meta));
        assert_eq!(
            meta.finalizers.as_deref().unwrap(),
            ["example.com/keep", DELETION_PROTECTION_FINALIZER]
        );
        assert!(!add_deletion_protection(&mut meta));
        assert_eq!(meta.finalizers.unwrap().len(), 2);
    }
}
