//! Which operations a budget protects: `spec.protectOperations`, else the v1alpha1 annotation
//! `kruise.io/pub-protect-operations` (comma list), else `DELETE`, `UPDATE` and `EVICT` (upstream's
//! default; `RESIZE` only when named).

use kruise_api::keys::pub_policy::PROTECT_OPERATIONS_ANNOTATION;
use kruise_api::policy::v1beta1::{PodUnavailableBudget, PubOperation};

/// The operations protected when neither the field nor the annotation names any.
pub const DEFAULT_PROTECTED: [PubOperation; 3] = [
    PubOperation::Delete,
    PubOperation::Update,
    PubOperation::Evict,
];

/// The operations `budget` protects.
#[must_use]
pub fn protected_operations(budget: &PodUnavailableBudget) -> Vec<PubOperation> {
    if !budget.spec.protect_operations.is_empty() {
        return budget.spec.protect_operations.clone();
    }
    let annotated: Vec<PubOperation> = budget
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(PROTECT_OPERATIONS_ANNOTATION))
        .map(|list| {
            list.split(',')
                .map(str::trim)
                .filter(|operation| !operation.is_empty())
                .map(PubOperation::from)
                .collect()
        })
        .unwrap_or_default();
    if annotated.is_empty() {
        DEFAULT_PROTECTED.to_vec()
    } else {
        annotated
    }
}

/// Whether `budget` protects `operation`.
#[must_use]
pub fn protects(budget: &PodUnavailableBudget, operation: &PubOperation) -> bool {
    protected_operations(budget).contains(operation)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(field: Vec<PubOperation>, annotation: Option<&str>) -> PodUnavailableBudget {
        let mut budget = PodUnavailableBudget::default();
        budget.spec.protect_operations = field;
        budget.metadata.annotations = annotation
            .map(|value| [(PROTECT_OPERATIONS_ANNOTATION.to_owned(), value.to_owned())].into());
        budget
    }

    #[test]
    fn the_field_wins_then_the_annotation_then_the_default() {
        let table = [
            (
                vec![PubOperation::Resize],
                Some("DELETE"),
                vec![PubOperation::Resize],
            ),
            (
                vec![],
                Some(" EVICT ,, DELETE"),
                vec![PubOperation::Evict, PubOperation::Delete],
            ),
            (vec![], Some(""), DEFAULT_PROTECTED.to_vec()),
            (vec![], None, DEFAULT_PROTECTED.to_vec()),
        ];
        for (field, annotation, expected) in table {
            assert_eq!(
                protected_operations(&budget(field, annotation)),
                expected,
                "{annotation:?}"
            );
        }
        assert!(!protects(&budget(vec![], None), &PubOperation::Resize));
        assert!(protects(
            &budget(vec![], Some("RESIZE")),
            &PubOperation::Resize
        ));
    }
}
