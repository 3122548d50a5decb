//! WorkloadSpread (upstream `pkg/util/workloadspread`, `pkg/controller/workloadspread`).

/// Annotation on a pod: JSON [`MatchedWorkloadSpread`](crate::annotations::MatchedWorkloadSpread).
pub const MATCHED_WORKLOADSPREAD_ANNOTATION: &str = "apps.kruise.io/matched-workloadspread";

/// Annotation on a WorkloadSpread: do not patch the metadata of pods that already exist.
pub const IGNORE_PATCH_EXISTING_PODS_METADATA_ANNOTATION: &str =
    "workloadspread.kruise.io/ignore-patch-existing-pods-metadata";

/// Internal subset name used for pods that match no real subset.
pub const FAKE_SUBSET_NAME: &str = "kruise.io/workloadspread-fake-subset-name";

/// Pod deletion cost WorkloadSpread writes on pods inside a subset's limit.
pub const DELETION_COST_POSITIVE: &str = "100";

/// Pod deletion cost WorkloadSpread writes on pods beyond a subset's limit.
pub const DELETION_COST_NEGATIVE: &str = "-100";
