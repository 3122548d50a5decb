//! The errors of this crate: each names the object, the field and the value that was wrong.

use kruise_api::annotations::AnnotationError;
use kruise_api::label_selector::SelectorError;
use kruise_inplace::go_json::GoJsonError;

/// Why a SidecarSet operation could not be carried out.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A label selector of the SidecarSet is invalid.
    #[error("SidecarSet {sidecarset}: {field}: {source}")]
    Selector {
        /// The SidecarSet.
        sidecarset: String,
        /// The field holding the selector, e.g. `spec.selector`.
        field: &'static str,
        /// What is wrong with it.
        #[source]
        source: SelectorError,
    },
    /// A SidecarSet annotation of the pod does not parse.
    #[error("pod {pod}: {source}")]
    PodAnnotation {
        /// The pod (`namespace/name`).
        pod: String,
        /// The annotation and what the parser said.
        #[source]
        source: AnnotationError,
    },
    /// A `MergePatchJson` metadata patch cannot be applied (the pod's value or the patch is not JSON).
    #[error("pod {pod}: annotation {key}: cannot merge-patch {value:?} with {patch:?}: {reason}")]
    MergePatch {
        /// The pod (`namespace/name`).
        pod: String,
        /// The annotation key.
        key: String,
        /// The pod's value.
        value: String,
        /// The SidecarSet's patch.
        patch: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// `injectionStrategy.revision.revisionName` names a ControllerRevision the caller did not pass.
    #[error(
        "SidecarSet {sidecarset}: spec.injectionStrategy.revision.revisionName: ControllerRevision {revision:?} not found"
    )]
    RevisionNotFound {
        /// The SidecarSet.
        sidecarset: String,
        /// The revision name.
        revision: String,
    },
    /// `injectionStrategy.revision.customVersion` matches no ControllerRevision of the SidecarSet.
    #[error(
        "SidecarSet {sidecarset}: spec.injectionStrategy.revision.customVersion: no ControllerRevision with custom version {custom_version:?}"
    )]
    CustomVersionNotFound {
        /// The SidecarSet.
        sidecarset: String,
        /// The custom version.
        custom_version: String,
    },
    /// A ControllerRevision's data does not hold a SidecarSet revision.
    #[error("SidecarSet {sidecarset}: ControllerRevision {revision}: data: {reason}")]
    RevisionData {
        /// The SidecarSet.
        sidecarset: String,
        /// The revision.
        revision: String,
        /// What is wrong with the data.
        reason: String,
    },
    /// The `Partial` injection policy needs a percentage partition, and this one does not parse.
    #[error("SidecarSet {sidecarset}: spec.updateStrategy.partition: invalid percentage {value:?}")]
    Partition {
        /// The SidecarSet.
        sidecarset: String,
        /// The partition.
        value: String,
    },
    /// A sidecar container holds a value Go could not have encoded (an invalid quantity), so it has no hash.
    #[error("SidecarSet {sidecarset}: spec{}", .source)]
    Encoding {
        /// The SidecarSet.
        sidecarset: String,
        /// The offending value.
        #[source]
        source: GoJsonError,
    },
    /// A sidecar's `resourcesPolicy` cannot be applied to the pod.
    #[error("SidecarSet {sidecarset}: container {container}: resourcesPolicy: {source}")]
    ResourcesPolicy {
        /// The SidecarSet.
        sidecarset: String,
        /// The sidecar container.
        container: String,
        /// What is wrong (for an expression: the field and the expression).
        #[source]
        source: Box<crate::resources_policy::PolicyError>,
    },
}
