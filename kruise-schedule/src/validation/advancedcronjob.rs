//! The AdvancedCronJob rules (upstream `pkg/webhook/advancedcronjob/validating/advancedcronjob_create_update_handler.go`),
//! on the v1alpha1 form upstream validates, after the defaults:
//!
//! * `metadata.name` is letters, digits and `-`, at most 63 characters;
//! * `spec.schedule` is not empty and parses as the controller reads it ([`crate::cron::Schedule::parse`]);
//!   it has no `TZ=` / `CRON_TZ=` prefix when `spec.timeZone` is set;
//! * `spec.timeZone`, when set, is a non-empty IANA name other than `Local`;
//! * exactly one of `spec.template.jobTemplate` and `spec.template.broadcastJobTemplate`, whose pod template
//!   has named containers with images;
//! * `spec.startingDeadlineSeconds`, `spec.successfulJobsHistoryLimit` and `spec.failedJobsHistoryLimit` are
//!   not negative; `spec.concurrencyPolicy` is `Allow`, `Forbid` or `Replace`;
//! * UPDATE: only `schedule`, `timeZone`, `concurrencyPolicy`, `paused`, `startingDeadlineSeconds` and the
//!   history limits may change: `spec.template` is immutable.
//!
//! A v1beta1 object ([`validate_v1beta1`]) is checked in its v1alpha1 form with the same rules, and its
//! `spec.template.imageListPullJobTemplate` (v1beta1 only, which the conversion drops) counts as the third
//! kind of template: exactly one of the three, a list of at least one image, immutable like the others.

use kruise_api::apps::v1alpha1::{AdvancedCronJob, AdvancedCronJobSpec, ConcurrencyPolicy};
use kruise_api::apps::v1beta1;

use super::FieldError;
use super::number_rules::nonnegative_error;
use super::object_name_rules::job_name_errors;
use super::pod_template_rules::pod_template_errors;
use crate::cron::{Schedule, Zone};

/// The v1beta1-only ImageListPullJob templates of a new and a stored object.
#[derive(Clone, Copy, Default)]
struct ImageListTemplates<'a> {
    new: Option<&'a v1beta1::ImageListPullJobTemplateSpec>,
    old: Option<&'a v1beta1::ImageListPullJobTemplateSpec>,
}

/// Every rule `cronjob` breaks; `old` is the stored object of an UPDATE. Both are defaulted.
#[must_use]
pub fn validate(cronjob: &AdvancedCronJob, old: Option<&AdvancedCronJob>) -> Vec<FieldError> {
    validate_with(cronjob, old, ImageListTemplates::default())
}

/// Every rule a v1beta1 `cronjob` breaks (see the module docs); `old` is the stored object of an UPDATE.
/// Both are defaulted.
#[must_use]
pub fn validate_v1beta1(
    cronjob: &v1beta1::AdvancedCronJob,
    old: Option<&v1beta1::AdvancedCronJob>,
) -> Vec<FieldError> {
    let image_lists = ImageListTemplates {
        new: cronjob.spec.template.image_list_pull_job_template.as_ref(),
        old: old.and_then(|old| old.spec.template.image_list_pull_job_template.as_ref()),
    };
    let old = old.map(AdvancedCronJob::from);
    validate_with(&AdvancedCronJob::from(cronjob), old.as_ref(), image_lists)
}

