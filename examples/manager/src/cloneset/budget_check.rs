//! The PodUnavailableBudget check before an in-place update (gate `PodUnavailableBudgetUpdateGate`, as
//! upstream's `pkg/controller/cloneset/sync/cloneset_update.go`): the update of a pod covered by a budget
//! first spends one unit of it ([`crate::unavailable_budget::spend`], a conditional status write); when
//! the budget has none left the pod is skipped and the CloneSet looks again after [`REFUSED_RETRY`].

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kruise_api::policy::v1beta1::PubOperation;
use kube::ResourceExt;

use super::context::Shared;
use crate::unavailable_budget::{Spent, spend};

/// How soon a CloneSet whose pod update was refused by its budget is reconciled again.
pub const REFUSED_RETRY: Duration = Duration::from_secs(2);

/// Whether the in-place update of `pod` may go ahead now (always, with the gate off).
pub async fn update_allowed(shared: &Shared, pod: &Pod) -> bool {
    let Some(budgets) = &shared.budgets else {
        return true;
    };
    match spend(&shared.client, budgets, pod, &PubOperation::Update, false).await {
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
