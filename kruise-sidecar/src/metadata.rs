//! `patchPodMetadata` (upstream `pkg/control/sidecarcontrol`): pod annotations a SidecarSet writes on injection and
//! in-place upgrades, and the whitelist that decides which keys a SidecarSet may write.
//!
//! * `Retain` (the default, also for an empty policy): only keys the pod does not have;
//! * `Overwrite`: every key;
//! * `MergePatchJson`: an RFC 7386 JSON merge patch of a non-empty existing value (Go's `evanphx/json-patch`
//!   `MergePatch`, written back compact with sorted keys), the plain value otherwise.
//!
//! The whitelist is the `SidecarSet_PatchPodMetadata_WhiteList` key of the `kruise-configuration`
//! ConfigMap; the caller reads it and passes it as [`PatchMetadataWhitelist`].

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kruise_api::apps::v1beta1::{SidecarSet, SidecarSetPatchPodMetadata, SidecarSetPatchPolicy};
use kruise_api::label_selector;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Error;

/// Why a merge patch cannot be applied (the messages of Go's `jsonpatch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MergePatchError {
    /// The existing value is not JSON (or is `null`).
    #[error("invalid JSON Document")]
    BadDocument,
    /// The patch is not JSON (or is `null`, or not an object or array where one is needed).
    #[error("invalid JSON Patch")]
    BadPatch,
}

/// Applies the patches in order to `annotations`. Returns whether anything changed.
///
/// # Errors
/// The key, pod value and patch of the first `MergePatchJson` that cannot be applied.
pub fn patch_annotations(
    annotations: &mut BTreeMap<String, String>,
    patches: &[SidecarSetPatchPodMetadata],
) -> Result<bool, (String, String, String, MergePatchError)> {
    if patches.is_empty() {
        return Ok(false);
    }
    let before = annotations.clone();
    apply_patches(annotations, patches)?;
    Ok(*annotations != before)
}

/// [`patch_annotations`] without telling whether anything changed.
fn apply_patches(
    annotations: &mut BTreeMap<String, String>,
    patches: &[SidecarSetPatchPodMetadata],
) -> Result<(), (String, String, String, MergePatchError)> {
    for patch in patches {
        let policy = patch.patch_policy.as_ref();
        for (key, value) in &patch.annotations {
            match policy {
                None | Some(SidecarSetPatchPolicy::Retain) => {
                    if !annotations.contains_key(key) {
                        annotations.insert(key.clone(), value.clone());
                    }
                }
                Some(SidecarSetPatchPolicy::Overwrite) => {
                    annotations.insert(key.clone(), value.clone());
                }
                Some(SidecarSetPatchPolicy::MergePatchJson) => {
                    let merged = match annotations.get(key) {
                        Some(origin) if !origin.is_empty() => merge_patch(origin, value)
                            .map_err(|error| (key.clone(), origin.clone(), value.clone(), error))?,
                        _ => value.clone(),
                    };
                    annotations.insert(key.clone(), merged);
                }
                Some(SidecarSetPatchPolicy::Unknown(name)) if name.is_empty() => {
                    if !annotations.contains_key(key) {
                        annotations.insert(key.clone(), value.clone());
                    }
                }
                Some(SidecarSetPatchPolicy::Unknown(_)) => {}
            }
        }
    }
    Ok(())
}

/// Applies the patches to the pod's annotations as injection does: the pod always ends up with an
/// annotation map (empty when it had none and nothing was added).
///
/// # Errors
/// As [`patch_pod`].
pub(crate) fn patch_pod_for_injection(
    pod: &mut Pod,
    patches: &[SidecarSetPatchPodMetadata],
) -> Result<(), Error> {
    let annotations = pod.metadata.annotations.get_or_insert_with(BTreeMap::new);
    apply_patches(annotations, patches).map_err(|error| merge_patch_error(pod, error))
}

/// Applies the patches to the pod's annotations (upstream's `PatchPodMetadata`). Returns whether anything
/// changed.
///
/// # Errors
/// [`Error::MergePatch`] naming the pod, key and values of a `MergePatchJson` that cannot be applied.
pub fn patch_pod(pod: &mut Pod, patches: &[SidecarSetPatchPodMetadata]) -> Result<bool, Error> {
    let mut annotations = pod.metadata.annotations.take().unwrap_or_default();
    let patched = patch_annotations(&mut annotations, patches);
    pod.metadata.annotations = Some(annotations);
    patched.map_err(|error| merge_patch_error(pod, error))
}

fn merge_patch_error(
    pod: &Pod,
    (key, value, patch, error): (String, String, String, MergePatchError),
) -> Error {
    Error::MergePatch {
        pod: crate::records::pod_key(pod),
        key,
        value,
        patch,
        reason: match error {
            MergePatchError::BadDocument => "invalid JSON document",
            MergePatchError::BadPatch => "invalid JSON patch",
        },
    }
}

/// Go's `jsonpatch.MergePatch(doc, patch)`: RFC 7386 on two objects; when either is not an object, the patch
/// itself (nulls pruned) if it is an object or array.
///
/// # Errors
/// [`MergePatchError`] as Go's library reports it.
pub fn merge_patch(document: &str, patch: &str) -> Result<String, MergePatchError> {
    let document: Value =
        serde_json::from_str(document).map_err(|_| MergePatchError::BadDocument)?;
    let patch: Value = serde_json::from_str(patch).map_err(|_| MergePatchError::BadPatch)?;
    if document.is_null() {
        return Err(MergePatchError::BadDocument);
    }
    if patch.is_null() {
        return Err(MergePatchError::BadPatch);
    }
    let result = match (document, patch) {
        (mut document @ Value::Object(_), patch @ Value::Object(_)) => {
            json_patch::merge(&mut document, &patch);
            document
        }
        (_, mut patch @ (Value::Object(_) | Value::Array(_))) => {
            prune_nulls(&mut patch);
            patch
        }
        _ => return Err(MergePatchError::BadPatch),
    };
    Ok(kruise_inplace::go_json::to_string_sorted(&result))
}

