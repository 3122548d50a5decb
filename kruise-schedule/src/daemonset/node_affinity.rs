//! A pod's required node affinity as the scheduler's helpers read it: `spec.nodeSelector` (every label equal)
//! and `requiredDuringSchedulingIgnoredDuringExecution` (any term; within a term every expression).
//!
//! Terms with neither expressions nor fields never match. A term that does not parse (unknown operator,
//! `In` without values, `Gt` with a non-integer, a field other than `metadata.name`, …) never matches either;
//! upstream ignores that error when deciding where daemon pods run, and so does [`matches()`].

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Node, NodeSelectorRequirement, NodeSelectorTerm, PodSpec};

/// The only node field a `matchFields` requirement may name.
pub const NODE_NAME_FIELD: &str = "metadata.name";

/// Whether `node` satisfies the required node affinity of `spec` (nodeSelector and required terms).
#[must_use]
pub fn matches(spec: &PodSpec, node: &Node) -> bool {
    let empty = BTreeMap::new();
    let labels = node.metadata.labels.as_ref().unwrap_or(&empty);
    let selector_ok = spec
        .node_selector
        .iter()
        .flatten()
        .all(|(key, value)| labels.get(key) == Some(value));
    if !selector_ok {
        return false;
    }
    let Some(required) = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
    else {
        return true;
    };
    let name = node.metadata.name.as_deref().unwrap_or("");
    required
        .node_selector_terms
        .iter()
        .any(|term| term_matches(term, labels, name) == Some(true))
}

/// `Some(matched)` for a term that parses, `None` for an empty or invalid term.
fn term_matches(
    term: &NodeSelectorTerm,
    labels: &BTreeMap<String, String>,
    node_name: &str,
) -> Option<bool> {
    let expressions = term.match_expressions.as_deref().unwrap_or_default();
    let fields = term.match_fields.as_deref().unwrap_or_default();
    if expressions.is_empty() && fields.is_empty() {
        return None;
    }
    let mut matched = true;
    for requirement in expressions {
        matched &= label_requirement(requirement, labels)?;
    }
    for requirement in fields {
        matched &= field_requirement(requirement, node_name)?;
    }
    Some(matched)
}

fn label_requirement(
    requirement: &NodeSelectorRequirement,
    labels: &BTreeMap<String, String>,
) -> Option<bool> {
    kruise_api::label_selector::validate_key(&requirement.key).ok()?;
    let values = requirement.values.as_deref().unwrap_or_default();
    let present = labels.get(&requirement.key);
    match requirement.operator.as_str() {
        "In" | "NotIn" if values.is_empty() => None,
        "In" => Some(present.is_some_and(|value| values.contains(value))),
        "NotIn" => Some(present.is_none_or(|value| !values.contains(value))),
        "Exists" | "DoesNotExist" if !values.is_empty() => None,
        "Exists" => Some(present.is_some()),
        "DoesNotExist" => Some(present.is_none()),
        operator @ ("Gt" | "Lt") => {
            let [bound] = values else { return None };
            let bound: i64 = bound.parse().ok()?;
            Some(
                present
                    .and_then(|value| value.parse::<i64>().ok())
                    .is_some_and(|value| {
                        if operator == "Gt" {
                            value > bound
                        } else {
                            value < bound
                        }
                    }),
            )
        }
        _ => None,
    }
}

fn field_requirement(requirement: &NodeSelectorRequirement, node_name: &str) -> Option<bool> {
    if requirement.key != NODE_NAME_FIELD {
        return None;
    }
    let [value] = requirement.values.as_deref().unwrap_or_default() else {
        return None;
    };
    match requirement.operator.as_str() {
        "In" => Some(node_name == value),
        "NotIn" => Some(node_name != value),
        _ => None,
    }
}

/// The node a daemon pod is meant for: `spec.nodeName`, or for a pod not yet scheduled the value of the first
/// `metadata.name In [node]` field requirement of its required node affinity (which the controller writes into
/// every pod it creates). `None` when there is neither (upstream skips such pods).
#[must_use]
pub fn target_node(spec: Option<&PodSpec>) -> Option<&str> {
    let spec = spec?;
    if let Some(name) = spec.node_name.as_deref().filter(|n| !n.is_empty()) {
        return Some(name);
    }
    let terms = &spec
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms;
    for term in terms {
        for requirement in term.match_fields.iter().flatten() {
            if requirement.key == NODE_NAME_FIELD && requirement.operator == "In" {
                return match requirement.values.as_deref().unwrap_or_default() {
                    [value] => Some(value.as_str()),
                    _ => None,
                };
            }
        }
    }
    None
}
