//! Why a PodUnavailableBudget cannot be judged.

use kruise_api::label_selector::SelectorError;

use crate::int_or_percent::ScaleError;

/// A PodUnavailableBudget whose spec cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BudgetError {
    /// A label selector of the budget is invalid.
    #[error("PodUnavailableBudget {budget}: {field}: {source}")]
    Selector {
        /// `namespace/name` of the budget.
        budget: String,
        /// The field (`spec.selector`, `spec.ignoredPodSelector`).
        field: &'static str,
        /// What is wrong.
        #[source]
        source: SelectorError,
    },
    /// `maxUnavailable` or `minAvailable` does not scale.
    #[error("PodUnavailableBudget {budget}: {source}")]
    Scale {
        /// `namespace/name` of the budget.
        budget: String,
        /// What is wrong (names the field and value).
        #[source]
        source: ScaleError,
    },
}
