//! The status of a ResourceDistribution after one pass (upstream's `calculateNewStatus`): `desired` target
//! namespaces, `succeeded` targets holding an up-to-date copy, `failed` namespaces where something went
//! wrong, `observedGeneration`, and one condition per kind of failure, always all six in the order of
//! [`CONDITION_TYPES`]: `True` with the failed namespaces (sorted) and the first failure's message as
//! `reason`, or `False` with the reason [`NO_FAILURE_REASON`]. A condition keeps its `lastTransitionTime`
//! while its status stays the same.
//!
//! ```
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
//! use kruise_api::apps::v1alpha1::ResourceDistributionConditionType as Type;
//! use kruise_schedule::resource_distribution::status::{Failure, StatusInput, status};
//! use kruise_schedule::resource_distribution::targets::Targets;
//!
//! let targets = Targets {
//!     namespaces: ["a".to_owned(), "b".to_owned()].into(),
//!     missing: ["gone".to_owned()].into(),
//! };
//! let failures = [Failure::new("gone", Type::NamespaceNotExists, "namespace gone does not exist")];
//! let now = Time("2024-05-01T10:00:00Z".parse().unwrap());
//! let status = status(&StatusInput { previous: None, generation: 2, targets: &targets, failures: &failures, now });
//! assert_eq!((status.desired, status.succeeded, status.failed), (3, 2, 1));
//! assert_eq!(status.conditions[1].failed_namespaces, ["gone"]);
//! ```

use std::collections::BTreeSet;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::apps::v1alpha1::{
    ResourceDistributionCondition, ResourceDistributionConditionType, ResourceDistributionStatus,
};

use super::targets::Targets;

/// The six condition types, in the order the status lists them.
pub const CONDITION_TYPES: [ResourceDistributionConditionType; 6] = [
    ResourceDistributionConditionType::ConflictOccurred,
    ResourceDistributionConditionType::NamespaceNotExists,
    ResourceDistributionConditionType::GetResourceFailed,
    ResourceDistributionConditionType::CreateResourceFailed,
    ResourceDistributionConditionType::UpdateResourceFailed,
    ResourceDistributionConditionType::DeleteResourceFailed,
];

/// The `reason` of a condition whose status is `False`.
pub const NO_FAILURE_REASON: &str = "Succeeded";

/// One namespace where one step failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The namespace.
    pub namespace: String,
    /// The kind of failure.
    pub condition: ResourceDistributionConditionType,
    /// What went wrong (names the object and the error).
    pub message: String,
}

impl Failure {
    /// A failure of `condition` in `namespace`.
    #[must_use]
    pub fn new(
        namespace: impl Into<String>,
        condition: ResourceDistributionConditionType,
        message: impl Into<String>,
    ) -> Self {
        Self {
            namespace: namespace.into(),
            condition,
            message: message.into(),
        }
    }
}

/// What the status is made from.
#[derive(Clone, Debug)]
pub struct StatusInput<'a> {
    /// The status the distributor has now (for the transition times).
    pub previous: Option<&'a ResourceDistributionStatus>,
    /// The distributor's `metadata.generation`.
    pub generation: i64,
    /// Its target namespaces.
    pub targets: &'a Targets,
    /// What failed in this pass (targets and former targets).
    pub failures: &'a [Failure],
    /// The time of this pass.
    pub now: Time,
}

/// The status to write.
#[must_use]
pub fn status(input: &StatusInput<'_>) -> ResourceDistributionStatus {
    let failed: BTreeSet<&str> = input
        .failures
        .iter()
        .map(|failure| failure.namespace.as_str())
        .collect();
    let failed_targets = input
        .targets
        .namespaces
        .iter()
        .chain(&input.targets.missing)
        .filter(|namespace| failed.contains(namespace.as_str()))
        .count();
    let count = |value: usize| i32::try_from(value).unwrap_or(i32::MAX);
    let desired = input.targets.desired();
    ResourceDistributionStatus {
        desired: count(desired),
        succeeded: count(desired.saturating_sub(failed_targets)),
        failed: count(failed.len()),
        observed_generation: input.generation,
        conditions: CONDITION_TYPES
            .iter()
            .map(|condition_type| condition(input, condition_type))
            .collect(),
    }
}

fn condition(
    input: &StatusInput<'_>,
    condition_type: &ResourceDistributionConditionType,
) -> ResourceDistributionCondition {
    let mut failures: Vec<&Failure> = input
        .failures
        .iter()
        .filter(|failure| &failure.condition == condition_type)
        .collect();
    failures.sort_by(|a, b| a.namespace.cmp(&b.namespace));
    let namespaces: Vec<String> = failures
        .iter()
        .map(|failure| failure.namespace.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let status = if failures.is_empty() { "False" } else { "True" };
    let reason = failures.first().map_or_else(
        || NO_FAILURE_REASON.to_owned(),
        |failure| failure.message.clone(),
    );
    let previous = input
        .previous
        .into_iter()
        .flat_map(|previous| &previous.conditions)
        .find(|previous| &previous.type_ == condition_type);
    let last_transition_time = match previous {
        Some(previous) if previous.status == status && previous.last_transition_time.is_some() => {
            previous.last_transition_time.clone()
        }
        _ => Some(input.now.clone()),
    };
    ResourceDistributionCondition {
        type_: condition_type.clone(),
        status: status.to_owned(),
        last_transition_time,
        reason,
        failed_namespaces: namespaces,
    }
}
