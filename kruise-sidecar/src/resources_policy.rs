//! `resourcesPolicy`: a sidecar's resources computed, when a pod is created, from the resources of
//! the pod's containers.
//!
//! The target containers are the pod's containers (`spec.containers` of the pod being created) whose names
//! match `targetContainersNameRegex` (unanchored, like Go's `MatchString`; empty means every container); none
//! matching is an error. For each of `limits` and `requests` with an expression, and each of `cpu` and
//! `memory` with a non-empty expression, the targets' values are combined (`sum` or `max`) and the
//! [expression](crate::resource_expression) computes the sidecar's value:
//!
//! * a request a target does not set counts as zero;
//! * a limit a target does not set is unlimited, and so is the combined limit: the sidecar then gets no limit
//!   for that resource;
//! * a negative result is an error; CPU is written in decimal SI, memory rounded up to whole bytes in binary SI
//!   (Kubernetes' canonical quantity text).
//!
//! [`validate`] holds the SidecarSet webhook's rules for the field.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kruise_api::apps::v1beta1::{
    ResourceExpressions, ResourcesPolicy, SidecarContainer, SidecarSet, TargetContainersMode,
};
use kruise_inplace::quantity::{self, Format};
use regex::Regex;

use crate::error::Error;
use crate::hash::{is_native_sidecar, name_of};
use crate::resource_expression::{Expression, ExpressionError};

const CPU: &str = "cpu";
const MEMORY: &str = "memory";
const NANOS_PER_UNIT: i128 = 1_000_000_000;

/// What is wrong with a `resourcesPolicy`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// An expression does not parse or cannot be evaluated.
    #[error("{field}: expression {expression:?}: {source}")]
    Expression {
        /// The field, e.g. `resourcesExpr.limits.cpu`.
        field: String,
        /// The expression.
        expression: String,
        /// What is wrong.
        #[source]
        source: ExpressionError,
    },
    /// `targetContainersMode` is neither `sum` nor `max`.
    #[error("targetContainersMode: unsupported value {0:?}: supported values: \"sum\", \"max\"")]
    Mode(String),
    /// `targetContainersNameRegex` is not a regular expression.
    #[error("targetContainersNameRegex: invalid regular expression {pattern:?}: {reason}")]
    Regex {
        /// The pattern.
        pattern: String,
        /// What the regex compiler said.
        reason: String,
    },
    /// No container of the pod matches `targetContainersNameRegex`.
    #[error("targetContainersNameRegex: no container of the pod matches {0:?}")]
    NoTarget(String),
    /// A target container holds a resource value that is not a quantity.
    #[error("container {container}: resources.{field}: {reason}")]
    TargetQuantity {
        /// The target container.
        container: String,
        /// `limits.cpu`, `requests.memory`, ...
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The computed value has no Kubernetes quantity text (beyond the representable range).
    #[error("{0}: the computed value is out of range")]
    OutOfRange(String),
    /// The sidecar sets both `resources` and `resourcesPolicy` (SidecarSet validation).
    #[error("resources: must be empty when resourcesPolicy is set")]
    ResourcesConflict,
    /// A `resourcesPolicy` on an init container that is not a native sidecar (SidecarSet validation).
    #[error("resourcesPolicy: only allowed on init containers with restartPolicy Always")]
    PlainInitContainer,
}

/// One violation found by [`validate`]: the field path and the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// The path of the container, e.g. `spec.containers[0]`.
    pub container_path: String,
    /// What is wrong.
    pub error: PolicyError,
}

