//! The PodUnavailableBudget check of the controllers that update pods in place (gate
//! `PodUnavailableBudgetUpdateGate`, as upstream's `pkg/controller/cloneset/sync/cloneset_update.go` and
//! SidecarSet processor): the update of a pod covered by a budget first spends one unit of it
//! ([`super::spend()`], a conditional status write); when the budget has none left, or cannot be decided on,
//! the pod is skipped and its workload looks again after [`REFUSED_RETRY`].

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kruise_api::policy::v1beta1::PubOperation;
use kube::{Client, ResourceExt};

use super::{BudgetStores, Spent, spend};

/// How soon a workload whose pod update was refused by its budget is reconciled again.
pub const REFUSED_RETRY: Duration = Duration::from_secs(2);

/// Whether the in-place update of `pod` may go ahead now: always without `budgets` (the gate is off).
pub async fn update_allowed(client: &Client, budgets: Option<&BudgetStores>, pod: &Pod) -> bool {
    let Some(budgets) = budgets else {
        return true;
    };
    match spend(client, budgets, pod, &PubOperation::Update, false).await {
        Ok(Spent::Free | Spent::Unit(_)) => true,
        Ok(Spent::Refused(message)) => {
            tracing::info!(pod = %pod.name_any(), %message, "in-place update waits for its PodUnavailableBudget");
            false
        }
        Err(error) => {
            tracing::warn!(pod = %pod.name_any(), %error, "in-place update waits: PodUnavailableBudget not decided");
            false
        }
    }
}
