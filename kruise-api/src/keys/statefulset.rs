//! Advanced StatefulSet (upstream `apis/apps/v1beta1/statefulset_types.go`).

/// Annotation on a PVC: the PVC is owned by an Advanced StatefulSet.
pub const OWNED_BY_ASTS_ANNOTATION: &str = "apps.kruise.io/owned-by-asts";

/// The largest allowed `updateStrategy.rollingUpdate.minReadySeconds`.
pub const MAX_MIN_READY_SECONDS: i32 = 300;
