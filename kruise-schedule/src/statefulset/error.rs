//! What can stop an Advanced StatefulSet plan.

use crate::int_or_percent::ScaleError;

/// Why the planner could not decide, or where a pass stopped with upstream's reconcile error. Every variant
/// names the object and the field or value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `spec.selector` is not a valid label selector (nothing is done; the old status is kept).
    #[error("StatefulSet {set}: spec.selector: {reason}")]
    InvalidSelector {
        /// `namespace/name` of the StatefulSet.
        set: String,
        /// What is wrong.
        reason: String,
    },
    /// `spec.scaleStrategy.maxUnavailable` or `spec.updateStrategy.rollingUpdate.maxUnavailable` does not
    /// parse.
    #[error("StatefulSet {set}: {error}")]
    MaxUnavailable {
        /// `namespace/name` of the StatefulSet.
        set: String,
        /// The field, value and reason.
        error: ScaleError,
    },
    /// A revision whose pod template is needed (to create pods at it) was not given.
    #[error(
        "StatefulSet {set}: revision {revision:?} has no data; pass its ControllerRevision to create pods at it"
    )]
    MissingRevision {
        /// `namespace/name` of the StatefulSet.
        set: String,
        /// The revision name.
        revision: String,
    },
    /// A revision's data does not hold a pod template.
    #[error("StatefulSet {set}: revision {revision:?}: data.spec.template: {reason}")]
    InvalidRevision {
        /// `namespace/name` of the StatefulSet.
        set: String,
        /// The revision name.
        revision: String,
        /// What is wrong.
        reason: String,
    },
    /// A claim a pod needs is being deleted (upstream: `pvc ... is to be deleted`).
    #[error("pod {pod}: PersistentVolumeClaim {claim} is being deleted")]
    ClaimTerminating {
        /// `namespace/name` of the pod.
        pod: String,
        /// The claim's name.
        claim: String,
    },
    /// A storage quantity of a volume claim template or of a claim does not parse.
    #[error("StatefulSet {set}: {field}: {source}")]
    InvalidStorage {
        /// `namespace/name` of the StatefulSet.
        set: String,
        /// Where the value is: `spec.volumeClaimTemplates[<name>].spec.resources.requests.storage`, or the
        /// claim's name and field.
        field: String,
        /// The value.
        value: String,
        /// Why it does not parse.
        #[source]
        source: kruise_inplace::quantity::QuantityError,
    },
    /// `volumeClaimUpdateStrategy: OnPodRollingUpdate`: a claim differs from its template in more than its
    /// size (storage class or access modes), so it cannot be expanded; it waits to be deleted (upstream's
    /// reconcile error `contains diff other than spec resource, wait pvc to be deleted`).
    #[error(
        "StatefulSet {set}: PersistentVolumeClaim {claim} differs from volume claim template {template} in more than its storage request; it cannot be updated, delete it (with its pod) to recreate it"
    )]
    ClaimNotExpandable {
        /// `namespace/name` of the StatefulSet.
        set: String,
        /// The claim's name.
        claim: String,
        /// The template's name.
        template: String,
    },
    /// A lifecycle decision failed (for example an in-place update asked in `PreparingDelete`).
    #[error(transparent)]
    Lifecycle(#[from] kruise_lifecycle::Error),
    /// An in-place step failed (an annotation of the pod does not parse).
    #[error(transparent)]
    InPlace(#[from] kruise_inplace::Error),
    /// `InPlaceOnly` but the pod cannot be updated in place (upstream's reconcile error).
    #[error(
        "pod {pod}: podUpdatePolicy is InPlaceOnly but it cannot be updated in place: {reason}"
    )]
    InPlaceOnly {
        /// `namespace/name` of the pod.
        pod: String,
        /// Why not.
        reason: String,
    },
}
