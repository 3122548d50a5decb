//! What can stop a CloneSet plan.

/// Why the planner could not decide, or where a step stopped. Every variant names the object and field.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A revision whose pod template is needed (to create pods at it) was not given.
    #[error(
        "CloneSet {cloneset}: revision {revision:?} has no data; pass its ControllerRevision to create pods at it"
    )]
    MissingRevision {
        /// `namespace/name` of the CloneSet.
        cloneset: String,
        /// The revision name.
        revision: String,
    },
    /// A revision's data does not hold a pod template.
    #[error("CloneSet {cloneset}: revision {revision:?}: data.spec.template: {reason}")]
    InvalidRevision {
        /// `namespace/name` of the CloneSet.
        cloneset: String,
        /// The revision name.
        revision: String,
        /// What is wrong.
        reason: String,
    },
    /// The instance id generator kept returning ids that are in use.
    #[error(
        "CloneSet {cloneset}: the instance id generator returned {attempts} ids in use in a row"
    )]
    InstanceIds {
        /// `namespace/name` of the CloneSet.
        cloneset: String,
        /// How many ids were tried.
        attempts: usize,
    },
    /// A lifecycle decision failed (for example an in-place update asked in a state that forbids it).
    #[error(transparent)]
    Lifecycle(#[from] kruise_lifecycle::Error),
    /// An in-place step failed (an annotation of the pod does not parse).
    #[error(transparent)]
    InPlace(#[from] kruise_inplace::Error),
    /// `InPlaceOnly` but the pod cannot be updated in place (upstream's reconcile error).
    #[error(
        "pod {pod}: update strategy is InPlaceOnly but it cannot be updated in place: {reason}"
    )]
    InPlaceOnly {
        /// `namespace/name` of the pod.
        pod: String,
        /// Why not.
        reason: String,
    },
}
