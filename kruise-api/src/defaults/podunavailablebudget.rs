//! `PodUnavailableBudget` defaults: none. Upstream has no mutating webhook for the kind and its CRD declares
//! no defaults (an empty `protectOperations` *means* `DELETE`, `UPDATE` and `EVICT`, but is not filled in).
//! The implementations exist so that every kind can be defaulted the same way.

use super::ApplyDefaults;
use crate::policy::{v1alpha1, v1beta1};

impl ApplyDefaults for v1alpha1::PodUnavailableBudget {
    fn apply_defaults(&mut self) {}
}

impl ApplyDefaults for v1beta1::PodUnavailableBudget {
    fn apply_defaults(&mut self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_filled_in() {
        let mut budget: v1beta1::PodUnavailableBudget = serde_saphyr::from_str(
            "{apiVersion: policy.kruise.io/v1beta1, kind: PodUnavailableBudget, metadata: {name: p}, spec: {selector: {matchLabels: {app: web}}}}",
        )
        .unwrap();
        let before = budget.clone();
        budget.apply_defaults();
        assert_eq!(budget, before);
        let mut alpha = v1alpha1::PodUnavailableBudget::from(&budget);
        let alpha_before = alpha.clone();
        alpha.apply_defaults();
        assert_eq!(alpha, alpha_before);
    }
}
