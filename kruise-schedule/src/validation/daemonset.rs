//! The Advanced DaemonSet rules (upstream `pkg/webhook/daemonset/validating/daemonset_validation.go`), on
//! the v1alpha1 form upstream validates, after the defaults:
//!
//! * `spec.selector` is valid, not empty and matches the template labels; the template has named
//!   containers with images, `restartPolicy: Always` and no `activeDeadlineSeconds`;
//! * `spec.minReadySeconds` and `spec.revisionHistoryLimit` are not negative; `spec.lifecycle.inPlaceUpdate`
//!   is not supported;
//! * `spec.updateStrategy.type` is `RollingUpdate` (with `rollingUpdate`) or `OnDelete`; a non-zero
//!   `maxUnavailable` or `maxSurge` is an integer or a percentage of at most 100%, exactly one of them is
//!   non-zero, `rollingUpdateType` is `Standard`, `InPlaceIfPossible` (no surge) or `Surging` (no
//!   unavailability), and `partition` is a non-negative integer or a percentage;
//! * UPDATE: `spec.selector` does not change.
//!
//! Upstream reports a negative partition at `...rollingUpdate.rollingUpdate.partition` (the child path is
//! added twice); here it is `spec.updateStrategy.rollingUpdate.partition`.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1alpha1::{
    DaemonSet, DaemonSetRollingUpdateType, DaemonSetUpdateStrategyType, RollingUpdateDaemonSet,
};

use super::FieldError;
use super::number_rules::{
    at_most_100_percent_error, int_or_percent_errors, int_or_string_value, nonnegative_error,
    percent_of,
};
use super::pod_template_rules::{
    ALWAYS, active_deadline_error, pod_template_errors, restart_policy_error,
};
use super::selector_rules::{selector_change_errors, selector_errors};

/// Every rule `daemonset` breaks; `old` is the stored object of an UPDATE. Both are defaulted.
#[must_use]
pub fn validate(daemonset: &DaemonSet, old: Option<&DaemonSet>) -> Vec<FieldError> {
    let spec = &daemonset.spec;
    let mut errors = selector_errors(
        &spec.selector,
        spec.template
            .metadata
            .as_ref()
            .and_then(|meta| meta.labels.as_ref()),
        "daemonset",
    );
    errors.extend(pod_template_errors(&spec.template, "spec.template"));
    errors.extend(restart_policy_error(
        &spec.template,
        "spec.template",
        &[ALWAYS],
    ));
    errors.extend(active_deadline_error(&spec.template, "DaemonSet"));
    errors.extend(nonnegative_error(
        i64::from(spec.min_ready_seconds),
        "spec.minReadySeconds",
    ));
    if let Some(limit) = spec.revision_history_limit {
        errors.extend(nonnegative_error(
            i64::from(limit),
            "spec.revisionHistoryLimit",
        ));
    }
    if spec
        .lifecycle
        .as_ref()
        .is_some_and(|hooks| hooks.in_place_update.is_some())
    {
        errors.push(FieldError::forbidden(
            "spec.lifecycle.inPlaceUpdate",
            "inPlaceUpdate hook has not supported yet",
        ));
    }
    let strategy = &spec.update_strategy;
    match &strategy.type_ {
        Some(DaemonSetUpdateStrategyType::OnDelete) => {}
        Some(DaemonSetUpdateStrategyType::RollingUpdate) => match &strategy.rolling_update {
            None => errors.push(FieldError::required(
                "spec.updateStrategy.rollingUpdate",
                "",
            )),
            Some(rolling) => errors.extend(rolling_update_errors(rolling)),
        },
        other => errors.push(FieldError::not_supported(
            "spec.updateStrategy.type",
            other
                .as_ref()
                .map_or("", DaemonSetUpdateStrategyType::as_str),
            DaemonSetUpdateStrategyType::KNOWN_VALUES,
        )),
    }
    if let Some(old) = old {
        errors.extend(selector_change_errors(&spec.selector, &old.spec.selector));
    }
    errors
}

/// Whether a budget is set to something other than zero (`0` or `"0%"`).
fn is_non_zero(value: Option<&IntOrString>) -> bool {
    match value {
        None => false,
        Some(IntOrString::Int(number)) => *number != 0,
        Some(IntOrString::String(text)) => percent_of(text) != Some(0),
    }
}

fn rolling_update_errors(rolling: &RollingUpdateDaemonSet) -> Vec<FieldError> {
    const PATH: &str = "spec.updateStrategy.rollingUpdate";
    let mut errors = Vec::new();
    let has_unavailable = is_non_zero(rolling.max_unavailable.as_ref());
    let has_surge = is_non_zero(rolling.max_surge.as_ref());
    for (value, name, set) in [
        (&rolling.max_unavailable, "maxUnavailable", has_unavailable),
        (&rolling.max_surge, "maxSurge", has_surge),
    ] {
        if let (Some(value), true) = (value, set) {
            let path = format!("{PATH}.{name}");
            errors.extend(int_or_percent_errors(value, &path));
            errors.extend(at_most_100_percent_error(value, &path));
        }
    }
    match (has_unavailable, has_surge) {
        (true, true) => errors.push(FieldError::invalid(
            format!("{PATH}.maxSurge"),
            rolling.max_surge.as_ref().map(int_or_string_value),
            "may not be set when maxUnavailable is non-zero",
        )),
        (false, false) => errors.push(FieldError::required(
            format!("{PATH}.maxUnavailable"),
            "cannot be 0 when maxSurge is 0",
        )),
        _ => {}
    }
    match &rolling.type_ {
        None | Some(DaemonSetRollingUpdateType::Standard) => {}
        Some(DaemonSetRollingUpdateType::InPlaceIfPossible) => {
            if has_surge {
                errors.push(FieldError::required(
                    format!("{PATH}.maxSurge"),
                    "must be 0 for InPlaceIfPossible type",
                ));
            }
        }
        Some(DaemonSetRollingUpdateType::Surging) => {
            if has_unavailable {
                errors.push(FieldError::required(
                    format!("{PATH}.maxUnavailable"),
                    "must be 0 for Surging type",
                ));
            }
        }
        Some(other) => errors.push(FieldError::not_supported(
            format!("{PATH}.rollingUpdateType"),
            other.as_str(),
            DaemonSetRollingUpdateType::KNOWN_VALUES,
        )),
    }
    if let Some(partition) = &rolling.partition {
        errors.extend(int_or_percent_errors(
            partition,
            &format!("{PATH}.partition"),
        ));
    }
    errors
}
