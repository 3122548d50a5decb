//! What can go wrong when deciding a lifecycle step.

use std::fmt;

use k8s_openapi::api::core::v1::Pod;
use kruise_api::annotations::AnnotationError;

use crate::workload::WorkloadKind;

/// An error naming the pod (`namespace/name`) and the field that made a decision impossible.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An in-place update was asked for a pod whose lifecycle state forbids it (upstream: "not allowed to
    /// in-place update pod in state ..."), e.g. `PreparingDelete` or a state this crate does not know.
    #[error(
        "pod {pod}: in-place update is not allowed in lifecycle state {state:?} (label lifecycle.apps.kruise.io/state)"
    )]
    UpdateNotAllowed {
        /// `namespace/name` of the pod.
        pod: PodName,
        /// The value of the `lifecycle.apps.kruise.io/state` label.
        state: String,
    },

    /// The message of the pod's `KruisePodReady` condition is not a JSON list of not-ready entries, so adding
    /// or removing an entry could lose another writer's hold.
    #[error(
        "pod {pod}: status.conditions[type=KruisePodReady].message is not a not-ready entry list"
    )]
    NotReadyMessage {
        /// `namespace/name` of the pod.
        pod: PodName,
        /// What the parser said (it quotes the value).
        #[source]
        source: AnnotationError,
    },

    /// The workload kind never takes this step (for example, only `CloneSet` cancels a `PreparingDelete` on
    /// scale-up, and Advanced `DaemonSet` honours only the preDelete hook).
    #[error("pod {pod}: {workload} does not {trigger}")]
    Unsupported {
        /// `namespace/name` of the pod.
        pod: PodName,
        /// The workload kind asked.
        workload: WorkloadKind,
        /// The step, in words (e.g. "cancel a `PreparingDelete` on scale-up").
        trigger: &'static str,
    },
}

/// A pod's `namespace/name` (either part may be empty for a pod not yet created), for error messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PodName(pub String);

impl PodName {
    /// The name of `pod` as `namespace/name`.
    #[must_use]
    pub fn of(pod: &Pod) -> Self {
        let namespace = pod.metadata.namespace.as_deref().unwrap_or("");
        let name = pod
            .metadata
            .name
            .as_deref()
            .or(pod.metadata.generate_name.as_deref())
            .unwrap_or("");
        Self(format!("{namespace}/{name}"))
    }
}

impl fmt::Display for PodName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
