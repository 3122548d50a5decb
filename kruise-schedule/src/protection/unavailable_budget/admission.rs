//! Whether one deletion, eviction or update of a pod may go ahead under a budget (upstream's
//! `PodUnavailableBudgetValidatePod`, `pkg/control/pubcontrol`).
//!
//! The pod goes ahead without spending anything when the budget does not protect the operation, leaves the
//! pod alone ([`super::is_ignored`]), when the pod is not available now (taking it away changes nothing),
//! or when the status already lists it as disrupted or unavailable (its unit was spent before). Otherwise
//! it takes one unit: allowed when `status.unavailableAllowed > 0`, with the status to write (the pod
//! added to `disruptedPods` for a deletion or eviction, to `unavailablePods` for an update or resize,
//! `unavailableAllowed` one less); refused otherwise.
//!
//! The caller must write that status **conditionally** (on the `resourceVersion` it read the budget at)
//! and decide again from a fresh read when the write conflicts: two admissions that read the same status
//! then cannot both spend its last unit.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use k8s_openapi::jiff::Timestamp;
//! use kruise_api::policy::v1beta1::{PodUnavailableBudget, PubOperation};
//! use kruise_schedule::protection::unavailable_budget::{Verdict, decide};
//!
//! let budget: PodUnavailableBudget = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web-pub", "namespace": "default"},
//!     "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 1},
//!     "status": {"unavailableAllowed": 0, "currentAvailable": 3, "desiredAvailable": 3, "totalReplicas": 4}
//! })).unwrap();
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web-3", "namespace": "default", "labels": {"app": "web"}},
//!     "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
//! })).unwrap();
//! let Verdict::Refused(refusal) = decide(&budget, &pod, &PubOperation::Evict, Timestamp::UNIX_EPOCH).unwrap()
//! else { panic!("no budget left") };
//! assert_eq!(
//!     refusal.to_string(),
//!     "pod default/web-3 may not be evicted: PodUnavailableBudget default/web-pub allows no more \
//!      unavailable pods (currentAvailable 3, desiredAvailable 3)"
//! );
//! ```

use std::fmt;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::policy::v1beta1::{PodUnavailableBudget, PodUnavailableBudgetStatus, PubOperation};

use super::availability::is_available;
use super::operations::protects;
use super::{BudgetError, budget_key, is_ignored};

/// Why an operation goes ahead without spending budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Free {
    /// The budget does not protect this operation.
    NotProtected,
    /// The budget leaves this pod alone (`pub.kruise.io/no-protect`, `spec.ignoredPodSelector`).
    Ignored,
    /// The pod is not available now.
    AlreadyUnavailable,
    /// The status already lists the pod in `disruptedPods` or `unavailablePods`.
    AlreadyCounted,
}

/// The decision for one operation on one pod under one budget.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Goes ahead; nothing to write.
    Free(Free),
    /// Goes ahead once this status is written conditionally (one unit spent).
    Spend(Box<PodUnavailableBudgetStatus>),
    /// Refused.
    Refused(Refusal),
}

/// A refused operation: what, and the budget's numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// `namespace/name` of the pod.
    pub pod: String,
    /// The operation.
    pub operation: PubOperation,
    /// `namespace/name` of the budget.
    pub budget: String,
    /// `status.currentAvailable`.
    pub current_available: i32,
    /// `status.desiredAvailable`.
    pub desired_available: i32,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = match &self.operation {
            PubOperation::Delete => "deleted",
            PubOperation::Evict => "evicted",
            PubOperation::Resize => "resized",
            PubOperation::Update | PubOperation::Unknown(_) => "updated",
        };
        write!(
            f,
            "pod {} may not be {verb}: PodUnavailableBudget {} allows no more unavailable pods \
             (currentAvailable {}, desiredAvailable {})",
            self.pod, self.budget, self.current_available, self.desired_available
        )
    }
}

impl std::error::Error for Refusal {}

/// Decides `operation` on `pod` under `budget` (which covers the pod; see [`super::covers`]) at `now`.
///
/// # Errors
/// The budget's `spec.ignoredPodSelector` is invalid.
pub fn decide(
    budget: &PodUnavailableBudget,
    pod: &Pod,
    operation: &PubOperation,
    now: Timestamp,
) -> Result<Verdict, BudgetError> {
    if !protects(budget, operation) {
        return Ok(Verdict::Free(Free::NotProtected));
    }
    if is_ignored(budget, pod)? {
        return Ok(Verdict::Free(Free::Ignored));
    }
    if !is_available(pod) {
        return Ok(Verdict::Free(Free::AlreadyUnavailable));
    }
    let status = budget.status.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    if status.disrupted_pods.contains_key(&name) || status.unavailable_pods.contains_key(&name) {
        return Ok(Verdict::Free(Free::AlreadyCounted));
    }
    if status.unavailable_allowed <= 0 {
        return Ok(Verdict::Refused(Refusal {
            pod: format!(
                "{}/{name}",
                pod.metadata.namespace.as_deref().unwrap_or_default()
            ),
            operation: operation.clone(),
            budget: budget_key(budget),
            current_available: status.current_available,
            desired_available: status.desired_available,
        }));
    }
    let mut spent = status;
    // Seconds, as the API server keeps them.
    let time = Time(Timestamp::from_second(now.as_second()).unwrap_or(now));
    match operation {
        PubOperation::Delete | PubOperation::Evict => spent.disrupted_pods.insert(name, time),
        _ => spent.unavailable_pods.insert(name, time),
    };
    spent.unavailable_allowed -= 1;
    Ok(Verdict::Spend(Box::new(spent)))
}

#[cfg(test)]
mod tests;
