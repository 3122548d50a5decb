//! The rules of upstream's ResourceDistribution validating webhook (`pkg/webhook/resourcedistribution`),
//! on the v1alpha1 object, as Kubernetes field errors:
//!
//! * `spec.resource` is a valid `v1` Secret or ConfigMap with a `metadata.name` that is a DNS-1123
//!   subdomain;
//! * on UPDATE, its `apiVersion`, `kind` and `metadata.name` do not change;
//! * every name in `spec.targets.includedNamespaces.list` and `excludedNamespaces.list` is a DNS-1123 label,
//!   and no included namespace is `kube-system` or `kube-public`;
//! * `spec.targets.namespaceLabelSelector` is a valid label selector;
//! * no target namespace holds an object of the same kind and name that the distributor did not write
//!   ([`conflict_error`], for the caller that has looked at the cluster).
//!
//! ```
//! use kruise_api::apps::v1alpha1::ResourceDistribution;
//! use kruise_schedule::resource_distribution::validation::validate;
//!
//! let distributor: ResourceDistribution = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "shared"},
//!     "spec": {
//!         "resource": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}},
//!         "targets": {"includedNamespaces": {"list": [{"name": "kube-system"}]}}
//!     }
//! })).unwrap();
//! let errors: Vec<String> = validate(&distributor, None).iter().map(ToString::to_string).collect();
//! assert_eq!(errors, [
//!     "spec.resource.kind: Unsupported value: \"Pod\": supported values: \"Secret\", \"ConfigMap\"",
//!     "spec.targets.includedNamespaces.list[0].name: Invalid value: \"kube-system\": \
//!      may not be a target (kube-system and kube-public are never distributed to)",
//! ]);
//! ```

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kruise_api::apps::v1alpha1::{ResourceDistribution, ResourceDistributionTargetNamespaces};
use kruise_api::keys::resource_distribution::RESOURCE_FROM_ANNOTATION;
use kruise_api::label_selector;
use serde_json::Value;

use super::{SUPPORTED_KINDS, is_forbidden};
use crate::validation::{FieldError, dns_label_problem};

/// Every broken rule of `distributor` (and, for an UPDATE, against the stored `old`), except conflicts.
#[must_use]
pub fn validate(
    distributor: &ResourceDistribution,
    old: Option<&ResourceDistribution>,
) -> Vec<FieldError> {
    let mut errors = resource_errors(&distributor.spec.resource);
    if let Some(old) = old {
        errors.extend(identity_change_errors(
            &distributor.spec.resource,
            &old.spec.resource,
        ));
    }
    let targets = &distributor.spec.targets;
    errors.extend(namespace_list_errors(
        &targets.included_namespaces,
        "spec.targets.includedNamespaces",
        true,
    ));
    errors.extend(namespace_list_errors(
        &targets.excluded_namespaces,
        "spec.targets.excludedNamespaces",
        false,
    ));
    if let Err(error) = label_selector::validate(&targets.namespace_label_selector) {
        errors.push(FieldError::invalid(
            "spec.targets.namespaceLabelSelector",
            serde_json::to_value(&targets.namespace_label_selector).unwrap_or_default(),
            error.to_string(),
        ));
    }
    errors
}

/// `(apiVersion, kind, metadata.name)` of a resource, each `""` when absent or not a string.
#[must_use]
pub fn resource_identity(resource: &Value) -> (&str, &str, &str) {
    let text = |pointer: &str| {
        resource
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    (text("/apiVersion"), text("/kind"), text("/metadata/name"))
}

fn resource_errors(resource: &Value) -> Vec<FieldError> {
    if !resource.is_object() {
        return vec![FieldError::invalid(
            "spec.resource",
            resource.clone(),
            "must be a complete Secret or ConfigMap object",
        )];
    }
    let (api_version, kind, name) = resource_identity(resource);
    let mut errors = Vec::new();
    if api_version != "v1" {
        errors.push(FieldError::not_supported(
            "spec.resource.apiVersion",
            api_version,
            &["v1"],
        ));
    }
    if !SUPPORTED_KINDS.contains(&kind) {
        errors.push(FieldError::not_supported(
            "spec.resource.kind",
            kind,
            &SUPPORTED_KINDS,
        ));
    }
    if name.is_empty() {
        errors.push(FieldError::required(
            "spec.resource.metadata.name",
            "the distributed resource needs a name",
        ));
    } else if let Some(problem) = subdomain_problem(name) {
        errors.push(FieldError::invalid(
            "spec.resource.metadata.name",
            name,
            problem,
        ));
    }
    let decoded = match kind {
        _ if api_version != "v1" => Ok(()),
        "Secret" => serde_json::from_value::<Secret>(resource.clone()).map(drop),
        "ConfigMap" => serde_json::from_value::<ConfigMap>(resource.clone()).map(drop),
        _ => Ok(()),
    };
    if let Err(error) = decoded {
        errors.push(FieldError::invalid(
            "spec.resource",
            format!("{kind} {name}"),
            format!("not a valid v1 {kind}: {error}"),
        ));
    }
    errors
}

fn identity_change_errors(resource: &Value, old: &Value) -> Vec<FieldError> {
    let (api_version, kind, name) = resource_identity(resource);
    let (old_api_version, old_kind, old_name) = resource_identity(old);
    [
        ("spec.resource.apiVersion", api_version, old_api_version),
        ("spec.resource.kind", kind, old_kind),
        ("spec.resource.metadata.name", name, old_name),
    ]
    .into_iter()
    .filter(|(_, new, old)| new != old)
    .map(|(field, new, _)| FieldError::immutable(field, new))
    .collect()
}

fn namespace_list_errors(
    list: &ResourceDistributionTargetNamespaces,
    path: &str,
    refuse_forbidden: bool,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (index, namespace) in list.list.iter().enumerate() {
        let field = format!("{path}.list[{index}].name");
        let name = namespace.name.as_str();
        if let Some(problem) = dns_label_problem(name) {
            errors.push(FieldError::invalid(field, name, problem));
        } else if refuse_forbidden && is_forbidden(name) {
            errors.push(FieldError::invalid(
                field,
                name,
                "may not be a target (kube-system and kube-public are never distributed to)",
            ));
        }
    }
    errors
}

/// Why `name` is not a DNS-1123 subdomain (Kubernetes' `IsDNS1123Subdomain`, the name rule of Secrets and
/// ConfigMaps), if it is not one.
fn subdomain_problem(name: &str) -> Option<&'static str> {
    if name.len() > 253 {
        return Some("must be no more than 253 characters");
    }
    if name.split('.').any(|label| {
        label.is_empty()
            || !label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            || label.starts_with('-')
            || label.ends_with('-')
    }) {
        return Some(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        );
    }
    None
}

/// The conflict error, if any: `conflicting` are the target namespaces holding an object of the resource's
/// kind and name whose `kruise.io/resourcedistribution.resource.from` annotation does not name
/// `distributor` (the caller lists them). The message names the namespaces, the object and the
/// distributor.
#[must_use]
pub fn conflict_error(
    distributor: &str,
    resource: &Value,
    conflicting: &[String],
) -> Option<FieldError> {
    if conflicting.is_empty() {
        return None;
    }
    let (_, kind, name) = resource_identity(resource);
    Some(FieldError::invalid(
        "spec.targets",
        conflicting.to_vec(),
        format!(
            "conflict: {kind} {name:?} already exists in these target namespaces and was not distributed \
             by ResourceDistribution {distributor:?} (annotation {RESOURCE_FROM_ANNOTATION})"
        ),
    ))
}
