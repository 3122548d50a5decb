//! The pod template rules of the workloads: a subset of Kubernetes' `ValidatePodTemplateSpec` (the API
//! server stores Kruise templates schemaless, so nothing else checks them) and the restart policy and
//! `activeDeadlineSeconds` rules each workload adds.
//!
//! Checked: at least one container; every container and init container has a name that is a DNS-1123
//! label, unique across both lists, and an image. Other pod fields are left to the API server, which
//! checks them when the pods are created.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Container, PodTemplateSpec};

use super::FieldError;

/// Kubernetes' `RestartPolicyAlways`.
pub(crate) const ALWAYS: &str = "Always";

/// The container rules of `template` at `path` (`spec.template`).
pub(crate) fn pod_template_errors(template: &PodTemplateSpec, path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(spec) = template.spec.as_ref() else {
        errors.push(FieldError::required(format!("{path}.spec.containers"), ""));
        return errors;
    };
    if spec.containers.is_empty() {
        errors.push(FieldError::required(format!("{path}.spec.containers"), ""));
    }
    let mut names = BTreeSet::new();
    let lists = [
        (
            "initContainers",
            spec.init_containers.as_deref().unwrap_or_default(),
        ),
        ("containers", spec.containers.as_slice()),
    ];
    for (list, containers) in lists {
        for (index, container) in containers.iter().enumerate() {
            let at = format!("{path}.spec.{list}[{index}]");
            errors.extend(container_errors(container, &at));
            if !container.name.is_empty() && !names.insert(container.name.as_str()) {
                errors.push(FieldError::duplicate(
                    format!("{at}.name"),
                    container.name.as_str(),
                ));
            }
        }
    }
    errors
}

fn container_errors(container: &Container, at: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if container.name.is_empty() {
        errors.push(FieldError::required(format!("{at}.name"), ""));
    } else if let Some(reason) = dns_label_problem(&container.name) {
        errors.push(FieldError::invalid(
            format!("{at}.name"),
            container.name.as_str(),
            reason,
        ));
    }
    if container
        .image
        .as_deref()
        .is_none_or(|image| image.trim().is_empty())
    {
        errors.push(FieldError::required(format!("{at}.image"), ""));
    }
    errors
}

/// Why `name` is not a DNS-1123 label (Kubernetes' `IsDNS1123Label`), if it is not one.
pub(crate) fn dns_label_problem(name: &str) -> Option<&'static str> {
    if name.len() > 63 {
        return Some("must be no more than 63 characters");
    }
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    let alphanumeric =
        |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if !name.chars().all(allowed)
        || !alphanumeric(name.chars().next())
        || !alphanumeric(name.chars().last())
    {
        return Some(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        );
    }
    None
}

/// `spec.template.spec.restartPolicy` must be one of `allowed` (unset passes: the defaults set `Always`).
pub(crate) fn restart_policy_error(
    template: &PodTemplateSpec,
    path: &str,
    allowed: &[&str],
) -> Option<FieldError> {
    let policy = template.spec.as_ref()?.restart_policy.as_deref()?;
    (!policy.is_empty() && !allowed.contains(&policy))
        .then(|| FieldError::not_supported(format!("{path}.spec.restartPolicy"), policy, allowed))
}

/// `spec.template.spec.activeDeadlineSeconds` is not supported by long-running workloads.
pub(crate) fn active_deadline_error(template: &PodTemplateSpec, kind: &str) -> Option<FieldError> {
    template.spec.as_ref()?.active_deadline_seconds.map(|_| {
        FieldError::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            format!("activeDeadlineSeconds in {kind} is not Supported"),
        )
    })
}

/// Whether the template declares the readiness gate `condition`.
pub(crate) fn has_readiness_gate(template: &PodTemplateSpec, condition: &str) -> bool {
    template
        .spec
        .as_ref()
        .and_then(|spec| spec.readiness_gates.as_ref())
        .is_some_and(|gates| gates.iter().any(|gate| gate.condition_type == condition))
}
