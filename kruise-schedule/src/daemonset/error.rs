//! What can stop an Advanced DaemonSet plan.

use crate::int_or_percent::ScaleError;

/// Why a step of the plan stopped (upstream's reconcile error). Every variant names the DaemonSet and the
/// field.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An IntOrString field does not scale (`maxUnavailable`, `maxSurge`, `partition`, `burstReplicas`).
    #[error("DaemonSet {daemonset}: {source}")]
    InvalidValue {
        /// `namespace/name` of the DaemonSet.
        daemonset: String,
        /// What is wrong, naming the field and the value.
        #[source]
        source: ScaleError,
    },
    /// `spec.updateStrategy.rollingUpdate.selector` is not a valid label selector.
    #[error("DaemonSet {daemonset}: spec.updateStrategy.rollingUpdate.selector: {source}")]
    InvalidSelector {
        /// `namespace/name` of the DaemonSet.
        daemonset: String,
        /// What is wrong with it.
        #[source]
        source: kruise_api::label_selector::SelectorError,
    },
    /// A lifecycle decision failed (for example a `KruisePodReady` message that does not parse).
    #[error(transparent)]
    Lifecycle(#[from] kruise_lifecycle::Error),
    /// An in-place step failed (an annotation of the pod does not parse).
    #[error(transparent)]
    InPlace(#[from] kruise_inplace::Error),
}