fn validate_with(
    cronjob: &AdvancedCronJob,
    old: Option<&AdvancedCronJob>,
    image_lists: ImageListTemplates<'_>,
) -> Vec<FieldError> {
    let spec = &cronjob.spec;
    let mut errors = job_name_errors(cronjob.metadata.name.as_deref(), "AdvancedCronJob");
    errors.extend(schedule_errors(spec));
    errors.extend(time_zone_errors(spec.time_zone.as_deref()));
    errors.extend(template_errors(spec, image_lists.new));
    let limits = [
        (
            spec.starting_deadline_seconds,
            "spec.startingDeadlineSeconds",
        ),
        (
            spec.successful_jobs_history_limit.map(i64::from),
            "spec.successfulJobsHistoryLimit",
        ),
        (
            spec.failed_jobs_history_limit.map(i64::from),
            "spec.failedJobsHistoryLimit",
        ),
    ];
    for (value, path) in limits {
        errors.extend(value.and_then(|value| nonnegative_error(value, path)));
    }
    if let Some(policy) = spec
        .concurrency_policy
        .as_ref()
        .filter(|policy| !policy.is_known())
    {
        errors.push(FieldError::not_supported(
            "spec.concurrencyPolicy",
            policy.as_str(),
            ConcurrencyPolicy::KNOWN_VALUES,
        ));
    }
    if let Some(old) = old
        && (spec.template != old.spec.template || image_lists.new != image_lists.old)
    {
        errors.push(FieldError::forbidden(
            "spec.template",
            "updates to advancedcronjob spec for fields other than 'schedule', 'concurrencyPolicy', \
             'successfulJobsHistoryLimit', 'failedJobsHistoryLimit', 'startingDeadlineSeconds', 'timeZone' \
             and 'paused' are forbidden",
        ));
    }
    errors
}

fn schedule_errors(spec: &AdvancedCronJobSpec) -> Vec<FieldError> {
    let schedule = spec.schedule.as_str();
    let mut errors = Vec::new();
    if schedule.is_empty() {
        errors.push(FieldError::invalid(
            "spec.schedule",
            schedule,
            "schedule cannot be empty, please provide valid cron schedule.",
        ));
        return errors;
    }
    if let Err(error) = Schedule::parse(schedule) {
        errors.push(FieldError::invalid(
            "spec.schedule",
            schedule,
            error.to_string(),
        ));
    }
    if schedule.contains("TZ") && spec.time_zone.is_some() {
        errors.push(FieldError::invalid(
            "spec.schedule",
            schedule,
            "cannot use both timeZone field and TZ or CRON_TZ in schedule",
        ));
    }
    errors
}

fn time_zone_errors(time_zone: Option<&str>) -> Option<FieldError> {
    let zone = time_zone?;
    const PATH: &str = "spec.timeZone";
    if zone.is_empty() {
        return Some(FieldError::invalid(
            PATH,
            zone,
            "timeZone must be nil or non-empty string",
        ));
    }
    if zone.eq_ignore_ascii_case("Local") {
        return Some(FieldError::invalid(
            PATH,
            zone,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    }
    Zone::load(zone, Zone::UTC)
        .err()
        .map(|error| FieldError::invalid(PATH, zone, error.to_string()))
}

fn template_errors(
    spec: &AdvancedCronJobSpec,
    image_list: Option<&v1beta1::ImageListPullJobTemplateSpec>,
) -> Vec<FieldError> {
    let template = &spec.template;
    let job = template
        .job_template
        .as_ref()
        .and_then(|job| job.spec.as_ref());
    let broadcast = template.broadcast_job_template.as_ref();
    let mut errors = Vec::new();
    let templates = [
        template.job_template.is_some(),
        broadcast.is_some(),
        image_list.is_some(),
    ];
    match templates.iter().filter(|given| **given).count() {
        0 => errors.push(FieldError::forbidden(
            "spec.template",
            "spec must have one template, either JobTemplate or BroadcastJobTemplate should be provided",
        )),
        1 => {}
        _ if image_list.is_none() => errors.push(FieldError::forbidden(
            "spec.template",
            "spec can have only one template, either JobTemplate or BroadcastJobTemplate should be provided",
        )),
        _ => errors.push(FieldError::forbidden(
            "spec.template",
            "spec can have only one template, either JobTemplate, BroadcastJobTemplate or \
             ImageListPullJobTemplate should be provided",
        )),
    }
    if image_list.is_some_and(|list| list.spec.images.is_empty()) {
        errors.push(FieldError::required(
            "spec.template.imageListPullJobTemplate.spec.images",
            "at least one image is required",
        ));
    }
    if let Some(job) = job {
        errors.extend(pod_template_errors(
            &job.template,
            "spec.template.jobTemplate.spec.template",
        ));
    }
    if let Some(broadcast) = broadcast {
        errors.extend(pod_template_errors(
            &broadcast.spec.template,
            "spec.template.broadcastJobTemplate.spec.template",
        ));
    }
    errors
}
