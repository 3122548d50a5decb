//! The Advanced StatefulSet rules (upstream `pkg/webhook/statefulset/validating/statefulset_validation.go`),
//! on the v1beta1 form upstream validates (v1alpha1 objects reach it converted), after the defaults:
//!
//! * `spec.podManagementPolicy` is `OrderedReady` or `Parallel`; `spec.replicas` is not negative;
//!   `spec.reserveOrdinals` are non-negative integers or `"a-b"` ranges;
//! * `spec.selector` is valid, not empty and matches the template labels; the template has named containers
//!   with images, `restartPolicy: Always` and no `activeDeadlineSeconds`;
//! * `spec.updateStrategy.type` is `RollingUpdate` or `OnDelete` (`rollingUpdate` only with the former); with
//!   `RollingUpdate`: `partition` is not negative, `minReadySeconds` is within 0..=300, `maxUnavailable` is set,
//!   an integer or percentage of at least 1, and anything but `1` needs `Parallel`; `podUpdatePolicy` is
//!   known, and `InPlaceIfPossible` / `InPlaceOnly` need the `InPlaceUpdateReady` readiness gate in the
//!   template (the controller does not inject it); `unorderedUpdate` needs `Parallel` and a valid priority
//!   strategy;
//! * `spec.scaleStrategy.maxUnavailable` follows the `maxUnavailable` rules;
//!   `spec.persistentVolumeClaimRetentionPolicy` is `Retain` or `Delete`;
//! * UPDATE: only `replicas`, `ordinals`, `template`, `updateStrategy`, `scaleStrategy`,
//!   `persistentVolumeClaimRetentionPolicy`, `volumeClaimTemplates`, `volumeClaimUpdateStrategy`,
//!   `reserveOrdinals`, `lifecycle` and `revisionHistoryLimit` may change: `selector`, `serviceName` and
//!   `podManagementPolicy` are immutable.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1beta1::{
    PersistentVolumeClaimRetentionPolicyType, PodManagementPolicy,
    RollingUpdateStatefulSetStrategy, StatefulSet, StatefulSetPodUpdatePolicy, StatefulSetSpec,
    StatefulSetUpdateStrategyType,
};
use kruise_api::keys::inplace::INPLACE_UPDATE_READY;

use super::FieldError;
use super::number_rules::{int_or_percent_errors, int_or_string_value, nonnegative_error};
use super::pod_template_rules::{
    ALWAYS, active_deadline_error, has_readiness_gate, pod_template_errors, restart_policy_error,
};
use super::selector_rules::{selector_change_errors, selector_errors};
use crate::int_or_percent::{Rounding, legacy_scaled};
use crate::statefulset::ordinals::ReservedOrdinals;

/// Upstream's `MaxMinReadySeconds`.
const MAX_MIN_READY_SECONDS: i32 = 300;

/// Every rule `statefulset` breaks; `old` is the stored object of an UPDATE. Both are defaulted.
#[must_use]
pub fn validate(statefulset: &StatefulSet, old: Option<&StatefulSet>) -> Vec<FieldError> {
    let spec = &statefulset.spec;
    let mut errors = Vec::new();
    match &spec.pod_management_policy {
        None => errors.push(FieldError::required("spec.podManagementPolicy", "")),
        Some(policy) if !policy.is_known() => errors.push(FieldError::not_supported(
            "spec.podManagementPolicy",
            policy.as_str(),
            PodManagementPolicy::KNOWN_VALUES,
        )),
        Some(_) => {}
    }
    errors.extend(reserve_ordinal_errors(&spec.reserve_ordinals));
    if let Some(max_unavailable) = spec
        .scale_strategy
        .as_ref()
        .and_then(|s| s.max_unavailable.as_ref())
    {
        errors.extend(max_unavailable_errors(
            max_unavailable,
            spec,
            "spec.scaleStrategy.maxUnavailable",
        ));
    }
    errors.extend(update_strategy_errors(spec));
    errors.extend(retention_policy_errors(spec));
    errors.extend(nonnegative_error(
        i64::from(spec.replicas.unwrap_or(1)),
        "spec.replicas",
    ));
    errors.extend(selector_errors(
        &spec.selector,
        spec.template
            .metadata
            .as_ref()
            .and_then(|meta| meta.labels.as_ref()),
        "statefulset",
    ));
    errors.extend(pod_template_errors(&spec.template, "spec.template"));
    errors.extend(restart_policy_error(
        &spec.template,
        "spec.template",
        &[ALWAYS],
    ));
    errors.extend(active_deadline_error(&spec.template, "StatefulSet"));
    if let Some(old) = old {
        errors.extend(immutable_field_errors(spec, &old.spec));
    }
    errors
}

