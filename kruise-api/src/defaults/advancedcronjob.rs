//! AdvancedCronJob defaults (upstream's AdvancedCronJob defaulting webhook): the pod templates of the Job and
//! BroadcastJob templates, `concurrencyPolicy` `Allow` (v1beta1: `Replace` when there is an ImageListPullJob
//! template), `paused: false`, history limits 3 (successful) and 1 (failed), and in v1beta1 the ImageListPullJob
//! template's pull defaults.
//!
//! As upstream, the BroadcastJob template only gets its pod template defaulted (not the BroadcastJob
//! defaults), and the ImageListPullJob template's `pullPolicy` and `imagePullPolicy` are only defaulted
//! when its `completionPolicy.type` was unset.

use k8s_openapi::api::batch::v1::JobTemplateSpec;

use super::ApplyDefaults;
use super::cloneset::apply_template_defaults;
use crate::apps::{v1alpha1, v1beta1};

/// Successful jobs kept when `successfulJobsHistoryLimit` is unset.
const DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT: i32 = 3;
/// Failed jobs kept when `failedJobsHistoryLimit` is unset.
const DEFAULT_FAILED_JOBS_HISTORY_LIMIT: i32 = 1;

fn apply_job_template_defaults(job: &mut JobTemplateSpec) {
    let spec = job.spec.get_or_insert_with(Default::default);
    apply_template_defaults(&mut spec.template, &mut []);
}

impl ApplyDefaults for v1alpha1::AdvancedCronJob {
    fn apply_defaults(&mut self) {
        let spec = &mut self.spec;
        if let Some(job) = spec.template.job_template.as_mut() {
            apply_job_template_defaults(job);
        }
        if let Some(broadcast) = spec.template.broadcast_job_template.as_mut() {
            apply_template_defaults(&mut broadcast.spec.template, &mut []);
        }
        spec.concurrency_policy
            .get_or_insert(v1alpha1::ConcurrencyPolicy::Allow);
        spec.paused.get_or_insert(false);
        spec.successful_jobs_history_limit
            .get_or_insert(DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT);
        spec.failed_jobs_history_limit
            .get_or_insert(DEFAULT_FAILED_JOBS_HISTORY_LIMIT);
    }
}