/// The resources of `sidecar` after its `resourcesPolicy` for a pod whose containers are `pod_containers`, or
/// `None` when it has no policy.
///
/// # Errors
/// [`Error::ResourcesPolicy`] naming the SidecarSet, the container and, for an expression, the field and the
/// expression.
pub fn sidecar_resources(
    sidecarset: &SidecarSet,
    sidecar: &SidecarContainer,
    pod_containers: &[Container],
) -> Result<Option<ResourceRequirements>, Error> {
    let Some(policy) = &sidecar.resources_policy else {
        return Ok(None);
    };
    let wrap = |source| Error::ResourcesPolicy {
        sidecarset: name_of(sidecarset).to_owned(),
        container: sidecar.container.name.clone(),
        source: Box::new(source),
    };
    compute(policy, &sidecar.container, pod_containers)
        .map(Some)
        .map_err(wrap)
}

fn compute(
    policy: &ResourcesPolicy,
    sidecar: &Container,
    pod_containers: &[Container],
) -> Result<ResourceRequirements, PolicyError> {
    let sum = match &policy.target_containers_mode {
        TargetContainersMode::Sum => true,
        TargetContainersMode::Max => false,
        TargetContainersMode::Unknown(other) => return Err(PolicyError::Mode(other.clone())),
    };
    let regex = target_regex(&policy.target_containers_name_regex)?;
    let targets: Vec<&Container> = pod_containers
        .iter()
        .filter(|container| regex.is_match(&container.name))
        .collect();
    if targets.is_empty() {
        return Err(PolicyError::NoTarget(regex.as_str().to_owned()));
    }
    let mut resources = sidecar.resources.clone().unwrap_or_default();
    let sections = [
        (true, &policy.resources_expr.limits),
        (false, &policy.resources_expr.requests),
    ];
    for (limits, expressions) in sections {
        let Some(expressions) = expressions else {
            continue;
        };
        let section = if limits { "limits" } else { "requests" };
        let target = if limits {
            &mut resources.limits
        } else {
            &mut resources.requests
        };
        for (resource, text) in [(CPU, &expressions.cpu), (MEMORY, &expressions.memory)] {
            if text.is_empty() {
                continue;
            }
            let field = format!("resourcesExpr.{section}.{resource}");
            let expression_error = |source| PolicyError::Expression {
                field: field.clone(),
                expression: text.clone(),
                source,
            };
            let expression = Expression::parse(text, resource).map_err(expression_error)?;
            let combined = combine(&targets, limits, resource, sum)?;
            let map = target.get_or_insert_with(Default::default);
            let Some(combined) = combined else {
                // An unlimited target: the sidecar is unlimited too.
                map.remove(resource);
                continue;
            };
            let value = expression.evaluate(combined).map_err(expression_error)?;
            let text = quantity_text(value, resource).ok_or(PolicyError::OutOfRange(field))?;
            map.insert(resource.to_owned(), Quantity(text));
        }
    }
    for map in [&mut resources.limits, &mut resources.requests] {
        if map.as_ref().is_some_and(BTreeMap::is_empty) {
            *map = None;
        }
    }
    Ok(resources)
}

fn target_regex(pattern: &str) -> Result<Regex, PolicyError> {
    let pattern = if pattern.is_empty() { ".*" } else { pattern };
    Regex::new(pattern).map_err(|error| PolicyError::Regex {
        pattern: pattern.to_owned(),
        reason: error.to_string(),
    })
}

/// The targets' combined value in nano units; `None` for a limit some target does not set.
fn combine(
    targets: &[&Container],
    limits: bool,
    resource: &str,
    sum: bool,
) -> Result<Option<i128>, PolicyError> {
    let section = if limits { "limits" } else { "requests" };
    let mut combined: i128 = 0;
    for container in targets {
        let resources = container.resources.as_ref();
        let map = if limits {
            resources.and_then(|r| r.limits.as_ref())
        } else {
            resources.and_then(|r| r.requests.as_ref())
        };
        let value = match map.and_then(|map| map.get(resource)) {
            Some(Quantity(text)) => {
                let error = |reason: String| PolicyError::TargetQuantity {
                    container: container.name.clone(),
                    field: format!("{section}.{resource}"),
                    reason,
                };
                quantity::parse(text)
                    .map_err(|e| error(e.to_string()))?
                    .to_nanos()
                    .ok_or_else(|| error(format!("quantity {text:?} is out of range")))?
            }
            None if limits => return Ok(None),
            None => 0,
        };
        combined = if sum {
            combined
                .checked_add(value)
                .ok_or_else(|| PolicyError::OutOfRange(format!("{section}.{resource}")))?
        } else {
            combined.max(value)
        };
    }
    Ok(Some(combined))
}

