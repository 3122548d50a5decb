//! UnitedDeployment (upstream `well_known_labels.go`).

/// Label on a pod: the pod is reserved by a UnitedDeployment (adaptive scheduling).
pub const RESERVED_POD_LABEL: &str = "apps.kruise.io/united-deployment-reserved-pod";

/// Label on a subset workload and its pods: the subset name.
pub const SUBSET_NAME_LABEL: &str = "apps.kruise.io/subset-name";

/// Annotation on a subset workload: the raw JSON patch applied to the subset.
pub const SUBSET_PATCH_ANNOTATION: &str = "apps.kruise.io/subset-patch";
