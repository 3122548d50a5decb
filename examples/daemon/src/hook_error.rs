//! Why a ContainerRecreateRequest's preStop hook did not run or failed. A failing hook is logged and the
//! container is stopped anyway (like kubelet); the message names the request, the container and, for a hook
//! that cannot be sent at all, the field and value at fault.

/// A field of a preStop hook that cannot be sent: it names the field, the value and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field} {value:?}: {reason}")]
pub struct InvalidField {
    /// The field's path in the request's container, e.g. `preStop.httpGet.path`.
    pub field: String,
    /// The value as given.
    pub value: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl InvalidField {
    /// The field `field` holds `value`, which is wrong because of `reason`.
    #[must_use]
    pub fn new(field: impl Into<String>, value: impl Into<String>, reason: &'static str) -> Self {
        Self {
            field: field.into(),
            value: value.into(),
            reason,
        }
    }
}

/// Why a preStop hook of container `container` of request `crr` (`namespace/name`) did not succeed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HookError {
    /// The hook cannot be sent as written (a CR/LF in a path or header, an invalid port, ...).
    #[error("ContainerRecreateRequest {crr} container {container}: invalid preStop hook: {source}")]
    Invalid {
        /// `namespace/name` of the request.
        crr: String,
        /// The container.
        container: String,
        /// The field at fault.
        #[source]
        source: InvalidField,
    },
    /// The hook names no host and the pod's IP is not known.
    #[error(
        "ContainerRecreateRequest {crr} container {container}: preStop hook has no host: {reason}"
    )]
    NoPodIp {
        /// `namespace/name` of the request.
        crr: String,
        /// The container.
        container: String,
        /// Why the pod IP is not known.
        reason: String,
    },
    /// The hook ran and failed (connection refused, an error status, a non-zero exit code, ...).
    #[error("ContainerRecreateRequest {crr} container {container}: preStop hook failed: {message}")]
    Failed {
        /// `namespace/name` of the request.
        crr: String,
        /// The container.
        container: String,
        /// What happened.
        message: String,
    },
}