fn prune_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, field| !field.is_null());
            map.values_mut().for_each(prune_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(prune_nulls),
        _ => {}
    }
}

/// The `patchPodMetadata` whitelist (`{"rules":[{"selector":..., "allowedAnnotationKeyExprs":[...]}]}`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchMetadataWhitelist {
    /// The rules; a rule applies to the SidecarSets its selector matches (all when it has none).
    #[serde(default)]
    pub rules: Vec<WhitelistRule>,
}

/// One whitelist rule.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WhitelistRule {
    /// Which SidecarSets (by their labels) the rule is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
    /// Regular expressions (RE2 syntax, unanchored) of the annotation keys allowed.
    #[serde(default)]
    pub allowed_annotation_key_exprs: Vec<String>,
}

/// Why a SidecarSet's `patchPodMetadata` is rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WhitelistError {
    /// There is no whitelist (and the defaults gate is off).
    #[error("SidecarSet patch metadata whitelist not found")]
    NotFound,
    /// No rule applies to the SidecarSet (and the defaults gate is off).
    #[error("sidecarSet patch metadata annotation is not allowed")]
    NoRule,
    /// A key matches no allowed expression.
    #[error("sidecarSet patch metadata annotation({0}) is not allowed")]
    KeyNotAllowed(String),
    /// A rule's selector is invalid.
    #[error("whitelist rule selector: {0}")]
    Selector(String),
    /// A rule's expression is not a valid regular expression.
    #[error("whitelist expression {expression:?}: {reason}")]
    Expression {
        /// The expression.
        expression: String,
        /// What the parser said.
        reason: String,
    },
    /// The whitelist JSON does not parse.
    #[error("whitelist: {0}")]
    Parse(String),
}

impl PatchMetadataWhitelist {
    /// Parses the ConfigMap value.
    ///
    /// # Errors
    /// [`WhitelistError::Parse`] when it is not the whitelist JSON.
    pub fn parse(value: &str) -> Result<Self, WhitelistError> {
        serde_json::from_str(value).map_err(|error| WhitelistError::Parse(error.to_string()))
    }
}

/// Upstream's `ValidateSidecarSetPatchMetadataWhitelist`: every annotation key of every patch must match an
/// expression of a rule that applies to the SidecarSet. With `defaults_allowed` (gate
/// `SidecarSetPatchPodMetadataDefaultsAllowed`) a missing whitelist, or one with no rule for the SidecarSet,
/// allows everything.
///
/// # Errors
/// [`WhitelistError`] saying which key (or rule) is the problem.
pub fn validate_patch_metadata(
    sidecarset: &SidecarSet,
    whitelist: Option<&PatchMetadataWhitelist>,
    defaults_allowed: bool,
) -> Result<(), WhitelistError> {
    if sidecarset.spec.patch_pod_metadata.is_empty() {
        return Ok(());
    }
    let Some(whitelist) = whitelist else {
        return if defaults_allowed {
            Ok(())
        } else {
            Err(WhitelistError::NotFound)
        };
    };
    let empty = BTreeMap::new();
    let labels = sidecarset.metadata.labels.as_ref().unwrap_or(&empty);
    let mut expressions = Vec::new();
    for rule in &whitelist.rules {
        if let Some(selector) = &rule.selector {
            let matched = label_selector::matches(selector, labels)
                .map_err(|error| WhitelistError::Selector(error.to_string()))?;
            if !matched {
                continue;
            }
        }
        for expression in &rule.allowed_annotation_key_exprs {
            let regex =
                regex::Regex::new(expression).map_err(|error| WhitelistError::Expression {
                    expression: expression.clone(),
                    reason: error.to_string(),
                })?;
            expressions.push(regex);
        }
    }
    if expressions.is_empty() {
        return if defaults_allowed {
            Ok(())
        } else {
            Err(WhitelistError::NoRule)
        };
    }
    for patch in &sidecarset.spec.patch_pod_metadata {
        for key in patch.annotations.keys() {
            if !expressions.iter().any(|regex| regex.is_match(key)) {
                return Err(WhitelistError::KeyNotAllowed(key.clone()));
            }
        }
    }
    Ok(())
}

/// Annotation keys that this SidecarSet patches with a non-`Retain` policy and another SidecarSet also
/// patches with a non-`Retain` policy (upstream's webhook rejects such a SidecarSet), as `(key, other
/// SidecarSet)`.
#[must_use]
pub fn conflicting_patch_keys<'a>(
    sidecarset: &SidecarSet,
    others: impl IntoIterator<Item = &'a SidecarSet>,
) -> Vec<(String, String)> {
    let non_retain = |set: &SidecarSet| -> Vec<String> {
        set.spec
            .patch_pod_metadata
            .iter()
            .filter(|patch| {
                !matches!(
                    patch.patch_policy.as_ref(),
                    None | Some(SidecarSetPatchPolicy::Retain)
                )
            })
            .flat_map(|patch| patch.annotations.keys().cloned())
            .collect()
    };
    let mine = non_retain(sidecarset);
    let own_name = sidecarset.metadata.name.as_deref();
    let mut conflicts = Vec::new();
    for other in others {
        if other.metadata.name.as_deref() == own_name {
            continue;
        }
        let theirs = non_retain(other);
        for key in &mine {
            if theirs.contains(key) {
                conflicts.push((key.clone(), other.metadata.name.clone().unwrap_or_default()));
            }
        }
    }
    conflicts
}
