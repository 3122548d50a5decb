//! Spending one unit of a pod's budget, for the webhook and the controllers that update pods: decide with
//! [`kruise_schedule::protection::unavailable_budget::decide`], then write the budget's status through the
//! status subresource on the `resourceVersion` the decision read. A conflict (409: someone else wrote the
//! budget since) reads the budget again from the API server and decides again, up to [`ATTEMPTS`] times;
//! so two admissions never both spend the last unit. The first decision reads the budget from the
//! informer (usually current; a stale copy only costs one conflict, and a refusal is only given on a
//! fresh read).

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kruise_api::policy::{v1alpha1, v1beta1};
use kruise_runtime::actions::{self, ActionError};
use kruise_schedule::protection::unavailable_budget::{BudgetError, Verdict, budget_key, decide};
use kube::{Api, Client, ResourceExt};

use super::budgets::{BudgetStores, CoveringBudget, covering, stored_status};

/// How many times a budget is read and decided on when its status write conflicts.
pub const ATTEMPTS: usize = 5;

/// What became of a request to take a pod away.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Spent {
    /// No budget covers the pod, or the operation is free under it.
    Free,
    /// One unit of the named budget (`namespace/name`) was spent (or would be, for a dry run).
    Unit(String),
    /// Refused: the message names the pod, the budget and its numbers.
    Refused(String),
}

/// Why the budget could not be decided on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpendError {
    /// Reading or writing the budget failed.
    #[error(transparent)]
    Action(#[from] ActionError),
    /// The budget cannot be judged.
    #[error(transparent)]
    Budget(#[from] BudgetError),
    /// Every attempt conflicted with another writer.
    #[error(
        "PodUnavailableBudget {budget}: its status changed {ATTEMPTS} times while deciding; retry"
    )]
    Contended {
        /// `namespace/name` of the budget.
        budget: String,
    },
}

/// Takes one unit of `pod`'s budget for `operation` (nothing is written with `dry_run`).
///
/// # Errors
/// See [`SpendError`].
pub async fn spend(
    client: &Client,
    stores: &BudgetStores,
    pod: &Pod,
    operation: &v1beta1::PubOperation,
    dry_run: bool,
) -> Result<Spent, SpendError> {
    let Some(mut budget) = stores.covering(pod) else {
        return Ok(Spent::Free);
    };
    let key = budget_key(&budget.hub);
    let api: Api<v1alpha1::PodUnavailableBudget> = Api::namespaced(
        client.clone(),
        &budget.stored.namespace().unwrap_or_default(),
    );
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            let Some(fresh) = api
                .get_opt(&budget.stored.name_any())
                .await
                .map_err(|error| ActionError::from_kube(key.clone(), error))?
            else {
                return Ok(Spent::Free);
            };
            let hub = v1beta1::PodUnavailableBudget::from(&fresh);
            if !covering(&hub, pod) {
                return Ok(Spent::Free);
            }
            budget = CoveringBudget {
                stored: fresh.into(),
                hub,
            };
        }
        match decide(&budget.hub, pod, operation, Timestamp::now())? {
            Verdict::Free(_) => return Ok(Spent::Free),
            // A refusal read from the informer is checked on a fresh read (units come back).
            Verdict::Refused(_) if attempt == 0 => {}
            Verdict::Refused(refusal) => return Ok(Spent::Refused(refusal.to_string())),
            Verdict::Spend(_) if dry_run => return Ok(Spent::Unit(key)),
            Verdict::Spend(status) => {
                match actions::replace_status(&api, budget.stored.as_ref(), &stored_status(&status))
                    .await
                {
                    Ok(_) => return Ok(Spent::Unit(key)),
                    Err(ActionError::Conflict { .. }) => {}
                    Err(error) => return Err(error.into()),
                }
            }
        }
    }
    Err(SpendError::Contended { budget: key })
}
