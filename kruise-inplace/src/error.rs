//! Errors of the pod-changing entry points ([`apply`](crate::apply()), [`refresh`](crate::refresh())).

use crate::state::AnnotationError;
pub use crate::strategic_merge::MergeError;
use crate::update_spec::UpdateSpecError;

/// Why an in-place step could not be computed for a pod. Every variant names the pod (`namespace/name`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An in-place annotation of the pod does not parse.
    #[error("pod {pod}: {source}")]
    Annotation {
        /// The pod.
        pod: String,
        /// The annotation and what is wrong with it.
        #[source]
        source: AnnotationError,
    },
    /// The grace annotation does not hold an update spec.
    #[error("pod {pod}: annotation apps.kruise.io/inplace-update-grace: {source}")]
    GraceSpec {
        /// The pod.
        pod: String,
        /// What is wrong with the spec.
        #[source]
        source: UpdateSpecError,
    },
    /// The pod is in a grace period but has no state annotation.
    #[error(
        "pod {pod} has apps.kruise.io/inplace-update-grace but apps.kruise.io/inplace-update-state not found"
    )]
    GraceWithoutState {
        /// The pod.
        pod: String,
    },
    /// The update spec's `metaDataPatch` cannot be applied to the pod.
    #[error("pod {pod}: metaDataPatch: {source}")]
    MetadataPatch {
        /// The pod.
        pod: String,
        /// What is wrong with the patch.
        #[source]
        source: MergeError,
    },
}

/// `namespace/name` of a pod, for messages.
pub(crate) fn pod_key(pod: &k8s_openapi::api::core::v1::Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.metadata.name.as_deref().unwrap_or("")
    )
}
