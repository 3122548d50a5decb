//! The BroadcastJob rules (upstream `pkg/webhook/broadcastjob/validating/broadcastjob_create_update_handler.go`),
//! on the v1alpha1 form upstream validates, after the defaults:
//!
//! * `metadata.name` is letters, digits and `-`, at most 63 characters;
//! * `spec.completionPolicy.type` is `Always` or `Never`; `Never` takes neither `ttlSecondsAfterFinished`
//!   nor `activeDeadlineSeconds`; `spec.failurePolicy.type` is known;
//! * `spec.parallelism` is a non-negative integer or a percentage;
//! * the template has named containers with images and `restartPolicy` `Never` or `OnFailure`, and does not
//!   preset the `broadcastjob-name` or `broadcastjob-controller-uid` labels.
//!
//! Upstream validates an UPDATE like a CREATE and has no immutable field; so does this.
//! Added to upstream's rules: the known completion and failure policy types and the parallelism form,
//! which upstream's controller would otherwise misread.

use kruise_api::apps::v1alpha1::{BroadcastJob, CompletionPolicyType, FailurePolicyType};
use kruise_api::keys::broadcastjob::{CONTROLLER_UID_LABEL, JOB_NAME_LABEL};

use super::FieldError;
use super::number_rules::int_or_percent_errors;
use super::object_name_rules::job_name_errors;
use super::pod_template_rules::pod_template_errors;

/// Every rule `job` breaks (CREATE and UPDATE alike). The object is defaulted.
#[must_use]
pub fn validate(job: &BroadcastJob) -> Vec<FieldError> {
    let spec = &job.spec;
    let mut errors = job_name_errors(job.metadata.name.as_deref(), "BroadcastJob");
    let completion = &spec.completion_policy;
    match &completion.type_ {
        None | Some(CompletionPolicyType::Always) => {}
        Some(CompletionPolicyType::Never) => {
            if let Some(ttl) = completion.ttl_seconds_after_finished {
                errors.push(FieldError::invalid(
                    "spec.completionPolicy.ttlSecondsAfterFinished",
                    ttl,
                    "ttlSecondsAfterFinished can just work with Always CompletionPolicyType",
                ));
            }
            if let Some(deadline) = completion.active_deadline_seconds {
                errors.push(FieldError::invalid(
                    "spec.completionPolicy.activeDeadlineSeconds",
                    deadline,
                    "activeDeadlineSeconds can just work with Always CompletionPolicyType",
                ));
            }
        }
        Some(other) => errors.push(FieldError::not_supported(
            "spec.completionPolicy.type",
            other.as_str(),
            CompletionPolicyType::KNOWN_VALUES,
        )),
    }
    if let Some(kind) = spec
        .failure_policy
        .type_
        .as_ref()
        .filter(|kind| !kind.is_known())
    {
        errors.push(FieldError::not_supported(
            "spec.failurePolicy.type",
            kind.as_str(),
            FailurePolicyType::KNOWN_VALUES,
        ));
    }
    if let Some(parallelism) = &spec.parallelism {
        errors.extend(int_or_percent_errors(parallelism, "spec.parallelism"));
    }
    let restart_policy = spec
        .template
        .spec
        .as_ref()
        .and_then(|pod| pod.restart_policy.as_deref())
        .unwrap_or_default();
    if restart_policy != "Never" && restart_policy != "OnFailure" {
        errors.push(FieldError::invalid(
            "spec.template.spec.restartPolicy",
            restart_policy,
            "pod restartPolicy can only be Never or OnFailure",
        ));
    }
    let labels = spec
        .template
        .metadata
        .as_ref()
        .and_then(|meta| meta.labels.as_ref());
    if let Some(labels) = labels.filter(|labels| {
        [JOB_NAME_LABEL, CONTROLLER_UID_LABEL]
            .iter()
            .any(|key| labels.get(*key).is_some_and(|value| !value.is_empty()))
    }) {
        errors.push(FieldError::invalid(
            "spec.template.metadata.labels",
            serde_json::to_value(labels).unwrap_or_default(),
            format!("\"{JOB_NAME_LABEL}\" and \"{CONTROLLER_UID_LABEL}\" are not allowed to preset in pod labels"),
        ));
    }
    errors.extend(pod_template_errors(&spec.template, "spec.template"));
    errors
}
