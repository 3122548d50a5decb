//! The CloneSet rules (upstream `pkg/webhook/cloneset/validating/validation.go`: `validateCloneSetSpec`,
//! `validateUpdateStrategy`, `validateCloneSetUpdate`), on the v1alpha1 form upstream validates, after
//! the defaults:
//!
//! * `spec.replicas` is not negative; `spec.selector` is valid, not empty and matches the template labels;
//!   the template has named containers with images, `restartPolicy: Always` and no `activeDeadlineSeconds`;
//! * `spec.scaleStrategy.podsToDelete` has no duplicates;
//! * `spec.updateStrategy.type` is a known type; `partition`, `maxUnavailable` and `maxSurge` are integers or
//!   percentages as the controller reads them, `partition` is not negative; `maxSurge` is 0 with
//!   `InPlaceOnly`; `maxUnavailable` and `maxSurge` are not both below 1 (with replicas); the priority and
//!   scatter strategies are valid;
//! * UPDATE: `spec.selector` does not change, and with `InPlaceOnly` only container images change in the
//!   template.
//!
//! Deviation: upstream also looks the pods of `podsToDelete` up (they must exist and belong to the
//! CloneSet); that needs the cluster, and the controller already ignores names that are not its pods.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1alpha1::{CloneSet, CloneSetUpdateStrategy, CloneSetUpdateStrategyType};
use kruise_api::scatter;

use super::FieldError;
use super::number_rules::{int_or_string_value, nonnegative_error};
use super::pod_template_rules::{
    ALWAYS, active_deadline_error, pod_template_errors, restart_policy_error,
};
use super::selector_rules::{selector_change_errors, selector_errors};
use crate::int_or_percent::{Rounding, kruise_scaled, legacy_scaled};

/// Every rule `cloneset` breaks; `old` is the stored object of an UPDATE. Both are defaulted.
#[must_use]
pub fn validate(cloneset: &CloneSet, old: Option<&CloneSet>) -> Vec<FieldError> {
    let spec = &cloneset.spec;
    let replicas = spec.replicas.unwrap_or(1);
    let mut errors: Vec<FieldError> = nonnegative_error(i64::from(replicas), "spec.replicas")
        .into_iter()
        .collect();
    errors.extend(selector_errors(
        &spec.selector,
        spec.template
            .metadata
            .as_ref()
            .and_then(|meta| meta.labels.as_ref()),
        "cloneset",
    ));
    errors.extend(pod_template_errors(&spec.template, "spec.template"));
    errors.extend(restart_policy_error(
        &spec.template,
        "spec.template",
        &[ALWAYS],
    ));
    errors.extend(active_deadline_error(&spec.template, "cloneset"));
    errors.extend(pods_to_delete_errors(&spec.scale_strategy.pods_to_delete));
    errors.extend(update_strategy_errors(&spec.update_strategy, replicas));
    if let Some(old) = old {
        errors.extend(selector_change_errors(&spec.selector, &old.spec.selector));
        errors.extend(in_place_only_template_error(cloneset, old));
    }
    errors
}

fn pods_to_delete_errors(names: &[String]) -> Option<FieldError> {
    let mut seen = std::collections::BTreeSet::new();
    let duplicated: Vec<&str> = names
        .iter()
        .filter(|name| !seen.insert(name.as_str()))
        .map(String::as_str)
        .collect();
    (!duplicated.is_empty()).then(|| {
        FieldError::invalid(
            "spec.scaleStrategy.podsToDelete",
            names.to_vec(),
            format!("duplicated items {duplicated:?}"),
        )
    })
}

fn update_strategy_errors(strategy: &CloneSetUpdateStrategy, replicas: i32) -> Vec<FieldError> {
    const PATH: &str = "spec.updateStrategy";
    let mut errors = Vec::new();
    let in_place_only = strategy.type_ == Some(CloneSetUpdateStrategyType::InPlaceOnly);
    if let Some(kind) = strategy.type_.as_ref().filter(|kind| !kind.is_known()) {
        errors.push(FieldError::not_supported(
            format!("{PATH}.type"),
            kind.as_str(),
            CloneSetUpdateStrategyType::KNOWN_VALUES,
        ));
    }
    let total = i64::from(replicas);
    if let Some(partition) = &strategy.partition {
        let path = format!("{PATH}.partition");
        match kruise_scaled(partition, total, Rounding::Up) {
            Ok(value) => errors.extend(nonnegative_error(value, &path)),
            Err(error) => errors.push(scale_error(&path, partition, &error)),
        }
    }
    let mut scaled = |value: Option<&IntOrString>, name: &str| match value {
        None => 0,
        Some(value) => legacy_scaled(value, total, Rounding::Up).unwrap_or_else(|error| {
            errors.push(scale_error(&format!("{PATH}.{name}"), value, &error));
            0
        }),
    };
    let max_unavailable = scaled(strategy.max_unavailable.as_ref(), "maxUnavailable");
    let max_surge = scaled(strategy.max_surge.as_ref(), "maxSurge");
    if in_place_only && max_surge > 0 {
        errors.push(FieldError::invalid(
            format!("{PATH}.maxSurge"),
            strategy.max_surge.as_ref().map(int_or_string_value),
            "can not use maxSurge with strategy type InPlaceOnly",
        ));
    }
    if replicas > 0 && max_unavailable < 1 && max_surge < 1 {
        errors.push(FieldError::invalid(
            format!("{PATH}.maxUnavailable"),
            strategy.max_unavailable.as_ref().map(int_or_string_value),
            "maxUnavailable and maxSurge should not both be less than 1",
        ));
    }
    if let Some(Err(error)) = strategy
        .priority_strategy
        .as_ref()
        .map(kruise_api::update_priority::UpdatePriorityStrategy::validate)
    {
        errors.push(FieldError::invalid(
            format!("{PATH}.priorityStrategy"),
            serde_json::to_value(&strategy.priority_strategy).unwrap_or_default(),
            error.to_string(),
        ));
    }
    if let Err(error) = scatter::validate(&strategy.scatter_strategy) {
        errors.push(FieldError::invalid(
            format!("{PATH}.scatterStrategy"),
            serde_json::to_value(&strategy.scatter_strategy).unwrap_or_default(),
            error.to_string(),
        ));
    }
    errors
}

fn scale_error(
    path: &str,
    value: &IntOrString,
    error: &crate::int_or_percent::ScaleError,
) -> FieldError {
    let crate::int_or_percent::ScaleError::Invalid { reason, .. } = error;
    FieldError::invalid(path, int_or_string_value(value), *reason)
}

/// With `InPlaceOnly`, an UPDATE may change nothing in the template but container images (upstream's
/// `ValidateCloneSetUpdate` of `pkg/controller/cloneset/core`).
fn in_place_only_template_error(cloneset: &CloneSet, old: &CloneSet) -> Option<FieldError> {
    if cloneset.spec.update_strategy.type_ != Some(CloneSetUpdateStrategyType::InPlaceOnly) {
        return None;
    }
    let template = &cloneset.spec.template;
    let old_template = &old.spec.template;
    (without_images(template) != without_images(old_template)).then(|| {
        FieldError::forbidden(
            "spec.template",
            "only container images may change in the template when spec.updateStrategy.type is InPlaceOnly",
        )
    })
}

/// The template with every container image blanked, so two templates compare equal when only images
/// differ.
fn without_images(template: &PodTemplateSpec) -> PodTemplateSpec {
    let mut template = template.clone();
    if let Some(spec) = template.spec.as_mut() {
        for container in &mut spec.containers {
            container.image = None;
        }
    }
    template
}
