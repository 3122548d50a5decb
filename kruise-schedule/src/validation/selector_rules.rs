//! The selector rules every workload shares (upstream's `validateCloneSetSpec`, `validateSpecSelector`,
//! `validateDaemonSetSpec`): the selector is valid and not empty, it matches the template's labels, and
//! (UPDATE) it never changes.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kruise_api::label_selector;

use super::FieldError;

/// `spec.selector` of a workload whose pods carry `template_labels`; `kind` names the workload in the
/// message (`empty selector is invalid for cloneset`).
pub(crate) fn selector_errors(
    selector: &LabelSelector,
    template_labels: Option<&BTreeMap<String, String>>,
    kind: &str,
) -> Vec<FieldError> {
    let value = || serde_json::to_value(selector).unwrap_or_default();
    if let Err(error) = label_selector::validate(selector) {
        return vec![FieldError::invalid(
            "spec.selector",
            value(),
            error.to_string(),
        )];
    }
    if label_selector::is_empty(selector) {
        return vec![FieldError::invalid(
            "spec.selector",
            value(),
            format!("empty selector is invalid for {kind}"),
        )];
    }
    let empty = BTreeMap::new();
    let labels = template_labels.unwrap_or(&empty);
    if label_selector::matches(selector, labels).unwrap_or(false) {
        return Vec::new();
    }
    vec![FieldError::invalid(
        "spec.template.metadata.labels",
        serde_json::to_value(labels).unwrap_or_default(),
        "`selector` does not match template `labels`",
    )]
}

/// `spec.selector` of an UPDATE: it may not change.
pub(crate) fn selector_change_errors(
    selector: &LabelSelector,
    old: &LabelSelector,
) -> Option<FieldError> {
    let normal = |selector: &LabelSelector| {
        (
            selector.match_labels.clone().unwrap_or_default(),
            selector.match_expressions.clone().unwrap_or_default(),
        )
    };
    (normal(selector) != normal(old)).then(|| {
        FieldError::immutable(
            "spec.selector",
            serde_json::to_value(selector).unwrap_or_default(),
        )
    })
}
