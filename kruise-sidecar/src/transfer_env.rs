//! `transferEnv` (upstream `pkg/control/sidecarcontrol`): environment variables copied into a sidecar from another
//! container of the pod.
//!
//! Per entry, the names are `{envName} ∪ envNames`, in sorted order. The source container is
//! `sourceContainerName`, or read from the pod through `sourceContainerNameFrom.fieldRef` — only
//! `metadata.labels['<key>']` and `metadata.annotations['<key>']`, with a qualified-name key (checked
//! lower-cased for annotations); an entry whose field path is not supported is skipped. A variable the source
//! container does not have is skipped silently.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Container, EnvVar, ObjectFieldSelector, Pod};
use kruise_api::apps::v1beta1::SidecarContainer;
use kruise_api::label_selector;
use kruise_inplace::env_from_metadata::{ANNOTATIONS_PATH, LABELS_PATH, split_subscripted_path};

/// Why a `sourceContainerNameFrom.fieldRef` cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FieldPathError {
    /// The path has no `['<key>']` subscript.
    #[error("unsupported fieldPath: {0}")]
    Unsupported(String),
    /// The subscripted path is neither labels nor annotations.
    #[error("fieldPath {0:?} does not support subscript")]
    NoSubscript(String),
    /// The key is not a qualified name.
    #[error("invalid key subscript in {path}: {reason}")]
    InvalidKey {
        /// The field path.
        path: String,
        /// What is wrong with the key.
        reason: String,
    },
}

/// The container name a field selector reads from the pod's labels or annotations (`""` when absent).
///
/// # Errors
/// [`FieldPathError`] when the path is not a supported subscripted label or annotation path.
pub fn source_container_name(
    selector: &ObjectFieldSelector,
    pod: &Pod,
) -> Result<String, FieldPathError> {
    let path = selector.field_path.as_str();
    let (field, key) =
        split_subscripted_path(path).ok_or_else(|| FieldPathError::Unsupported(path.to_owned()))?;
    let invalid = |error: label_selector::SelectorError| FieldPathError::InvalidKey {
        path: path.to_owned(),
        reason: error.to_string(),
    };
    let map = match field {
        ANNOTATIONS_PATH => {
            label_selector::validate_key(&key.to_lowercase()).map_err(invalid)?;
            pod.metadata.annotations.as_ref()
        }
        LABELS_PATH => {
            label_selector::validate_key(key).map_err(invalid)?;
            pod.metadata.labels.as_ref()
        }
        _ => return Err(FieldPathError::NoSubscript(path.to_owned())),
    };
    Ok(map
        .and_then(|map| map.get(key))
        .cloned()
        .unwrap_or_default())
}

/// The variables `sidecar` copies from the pod, in order (entry by entry, names sorted within an entry).
#[must_use]
pub fn transfer_envs(sidecar: &SidecarContainer, pod: &Pod) -> Vec<EnvVar> {
    let containers = pod
        .spec
        .as_ref()
        .map(|spec| spec.containers.as_slice())
        .unwrap_or_default();
    transfer_env_refs(sidecar, containers, pod)
        .into_iter()
        .cloned()
        .collect()
}

/// [`transfer_envs`] borrowed from `containers` (the pod's), with the source container names read from
/// `pod`'s labels and annotations.
pub(crate) fn transfer_env_refs<'p>(
    sidecar: &SidecarContainer,
    containers: &'p [Container],
    pod: &Pod,
) -> Vec<&'p EnvVar> {
    // Upstream indexes `container/env` in a map, so the last container and variable of a name win.
    let lookup = |container: &str, env: &str| {
        containers
            .iter()
            .rev()
            .filter(|c| c.name == container)
            .find_map(|c| c.env.iter().flatten().rev().find(|e| e.name == env))
    };
    let mut out = Vec::new();
    for transfer in &sidecar.transfer_env {
        let mut names: BTreeSet<&str> = transfer.env_names.iter().map(String::as_str).collect();
        if !transfer.env_name.is_empty() {
            names.insert(&transfer.env_name);
        }
        let source = match transfer
            .source_container_name_from
            .as_ref()
            .and_then(|from| from.field_ref.as_ref())
        {
            Some(selector) => match source_container_name(selector, pod) {
                Ok(name) => name,
                Err(_) => continue,
            },
            None => transfer.source_container_name.clone(),
        };
        for name in names {
            if let Some(env) = lookup(&source, name) {
                out.push(env);
            }
        }
    }
    out
}