fn reserve_ordinal_errors(values: &[IntOrString]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (index, value) in values.iter().enumerate() {
        let path = format!("spec.reserveOrdinals[{index}]");
        match value {
            IntOrString::Int(ordinal) => {
                errors.extend(nonnegative_error(i64::from(*ordinal), &path));
            }
            IntOrString::String(_) => {
                if let Err(error) = ReservedOrdinals::parse(std::slice::from_ref(value)) {
                    errors.push(FieldError::invalid(
                        path,
                        int_or_string_value(value),
                        error.reason,
                    ));
                }
            }
        }
    }
    errors
}

fn update_strategy_errors(spec: &StatefulSetSpec) -> Vec<FieldError> {
    let strategy = &spec.update_strategy;
    match &strategy.type_ {
        None => vec![FieldError::required("spec.updateStrategy", "")],
        Some(StatefulSetUpdateStrategyType::OnDelete) => strategy
            .rolling_update
            .as_ref()
            .map(|rolling| {
                FieldError::invalid(
                    "spec.updateStrategy.rollingUpdate",
                    serde_json::to_value(rolling).unwrap_or_default(),
                    "only allowed for updateStrategy 'RollingUpdate'",
                )
            })
            .into_iter()
            .collect(),
        Some(StatefulSetUpdateStrategyType::RollingUpdate) => strategy
            .rolling_update
            .as_ref()
            .map(|rolling| rolling_update_errors(rolling, spec))
            .unwrap_or_default(),
        Some(other) => vec![FieldError::not_supported(
            "spec.updateStrategy.type",
            other.as_str(),
            StatefulSetUpdateStrategyType::KNOWN_VALUES,
        )],
    }
}

fn rolling_update_errors(
    rolling: &RollingUpdateStatefulSetStrategy,
    spec: &StatefulSetSpec,
) -> Vec<FieldError> {
    const PATH: &str = "spec.updateStrategy.rollingUpdate";
    let mut errors = Vec::new();
    errors.extend(nonnegative_error(
        i64::from(rolling.partition.unwrap_or_default()),
        &format!("{PATH}.partition"),
    ));
    let min_ready = rolling.min_ready_seconds.unwrap_or_default();
    errors.extend(nonnegative_error(
        i64::from(min_ready),
        &format!("{PATH}.minReadySeconds"),
    ));
    if min_ready > MAX_MIN_READY_SECONDS {
        errors.push(FieldError::invalid(
            format!("{PATH}.minReadySeconds"),
            min_ready,
            "must be no more than 300 seconds",
        ));
    }
    match &rolling.max_unavailable {
        None => errors.push(FieldError::required(format!("{PATH}.maxUnavailable"), "")),
        Some(value) => {
            errors.extend(max_unavailable_errors(
                value,
                spec,
                &format!("{PATH}.maxUnavailable"),
            ));
        }
    }
    errors.extend(pod_update_policy_errors(rolling, spec));
    if let Some(unordered) = &rolling.unordered_update {
        if spec.pod_management_policy != Some(PodManagementPolicy::Parallel) {
            errors.push(FieldError::required(
                format!("{PATH}.unorderedUpdate"),
                "unorderedUpdate can only work with Parallel PodManagementPolicyType",
            ));
        }
        if let Some(Err(error)) = unordered
            .priority_strategy
            .as_ref()
            .map(kruise_api::update_priority::UpdatePriorityStrategy::validate)
        {
            errors.push(FieldError::invalid(
                format!("{PATH}.unorderedUpdate.priorityStrategy"),
                serde_json::to_value(&unordered.priority_strategy).unwrap_or_default(),
                error.to_string(),
            ));
        }
    }
    errors
}

