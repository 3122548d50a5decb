//! AdvancedCronJob v1alpha1 ⇄ v1beta1 (upstream `apis/apps/v1alpha1/advancedcronjob_conversion.go`).
//!
//! * Every v1alpha1 field maps to the v1beta1 field of the same name; the BroadcastJob template's spec
//!   goes through the BroadcastJob mapping (also field by field). The status is the same type in both
//!   versions (its `type` may say `ImageListPullJob` in either).
//! * `template.imageListPullJobTemplate` exists only in v1beta1: converting up never sets it, and
//!   converting down **drops** it, since v1alpha1 has nowhere to keep it. Upstream refuses that conversion
//!   instead (an error); a `From` conversion cannot fail, so a v1beta1 object that creates ImageListPullJobs
//!   reads in v1alpha1 as one with no usable template (or, when it also has one, with the template that
//!   v1beta1 ranks below it).

use super::broadcastjob::{spec_from_hub, spec_to_hub};
use super::{HubConversion, hub_conversion};
use crate::apps::{v1alpha1, v1beta1};

impl HubConversion for v1alpha1::AdvancedCronJob {
    type Hub = v1beta1::AdvancedCronJob;

    fn to_hub_fields(&self) -> v1beta1::AdvancedCronJob {
        let spec = &self.spec;
        v1beta1::AdvancedCronJob {
            metadata: self.metadata.clone(),
            spec: v1beta1::AdvancedCronJobSpec {
                schedule: spec.schedule.clone(),
                time_zone: spec.time_zone.clone(),
                starting_deadline_seconds: spec.starting_deadline_seconds,
                concurrency_policy: spec.concurrency_policy.clone(),
                paused: spec.paused,
                successful_jobs_history_limit: spec.successful_jobs_history_limit,
                failed_jobs_history_limit: spec.failed_jobs_history_limit,
                template: v1beta1::CronJobTemplate {
                    job_template: spec.template.job_template.clone(),
                    broadcast_job_template: spec.template.broadcast_job_template.as_ref().map(
                        |template| v1beta1::BroadcastJobTemplateSpec {
                            metadata: template.metadata.clone(),
                            spec: spec_to_hub(&template.spec),
                        },
                    ),
                    image_list_pull_job_template: None,
                },
            },
            status: self.status.clone(),
        }
    }

    fn from_hub_fields(hub: &v1beta1::AdvancedCronJob) -> Self {
        let spec = &hub.spec;
        v1alpha1::AdvancedCronJob {
            metadata: hub.metadata.clone(),
            spec: v1alpha1::AdvancedCronJobSpec {
                schedule: spec.schedule.clone(),
                time_zone: spec.time_zone.clone(),
                starting_deadline_seconds: spec.starting_deadline_seconds,
                concurrency_policy: spec.concurrency_policy.clone(),
                paused: spec.paused,
                successful_jobs_history_limit: spec.successful_jobs_history_limit,
                failed_jobs_history_limit: spec.failed_jobs_history_limit,
                template: v1alpha1::CronJobTemplate {
                    job_template: spec.template.job_template.clone(),
                    broadcast_job_template: spec.template.broadcast_job_template.as_ref().map(
                        |template| v1alpha1::BroadcastJobTemplateSpec {
                            metadata: template.metadata.clone(),
                            spec: spec_from_hub(&template.spec),
                        },
                    ),
                },
            },
            status: hub.status.clone(),
        }
    }
}

