//! Why a WorkloadSpread decision could not be made.

/// A WorkloadSpread (or a pod of it) that cannot be read; every message names the object, field and value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WorkloadSpreadError {
    /// `maxReplicas` is neither an integer nor an integer percentage, or is negative.
    #[error(
        "WorkloadSpread {spread}: spec.subsets[{subset}].maxReplicas: invalid value {value:?}: {reason}"
    )]
    InvalidMaxReplicas {
        /// `namespace/name` of the WorkloadSpread.
        spread: String,
        /// The subset's name.
        subset: String,
        /// The value as written.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `maxReplicas` is a percentage but the workload's replicas are not known.
    #[error(
        "WorkloadSpread {spread}: spec.subsets[{subset}].maxReplicas: {value:?} needs the replicas of the workload, which are unknown"
    )]
    UnknownReplicas {
        /// `namespace/name` of the WorkloadSpread.
        spread: String,
        /// The subset's name.
        subset: String,
        /// The percentage.
        value: String,
    },
    /// A subset's `patch` cannot be applied to the pod.
    #[error("WorkloadSpread {spread}: spec.subsets[{subset}].patch: {reason}")]
    InvalidPatch {
        /// `namespace/name` of the WorkloadSpread.
        spread: String,
        /// The subset's name.
        subset: String,
        /// What is wrong.
        reason: String,
    },
    /// The pod's `apps.kruise.io/matched-workloadspread` annotation is not the JSON it should be.
    #[error(
        "pod {pod}: annotation apps.kruise.io/matched-workloadspread: invalid value {value:?}: {reason}"
    )]
    InvalidAnnotation {
        /// `namespace/name` of the pod.
        pod: String,
        /// The annotation's value.
        value: String,
        /// The JSON error.
        reason: String,
    },
}