impl ApplyDefaults for v1beta1::AdvancedCronJob {
    fn apply_defaults(&mut self) {
        use v1beta1::{CompletionPolicyType, ConcurrencyPolicy, ImagePullPolicy};
        let spec = &mut self.spec;
        if let Some(job) = spec.template.job_template.as_mut() {
            apply_job_template_defaults(job);
        }
        if let Some(broadcast) = spec.template.broadcast_job_template.as_mut() {
            apply_template_defaults(&mut broadcast.spec.template, &mut []);
        }
        let has_image_list_template = spec.template.image_list_pull_job_template.is_some();
        if let Some(image_list) = spec.template.image_list_pull_job_template.as_mut() {
            let template = &mut image_list.spec.template;
            if template.completion_policy.type_.is_none() {
                template.completion_policy.type_ = Some(CompletionPolicyType::Always);
                super::imagepulljob::apply_pull_policy_defaults(&mut template.pull_policy);
                template
                    .image_pull_policy
                    .get_or_insert(ImagePullPolicy::IfNotPresent);
            }
        }
        spec.concurrency_policy
            .get_or_insert(if has_image_list_template {
                // Running pulls of the same images side by side does nothing useful.
                ConcurrencyPolicy::Replace
            } else {
                ConcurrencyPolicy::Allow
            });
        spec.paused.get_or_insert(false);
        spec.successful_jobs_history_limit
            .get_or_insert(DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT);
        spec.failed_jobs_history_limit
            .get_or_insert(DEFAULT_FAILED_JOBS_HISTORY_LIMIT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BROADCAST: &str = "
apiVersion: apps.kruise.io/v1alpha1
kind: AdvancedCronJob
metadata: {name: acj-test}
spec:
  schedule: '*/1 * * * *'
  template:
    broadcastJobTemplate:
      spec:
        completionPolicy: {ttlSecondsAfterFinished: 30}
        template:
          spec:
            restartPolicy: Never
            containers: [{name: counter, image: busybox}]
";

    #[test]
    fn v1alpha1_defaults() {
        let mut acj: v1alpha1::AdvancedCronJob = serde_saphyr::from_str(BROADCAST).unwrap();
        acj.apply_defaults();
        let spec = &acj.spec;
        assert_eq!(
            spec.concurrency_policy,
            Some(v1alpha1::ConcurrencyPolicy::Allow)
        );
        assert_eq!(spec.paused, Some(false));
        assert_eq!(spec.successful_jobs_history_limit, Some(3));
        assert_eq!(spec.failed_jobs_history_limit, Some(1));
        let broadcast = &spec.template.broadcast_job_template.as_ref().unwrap().spec;
        let pod = broadcast.template.spec.as_ref().unwrap();
        assert_eq!(
            pod.restart_policy.as_deref(),
            Some("Never"),
            "set values stay"
        );
        assert_eq!(pod.scheduler_name.as_deref(), Some("default-scheduler"));
        assert_eq!(
            broadcast.completion_policy.type_, None,
            "the BroadcastJob defaults are left to the BroadcastJob webhook"
        );
        assert_eq!(broadcast.parallelism, None);
        let before = acj.clone();
        acj.apply_defaults();
        assert_eq!(acj, before, "idempotent");
    }

    #[test]
    fn job_template_pod_is_defaulted_and_set_fields_are_kept() {
        let mut acj: v1alpha1::AdvancedCronJob = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1alpha1
kind: AdvancedCronJob
metadata: {name: hello}
spec:
  schedule: '@hourly'
  concurrencyPolicy: Forbid
  paused: true
  successfulJobsHistoryLimit: 0
  failedJobsHistoryLimit: 5
  template:
    jobTemplate:
      spec:
        template:
          spec:
            restartPolicy: OnFailure
            containers: [{name: hello, image: 'busybox:1.36'}]
",
        )
        .unwrap();
        acj.apply_defaults();
        let spec = &acj.spec;
        assert_eq!(
            spec.concurrency_policy,
            Some(v1alpha1::ConcurrencyPolicy::Forbid)
        );
        assert_eq!(spec.paused, Some(true));
        assert_eq!(spec.successful_jobs_history_limit, Some(0));
        assert_eq!(spec.failed_jobs_history_limit, Some(5));
        let job = spec.template.job_template.as_ref().unwrap();
        let pod = job.spec.as_ref().unwrap().template.spec.as_ref().unwrap();
        assert_eq!(pod.restart_policy.as_deref(), Some("OnFailure"));
        assert_eq!(
            pod.containers[0].image_pull_policy.as_deref(),
            Some("Always"),
            "Kruise's template default"
        );
        assert_eq!(pod.termination_grace_period_seconds, Some(30));
    }

    #[test]
    fn v1beta1_image_list_pull_job_template_defaults() {
        let mut acj: v1beta1::AdvancedCronJob = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1beta1
kind: AdvancedCronJob
metadata: {name: nightly-prefetch}
spec:
  schedule: '0 2 * * *'
  template:
    imageListPullJobTemplate:
      spec:
        images: ['nginx:1.25']
        completionPolicy: {}
",
        )
        .unwrap();
        acj.apply_defaults();
        assert_eq!(
            acj.spec.concurrency_policy,
            Some(v1beta1::ConcurrencyPolicy::Replace)
        );
        let template = &acj
            .spec
            .template
            .image_list_pull_job_template
            .as_ref()
            .unwrap()
            .spec
            .template;
        assert_eq!(
            template.completion_policy.type_,
            Some(v1beta1::CompletionPolicyType::Always)
        );
        let pull = template.pull_policy.as_ref().unwrap();
        assert_eq!(
            (pull.timeout_seconds, pull.backoff_limit),
            (Some(600), Some(3))
        );
        assert_eq!(
            template.image_pull_policy,
            Some(v1beta1::ImagePullPolicy::IfNotPresent)
        );
        let before = acj.clone();
        acj.apply_defaults();
        assert_eq!(acj, before, "idempotent");
    }

    #[test]
    fn v1beta1_image_list_pull_job_template_with_a_completion_type_is_left_alone() {
        let mut acj: v1beta1::AdvancedCronJob = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1beta1
kind: AdvancedCronJob
metadata: {name: nightly-prefetch}
spec:
  schedule: '0 2 * * *'
  concurrencyPolicy: Allow
  template:
    imageListPullJobTemplate:
      spec:
        images: ['nginx:1.25']
        completionPolicy: {type: Always}
",
        )
        .unwrap();
        acj.apply_defaults();
        assert_eq!(
            acj.spec.concurrency_policy,
            Some(v1beta1::ConcurrencyPolicy::Allow)
        );
        let template = &acj
            .spec
            .template
            .image_list_pull_job_template
            .as_ref()
            .unwrap()
            .spec
            .template;
        assert_eq!(
            template.pull_policy, None,
            "upstream nests these under the type default"
        );
        assert_eq!(template.image_pull_policy, None);
    }

    #[test]
    fn v1beta1_defaults_agree_with_converted_v1alpha1_defaults() {
        let alpha: v1alpha1::AdvancedCronJob = serde_saphyr::from_str(BROADCAST).unwrap();
        let mut defaulted_then_converted = alpha.clone();
        defaulted_then_converted.apply_defaults();
        let defaulted_then_converted = v1beta1::AdvancedCronJob::from(defaulted_then_converted);
        let mut converted_then_defaulted = v1beta1::AdvancedCronJob::from(&alpha);
        converted_then_defaulted.apply_defaults();
        assert_eq!(converted_then_defaulted, defaulted_then_converted);
    }
}
