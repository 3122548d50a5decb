//! The ImagePullJob rules (upstream `pkg/webhook/imagepulljob/validating/imagepulljob_create_update_handler.go`),
//! on the v1alpha1 form upstream validates (the JSON of both versions is the same), after the defaults:
//!
//! * `spec.image` is set and a valid image reference;
//! * `spec.selector` has node names or labels, not both; its labels are a valid selector and its names have
//!   no duplicates; `spec.podSelector` is valid and excludes `spec.selector`;
//! * `spec.completionPolicy.type` is `Always` or `Never`; with `Always`, `activeDeadlineSeconds` is not less
//!   than `spec.pullPolicy.timeoutSeconds` (600 when unset); with `Never`, neither `activeDeadlineSeconds` nor
//!   `ttlSecondsAfterFinished` is set;
//! * `spec.parallelism` is a non-negative integer or a percentage.
//!
//! Upstream validates an UPDATE like a CREATE and has no immutable field; so does this. Upstream stops at
//! the first problem; this lists them all. The parallelism form is added to upstream's rules.

use kruise_api::apps::v1alpha1::{CompletionPolicyType, ImagePullJob};
use kruise_api::image::Reference;
use kruise_api::label_selector;

use super::FieldError;
use super::number_rules::int_or_percent_errors;

/// Upstream's default pull timeout, in seconds.
const DEFAULT_TIMEOUT_SECONDS: i32 = 600;

/// Every rule `job` breaks (CREATE and UPDATE alike). The object is defaulted.
#[must_use]
pub fn validate(job: &ImagePullJob) -> Vec<FieldError> {
    let spec = &job.spec;
    let template = &spec.template;
    let mut errors = Vec::new();
    if let Some(selector) = &template.selector {
        let labels = &selector.label_selector;
        let has_labels = labels.match_labels.is_some() || labels.match_expressions.is_some();
        if has_labels && !selector.names.is_empty() {
            errors.push(FieldError::invalid(
                "spec.selector",
                serde_json::to_value(selector).unwrap_or_default(),
                "can not set both names and labelSelector in this spec.selector",
            ));
        }
        if let Err(error) = label_selector::validate(labels) {
            errors.push(FieldError::invalid(
                "spec.selector",
                serde_json::to_value(selector).unwrap_or_default(),
                format!("invalid selector: {error}"),
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for (index, name) in selector.names.iter().enumerate() {
            if !seen.insert(name.as_str()) {
                errors.push(FieldError::duplicate(
                    format!("spec.selector.names[{index}]"),
                    name.as_str(),
                ));
            }
        }
    }
    if let Some(pods) = &template.pod_selector {
        if template.selector.is_some() {
            errors.push(FieldError::forbidden(
                "spec.podSelector",
                "can not set both selector and podSelector",
            ));
        }
        if let Err(error) = label_selector::validate(&pods.label_selector) {
            errors.push(FieldError::invalid(
                "spec.podSelector",
                serde_json::to_value(pods).unwrap_or_default(),
                format!("invalid podSelector: {error}"),
            ));
        }
    }
    if spec.image.is_empty() {
        errors.push(FieldError::required("spec.image", "image can not be empty"));
    } else if Reference::parse(&spec.image).is_none() {
        errors.push(FieldError::invalid(
            "spec.image",
            spec.image.as_str(),
            "not a valid image reference",
        ));
    }
    let timeout = template
        .pull_policy
        .as_ref()
        .and_then(|policy| policy.timeout_seconds)
        .unwrap_or(DEFAULT_TIMEOUT_SECONDS);
    let completion = &template.completion_policy;
    match &completion.type_ {
        Some(CompletionPolicyType::Always) => {
            if let Some(deadline) = completion
                .active_deadline_seconds
                .filter(|d| *d < i64::from(timeout))
            {
                errors.push(FieldError::invalid(
                    "spec.completionPolicy.activeDeadlineSeconds",
                    deadline,
                    format!("must be greater than pullPolicy.timeoutSeconds ({timeout})"),
                ));
            }
        }
        Some(CompletionPolicyType::Never) => {
            if completion.active_deadline_seconds.is_some()
                || completion.ttl_seconds_after_finished.is_some()
            {
                errors.push(FieldError::forbidden(
                    "spec.completionPolicy",
                    "activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType",
                ));
            }
        }
        other => errors.push(FieldError::not_supported(
            "spec.completionPolicy.type",
            other.as_ref().map_or("", CompletionPolicyType::as_str),
            CompletionPolicyType::KNOWN_VALUES,
        )),
    }
    if let Some(parallelism) = &template.parallelism {
        errors.extend(int_or_percent_errors(parallelism, "spec.parallelism"));
    }
    errors
}
