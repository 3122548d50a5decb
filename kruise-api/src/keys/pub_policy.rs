//! PodUnavailableBudget and deletion protection (upstream `apis/policy` types and `pkg/control/pubcontrol`).

/// Annotation on a v1alpha1 PodUnavailableBudget (deprecated in v1beta1): comma list of `DELETE`, `UPDATE`,
/// `EVICT`, `RESIZE`; absent means `DELETE,UPDATE,EVICT`. The v1beta1 form is `spec.protectOperations`.
pub const PROTECT_OPERATIONS_ANNOTATION: &str = "kruise.io/pub-protect-operations";

/// Annotation on a v1alpha1 PodUnavailableBudget (deprecated): an integer total of replicas to protect. The
/// v1beta1 form is `spec.protectTotalReplicas`.
pub const PROTECT_TOTAL_REPLICAS_ANNOTATION: &str = "pub.kruise.io/protect-total-replicas";

/// Annotation on a pod (deprecated): parsed like Go's `ParseBool`; true bypasses PodUnavailableBudget. The
/// v1beta1 form is `spec.ignoredPodSelector` of the budget.
pub const NO_PROTECT_ANNOTATION: &str = "pub.kruise.io/no-protect";

/// Annotation on a pod: the name of the PodUnavailableBudget that covers it.
pub const RELATED_PUB_ANNOTATION: &str = "pub.kruise.io/related-pub";

/// Annotation on a pod: the legacy form of [`RELATED_PUB_ANNOTATION`] (both are written).
pub const LEGACY_RELATED_PUB_ANNOTATION: &str = "kruise.io/related-pub";

/// Label on a workload or namespace: `Always` or `Cascading` deletion protection.
pub const DELETE_PROTECTION_LABEL: &str = "policy.kruise.io/delete-protection";

/// Value of [`DELETE_PROTECTION_LABEL`]: never allow deletion.
pub const DELETE_PROTECTION_ALWAYS: &str = "Always";

/// Value of [`DELETE_PROTECTION_LABEL`]: allow deletion only when nothing depends on the object.
pub const DELETE_PROTECTION_CASCADING: &str = "Cascading";