/// Kubernetes' canonical text of `nanos`: decimal SI for CPU, whole bytes in binary SI for memory.
fn quantity_text(nanos: i128, resource: &str) -> Option<String> {
    let value = if resource == MEMORY {
        let bytes = nanos / NANOS_PER_UNIT + i128::from(nanos % NANOS_PER_UNIT != 0);
        quantity::Quantity::from_nanos(bytes.checked_mul(NANOS_PER_UNIT)?, Format::BinarySi)
    } else {
        quantity::Quantity::from_nanos(nanos, Format::DecimalSi)
    };
    value.to_canonical()
}

/// The SidecarSet webhook's rules for `resourcesPolicy`, on every container and init container: a known
/// `targetContainersMode`, a valid regular expression, expressions that parse (each using only its own
/// resource's variable), empty `resources` beside a policy, and no policy on an init container that is not a
/// native sidecar (`restartPolicy: Always`).
#[must_use]
pub fn validate(sidecarset: &SidecarSet) -> Vec<Violation> {
    let mut violations = Vec::new();
    let lists = [
        ("initContainers", &sidecarset.spec.init_containers, true),
        ("containers", &sidecarset.spec.containers, false),
    ];
    for (list, sidecars, init) in lists {
        for (index, sidecar) in sidecars.iter().enumerate() {
            let Some(policy) = &sidecar.resources_policy else {
                continue;
            };
            let container_path = format!("spec.{list}[{index}]");
            let mut report = |error| {
                violations.push(Violation {
                    container_path: container_path.clone(),
                    error,
                });
            };
            if init && !is_native_sidecar(sidecar) {
                report(PolicyError::PlainInitContainer);
            }
            if sidecar
                .container
                .resources
                .as_ref()
                .is_some_and(has_resources)
            {
                report(PolicyError::ResourcesConflict);
            }
            if let TargetContainersMode::Unknown(other) = &policy.target_containers_mode {
                report(PolicyError::Mode(other.clone()));
            }
            if let Err(error) = target_regex(&policy.target_containers_name_regex) {
                report(error);
            }
            let sections = [
                ("limits", &policy.resources_expr.limits),
                ("requests", &policy.resources_expr.requests),
            ];
            for (section, expressions) in sections {
                for error in expression_errors(section, expressions.as_ref()) {
                    report(error);
                }
            }
        }
    }
    violations
}

fn has_resources(resources: &ResourceRequirements) -> bool {
    let non_empty =
        |map: &Option<BTreeMap<String, Quantity>>| map.as_ref().is_some_and(|map| !map.is_empty());
    non_empty(&resources.limits)
        || non_empty(&resources.requests)
        || resources
            .claims
            .as_ref()
            .is_some_and(|claims| !claims.is_empty())
}

fn expression_errors(section: &str, expressions: Option<&ResourceExpressions>) -> Vec<PolicyError> {
    let Some(expressions) = expressions else {
        return Vec::new();
    };
    [(CPU, &expressions.cpu), (MEMORY, &expressions.memory)]
        .into_iter()
        .filter(|(_, text)| !text.is_empty())
        .filter_map(|(resource, text)| {
            Expression::parse(text, resource)
                .err()
                .map(|source| PolicyError::Expression {
                    field: format!("resourcesExpr.{section}.{resource}"),
                    expression: text.clone(),
                    source,
                })
        })
        .collect()
}
