//! CloneSet (upstream `apis/apps/v1alpha1/cloneset_types.go`, `well_known_labels.go`).

/// Label on CloneSet pods and their PVCs: the instance id, 5 characters from
/// [`INSTANCE_ID_ALPHABET`]. Pod name = `<cloneset>-<id>`, PVC name = `<template>-<cloneset>-<id>`.
pub const INSTANCE_ID_LABEL: &str = "apps.kruise.io/cloneset-instance-id";

/// The alphabet of instance ids and of Kubernetes' safe-encoded hashes.
pub const INSTANCE_ID_ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";

/// Label on a v1alpha1 CloneSet: `"true"` excludes `PreparingDelete` pods from the scale math. The v1beta1
/// form is `spec.scaleStrategy.excludePreparingDelete`.
pub const SCALING_EXCLUDE_PREPARING_DELETE_LABEL: &str =
    "apps.kruise.io/cloneset-scaling-exclude-preparing-delete";

/// Label on pods: any value marks the pod for deletion (CloneSet and Advanced StatefulSet). Kruise writes
/// `"true"`; CloneSet's recreate update also works by setting it.
pub const SPECIFIED_DELETE_LABEL: &str = "apps.kruise.io/specified-delete";

/// The default `updateStrategy.maxUnavailable` of a CloneSet.
pub const DEFAULT_MAX_UNAVAILABLE: &str = "20%";
