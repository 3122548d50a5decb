//! The PodUnavailableBudgets of the process's shared informer, and the one that covers a pod.
//!
//! Budgets are read in their storage version (v1alpha1, what the informer watches) and judged as v1beta1
//! (`kruise_api::convert::to_hub`, which turns the v1alpha1 annotations into the v1beta1 fields). When
//! several budgets cover a pod, the first by name is its budget (upstream takes the first it finds; the
//! name makes the choice the same in every process). A budget whose selectors are invalid covers nothing
//! (a warning names it and the field).

use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use kruise_api::policy::{v1alpha1, v1beta1};
use kruise_runtime::informer::object_namespace;
use kruise_runtime::{Indexed, Informer, Informers};
use kruise_schedule::protection::unavailable_budget::covers;

/// The index of budgets by namespace.
const BUDGETS_BY_NAMESPACE: &str = "pub-namespace";

/// What readers of budgets share: the budget informer and its namespace index.
#[derive(Clone)]
pub struct BudgetStores {
    by_namespace: Indexed<v1alpha1::PodUnavailableBudget>,
}

impl std::fmt::Debug for BudgetStores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BudgetStores")
            .field("budgets", &self.informer().len())
            .finish()
    }
}

impl BudgetStores {
    /// The process's shared PodUnavailableBudget informer (its watch starts now if nothing started it).
    #[must_use]
    pub fn shared(informers: &Informers) -> Self {
        Self::from_informer(&informers.get())
    }

    /// Budgets from `informer` (tests, or an informer fed elsewhere).
    #[must_use]
    pub fn from_informer(informer: &Informer<v1alpha1::PodUnavailableBudget>) -> Self {
        let by_namespace = informer.index(
            BUDGETS_BY_NAMESPACE,
            Arc::new(object_namespace::<v1alpha1::PodUnavailableBudget>),
        );
        Self { by_namespace }
    }

    /// The informer.
    #[must_use]
    pub fn informer(&self) -> &Informer<v1alpha1::PodUnavailableBudget> {
        self.by_namespace.informer()
    }

    /// Whether the informer has stored its first list.
    #[must_use]
    pub fn is_synced(&self) -> bool {
        self.by_namespace.is_synced()
    }

    /// The budgets of `namespace`, sorted by name.
    #[must_use]
    pub fn in_namespace(&self, namespace: &str) -> Vec<Arc<v1alpha1::PodUnavailableBudget>> {
        let mut budgets = self.by_namespace.get(namespace);
        budgets.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
        budgets
    }

    /// The budget that covers `pod` (the first by name), as stored and as v1beta1.
    #[must_use]
    pub fn covering(&self, pod: &Pod) -> Option<CoveringBudget> {
        let namespace = pod.metadata.namespace.as_deref()?;
        self.in_namespace(namespace).into_iter().find_map(|stored| {
            let hub = v1beta1::PodUnavailableBudget::from(stored.as_ref());
            covering(&hub, pod).then_some(CoveringBudget { stored, hub })
        })
    }

    /// The names of the budgets of `pod`'s namespace that cover it.
    #[must_use]
    pub fn names_covering(&self, pod: &Pod) -> Vec<String> {
        let Some(namespace) = pod.metadata.namespace.as_deref() else {
            return Vec::new();
        };
        self.in_namespace(namespace)
            .iter()
            .filter(|stored| covering(&v1beta1::PodUnavailableBudget::from(stored.as_ref()), pod))
            .filter_map(|stored| stored.metadata.name.clone())
            .collect()
    }
}

/// A budget covering a pod.
#[derive(Clone, Debug)]
pub struct CoveringBudget {
    /// As stored (v1alpha1): what status writes replace.
    pub stored: Arc<v1alpha1::PodUnavailableBudget>,
    /// As v1beta1: what the decisions read.
    pub hub: v1beta1::PodUnavailableBudget,
}

/// Whether `budget` covers `pod`; an invalid budget covers nothing (and says so).
pub fn covering(budget: &v1beta1::PodUnavailableBudget, pod: &Pod) -> bool {
    covers(budget, pod).unwrap_or_else(|error| {
        tracing::warn!(%error, "PodUnavailableBudget skipped");
        false
    })
}

/// The v1alpha1 status with the fields of a v1beta1 one (both versions have the same status fields).
#[must_use]
pub fn stored_status(
    status: &v1beta1::PodUnavailableBudgetStatus,
) -> v1alpha1::PodUnavailableBudgetStatus {
    status.into()
}