hub_conversion!(v1alpha1::AdvancedCronJob => v1beta1::AdvancedCronJob);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::STASH_ANNOTATION;

    fn no_stash(beta: &v1beta1::AdvancedCronJob) {
        let stashed = beta
            .metadata
            .annotations
            .as_ref()
            .is_some_and(|a| a.contains_key(STASH_ANNOTATION));
        assert!(!stashed, "{:?}", beta.metadata.annotations);
    }

    #[test]
    fn broadcast_job_template_and_schedule_fields_map_to_themselves() {
        let alpha: v1alpha1::AdvancedCronJob = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1alpha1
kind: AdvancedCronJob
metadata: {name: acj-test, namespace: default}
spec:
  schedule: '*/1 * * * *'
  timeZone: Asia/Shanghai
  startingDeadlineSeconds: 60
  concurrencyPolicy: Forbid
  paused: false
  successfulJobsHistoryLimit: 5
  failedJobsHistoryLimit: 2
  template:
    broadcastJobTemplate:
      metadata: {labels: {job: cleanup}}
      spec:
        parallelism: 2
        completionPolicy: {type: Always, ttlSecondsAfterFinished: 30}
        failurePolicy: {type: FailFast}
        template:
          spec:
            restartPolicy: Never
            containers: [{name: counter, image: busybox}]
status:
  type: BroadcastJob
  active: [{kind: BroadcastJob, namespace: default, name: acj-test-1646305200}]
  lastScheduleTime: '2022-03-03T11:00:00Z'
",
        )
        .unwrap();
        let beta = v1beta1::AdvancedCronJob::from(&alpha);
        no_stash(&beta);
        assert_eq!(beta.spec.time_zone.as_deref(), Some("Asia/Shanghai"));
        assert_eq!(
            beta.spec.concurrency_policy,
            Some(v1beta1::ConcurrencyPolicy::Forbid)
        );
        assert_eq!(beta.spec.paused, Some(false));
        let template = beta.spec.template.broadcast_job_template.as_ref().unwrap();
        assert_eq!(
            template.spec.completion_policy.ttl_seconds_after_finished,
            Some(30)
        );
        assert_eq!(
            template.metadata.as_ref().unwrap().labels.as_ref().unwrap()["job"],
            "cleanup"
        );
        assert_eq!(beta.spec.template.image_list_pull_job_template, None);
        assert_eq!(v1alpha1::AdvancedCronJob::from(&beta), alpha);
    }

    #[test]
    fn job_template_maps_to_itself() {
        let alpha: v1alpha1::AdvancedCronJob = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1alpha1
kind: AdvancedCronJob
metadata: {name: hello}
spec:
  schedule: '@hourly'
  template:
    jobTemplate:
      spec:
        backoffLimit: 2
        template:
          spec:
            restartPolicy: OnFailure
            containers: [{name: hello, image: busybox}]
",
        )
        .unwrap();
        let beta = v1beta1::AdvancedCronJob::from(&alpha);
        no_stash(&beta);
        let job = beta.spec.template.job_template.as_ref().unwrap();
        assert_eq!(job.spec.as_ref().unwrap().backoff_limit, Some(2));
        assert_eq!(v1alpha1::AdvancedCronJob::from(&beta), alpha);
    }

    /// `template.imageListPullJobTemplate` is v1beta1-only; v1alpha1 cannot hold it.
    #[test]
    fn image_list_pull_job_template_is_dropped_in_v1alpha1() {
        let beta: v1beta1::AdvancedCronJob = serde_saphyr::from_str(
            "
apiVersion: apps.kruise.io/v1beta1
kind: AdvancedCronJob
metadata: {name: nightly-prefetch}
spec:
  schedule: '0 2 * * *'
  concurrencyPolicy: Replace
  template:
    imageListPullJobTemplate:
      metadata: {labels: {app: image-prefetch}}
      spec:
        images: ['nginx:1.25', 'redis:7.0']
        parallelism: 5
        completionPolicy: {type: Always}
status:
  type: ImageListPullJob
",
        )
        .unwrap();
        let alpha = v1alpha1::AdvancedCronJob::from(&beta);
        assert_eq!(alpha.spec.template, v1alpha1::CronJobTemplate::default());
        assert_eq!(alpha.spec.schedule, "0 2 * * *");
        assert_eq!(
            alpha.spec.concurrency_policy,
            Some(v1alpha1::ConcurrencyPolicy::Replace)
        );
        assert_eq!(
            alpha.status.as_ref().unwrap().type_,
            Some(v1alpha1::TemplateKind::ImageListPullJob),
            "the status is shared and keeps the kind"
        );
        let json = serde_json::to_value(&alpha).unwrap();
        assert_eq!(json["spec"]["template"], serde_json::json!({}));

        let back = v1beta1::AdvancedCronJob::from(&alpha);
        assert_eq!(back.spec.template.image_list_pull_job_template, None);
        let mut without = beta.clone();
        without.spec.template.image_list_pull_job_template = None;
        assert_eq!(back, without, "only the template is lost");
    }
}