fn pod_update_policy_errors(
    rolling: &RollingUpdateStatefulSetStrategy,
    spec: &StatefulSetSpec,
) -> Option<FieldError> {
    use StatefulSetPodUpdatePolicy as Policy;
    const PATH: &str = "spec.updateStrategy.rollingUpdate.podUpdatePolicy";
    match rolling.pod_update_policy.as_ref() {
        None => Some(FieldError::required(PATH, "")),
        Some(Policy::ReCreate) => None,
        Some(policy @ (Policy::InPlaceIfPossible | Policy::InPlaceOnly)) => {
            (!has_readiness_gate(&spec.template, INPLACE_UPDATE_READY)).then(|| {
                let gates = spec
                    .template
                    .spec
                    .as_ref()
                    .and_then(|pod| pod.readiness_gates.as_ref());
                FieldError::invalid(
                    "spec.template.spec.readinessGates",
                    serde_json::to_value(gates).unwrap_or_default(),
                    format!("must contain {INPLACE_UPDATE_READY} when podUpdatePolicy is {policy}"),
                )
            })
        }
        Some(other) => Some(FieldError::not_supported(
            PATH,
            other.as_str(),
            Policy::KNOWN_VALUES,
        )),
    }
}

/// Upstream's `validateMaxUnavailableField`.
fn max_unavailable_errors(
    value: &IntOrString,
    spec: &StatefulSetSpec,
    path: &str,
) -> Vec<FieldError> {
    let mut errors = int_or_percent_errors(value, path);
    if errors.is_empty() && legacy_scaled(value, 1, Rounding::Up).is_ok_and(|scaled| scaled < 1) {
        errors.push(FieldError::invalid(
            path,
            int_or_string_value(value),
            "should not be less than 1",
        ));
    }
    let parallel = spec.pod_management_policy == Some(PodManagementPolicy::Parallel);
    if !parallel && *value != IntOrString::Int(1) {
        errors.push(FieldError::invalid(
            path,
            int_or_string_value(value),
            "can only work with Parallel PodManagementPolicyType",
        ));
    }
    errors
}

fn retention_policy_errors(spec: &StatefulSetSpec) -> Vec<FieldError> {
    use PersistentVolumeClaimRetentionPolicyType as Retention;
    let Some(policy) = &spec.persistent_volume_claim_retention_policy else {
        return Vec::new();
    };
    let check = |value: Option<&Retention>, name: &str| {
        let value = value.map_or("", Retention::as_str);
        (value != Retention::Retain.as_str() && value != Retention::Delete.as_str()).then(|| {
            FieldError::not_supported(
                format!("spec.persistentVolumeClaimRetentionPolicy.{name}"),
                value,
                &[Retention::Retain.as_str(), Retention::Delete.as_str()],
            )
        })
    };
    check(policy.when_deleted.as_ref(), "whenDeleted")
        .into_iter()
        .chain(check(policy.when_scaled.as_ref(), "whenScaled"))
        .collect()
}

fn immutable_field_errors(spec: &StatefulSetSpec, old: &StatefulSetSpec) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = selector_change_errors(&spec.selector, &old.selector)
        .into_iter()
        .collect();
    if spec.service_name != old.service_name {
        errors.push(FieldError::immutable(
            "spec.serviceName",
            spec.service_name.as_str(),
        ));
    }
    if spec.pod_management_policy != old.pod_management_policy {
        errors.push(FieldError::immutable(
            "spec.podManagementPolicy",
            spec.pod_management_policy
                .as_ref()
                .map(PodManagementPolicy::as_str),
        ));
    }
    errors
}
