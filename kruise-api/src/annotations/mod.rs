//! The JSON values of the well-known annotations, each serialising exactly as upstream
//! writes it: same field order, same omitted and `null` fields.
//!
//! ```
//! use kruise_api::annotations::{self, PodNotReadyEntry};
//!
//! let message = r#"[{"userAgent":"Lifecycle","key":"preDeleteHook"}]"#;
//! let entries: Vec<PodNotReadyEntry> = annotations::parse_pod_not_ready_message(message).unwrap();
//! assert_eq!(entries[0].key, "preDeleteHook");
//! assert_eq!(annotations::format_pod_not_ready_message(&entries), message);
//! ```

mod crr;
mod pod_readiness;
mod sidecarset;
mod workloadspread;

pub use crr::ContainerStatusSnapshot;
pub use pod_readiness::{
    PodNotReadyEntry, format_pod_not_ready_message, parse_pod_not_ready_message,
};
pub use sidecarset::{
    InjectedSidecarSets, SidecarSetHashEntry, SidecarSetHashes, SidecarSetInPlaceUpdateStates,
    SidecarSetUpgradableMessage, WorkingHotUpgradeContainers, parse_hashes,
    parse_hashes_without_image,
};
pub use workloadspread::MatchedWorkloadSpread;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// An annotation (or condition message) whose value does not parse.
#[derive(Debug, thiserror::Error)]
#[error("annotation {key}: invalid value {value:?}: {source}")]
pub struct AnnotationError {
    /// The annotation key (or condition type) whose value is wrong.
    pub key: &'static str,
    /// The value found, truncated to 200 characters.
    pub value: String,
    /// What the JSON parser said.
    #[source]
    pub source: serde_json::Error,
}

/// Parses the JSON value of annotation `key`.
///
/// # Errors
/// [`AnnotationError`] naming the key and the value when it is not valid JSON of type `T`.
pub fn parse<T: DeserializeOwned>(key: &'static str, value: &str) -> Result<T, AnnotationError> {
    serde_json::from_str(value).map_err(|source| AnnotationError {
        key,
        value: value.chars().take(200).collect(),
        source,
    })
}

/// Serialises an annotation value to the JSON string upstream would write.
#[must_use]
pub fn to_value<T: Serialize>(value: &T) -> String {
    // Serialising these plain data types into a String cannot fail: no maps with non-string keys, no I/O.
    serde_json::to_string(value).unwrap_or_default()
}
