//! Entries of the `KruisePodReady` condition message.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AnnotationError, parse, to_value};
use crate::keys::pod_readiness::KRUISE_POD_READY;

/// One reason a pod is held not ready through the `KruisePodReady` condition.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct PodNotReadyEntry {
    /// Who added the entry, e.g. `Lifecycle` or `ContainerRecreateRequest`.
    pub user_agent: String,
    /// What the writer holds the pod for, e.g. `preDeleteHook` or `<namespace>/<crr name>`.
    pub key: String,
}

/// Parses a `KruisePodReady` condition message. An empty message means no entries.
///
/// # Errors
/// The message is neither empty nor a JSON array of entries.
pub fn parse_pod_not_ready_message(
    message: &str,
) -> Result<Vec<PodNotReadyEntry>, AnnotationError> {
    if message.trim().is_empty() {
        return Ok(Vec::new());
    }
    parse(KRUISE_POD_READY, message)
}

/// Formats entries as the condition message: sorted by user agent then key, as upstream writes it.
#[must_use]
pub fn format_pod_not_ready_message(entries: &[PodNotReadyEntry]) -> String {
    let mut sorted = entries.to_vec();
    sorted.sort();
    to_value(&sorted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(user_agent: &str, key: &str) -> PodNotReadyEntry {
        PodNotReadyEntry {
            user_agent: user_agent.into(),
            key: key.into(),
        }
    }

    #[test]
    fn message_is_sorted_by_user_agent_then_key() {
        let entries = [
            entry("Lifecycle", "preUpdateHook"),
            entry("ContainerRecreateRequest", "default/crr-1"),
            entry("Lifecycle", "preDeleteHook"),
        ];
        assert_eq!(
            format_pod_not_ready_message(&entries),
            r#"[{"userAgent":"ContainerRecreateRequest","key":"default/crr-1"},{"userAgent":"Lifecycle","key":"preDeleteHook"},{"userAgent":"Lifecycle","key":"preUpdateHook"}]"#
        );
        assert_eq!(format_pod_not_ready_message(&[]), "[]");
    }

    #[test]
    fn parsing() {
        assert_eq!(parse_pod_not_ready_message("").unwrap(), vec![]);
        assert_eq!(
            parse_pod_not_ready_message(r#"[{"userAgent":"Lifecycle","key":"preDeleteHook"}]"#)
                .unwrap(),
            vec![entry("Lifecycle", "preDeleteHook")]
        );
        let error = parse_pod_not_ready_message("not json").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("annotation KruisePodReady: invalid value \"not json\""),
            "{error}"
        );
    }
}
