//! ControllerRevisions of CloneSet and Advanced StatefulSet: their data and names (Kubernetes
//! `controller/history`).
//!
//! The data is `{"spec":{"template":{<pod template>,"$patch":"replace"}}}` exactly as Go writes it: the
//! template with Go's field rules (the crate's tables of Go's struct definitions), every key sorted, Go escaping ([`crate::go_json`]).
//!
//! The hash is FNV-1 (not 1a), 32 bits, over the revision's raw data followed by the decimal collision count
//! (when one is given: Kruise always gives one, so `0` is appended). The `u32` is printed in decimal and every
//! character of that text is safe-encoded into the alphabet `bcdfghjklmnpqrstvwxz2456789` (so digits `0..9` become
//! `4 5 6 7 8 9 b c d f`). The name is `<parent>-<hash>`, the parent truncated to 223 bytes.
//!
//! ```
//! use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
//! use kruise_inplace::revision;
//!
//! let template = PodTemplateSpec {
//!     spec: Some(PodSpec {
//!         containers: vec![Container { name: "main".into(), image: Some("nginx:1.25".into()), ..Default::default() }],
//!         ..Default::default()
//!     }),
//!     ..Default::default()
//! };
//! let revision = revision::for_template("demo", &template, 0).unwrap();
//! assert_eq!(
//!     revision.data,
//!     r#"{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null},"spec":{"containers":[{"image":"nginx:1.25","name":"main","resources":{}}]}}}}"#
//! );
//! assert_eq!(revision.name, format!("demo-{}", revision.hash));
//! ```

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
use serde_json::{Map, Value};

use crate::go_json;
use crate::go_types::{self, GoJsonError};

/// The alphabet Kubernetes' `rand.SafeEncodeString` maps bytes into (byte value modulo 27).
pub const SAFE_ALPHABET: &[u8; 27] = b"bcdfghjklmnpqrstvwxz2456789";

/// The longest parent-name prefix kept in a revision name.
pub const MAX_PARENT_NAME_BYTES: usize = 223;

/// FNV-1 32-bit of `bytes`, continuing from `state` (start with [`FNV32_OFFSET_BASIS`]).
#[must_use]
pub fn fnv1_32(state: u32, bytes: &[u8]) -> u32 {
    bytes.iter().fold(state, |hash, byte| {
        hash.wrapping_mul(FNV32_PRIME) ^ u32::from(*byte)
    })
}

/// The FNV 32-bit offset basis.
pub const FNV32_OFFSET_BASIS: u32 = 0x811c_9dc5;
const FNV32_PRIME: u32 = 0x0100_0193;

/// Kubernetes' `rand.SafeEncodeString`: each byte `b` becomes `SAFE_ALPHABET[b % 27]`.
#[must_use]
pub fn safe_encode(text: &str) -> String {
    text.bytes()
        .map(|byte| {
            let index = usize::from(byte) % SAFE_ALPHABET.len();
            SAFE_ALPHABET
                .get(index)
                .map_or('b', |encoded| char::from(*encoded))
        })
        .collect()
}

/// The revision hash of `data` (the revision's `data` JSON bytes) with an optional collision count.
#[must_use]
pub fn hash(data: &[u8], collision_count: Option<i32>) -> String {
    let mut state = fnv1_32(FNV32_OFFSET_BASIS, data);
    if let Some(count) = collision_count {
        state = fnv1_32(state, count.to_string().as_bytes());
    }
    safe_encode(&state.to_string())
}

/// `<parent>-<hash>`, with the parent name cut to [`MAX_PARENT_NAME_BYTES`] bytes (at a character boundary).
#[must_use]
pub fn name(parent: &str, hash: &str) -> String {
    let mut end = parent.len().min(MAX_PARENT_NAME_BYTES);
    while !parent.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}-{hash}", parent.get(..end).unwrap_or_default())
}

/// Why revision data cannot be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RevisionError {
    /// The template does not serialise to a JSON object.
    #[error("pod template: {0}")]
    Template(String),
    /// A value of the template cannot be written as Go writes it (an invalid quantity).
    #[error("pod template{}", .0)]
    GoJson(#[from] GoJsonError),
}

/// A revision of a pod template: its data (the bytes Go stores in `ControllerRevision.data`), hash and name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Revision {
    /// `<parent>-<hash>`.
    pub name: String,
    /// The safe-encoded FNV-1 hash of the data and collision count.
    pub hash: String,
    /// The JSON data, byte for byte as Go writes it.
    pub data: String,
}

/// The data of a CloneSet / Advanced StatefulSet revision for a pod template, as a JSON value (keys of a
/// `serde_json` map are sorted already; write it with [`go_json::to_string_sorted`] for Go's bytes).
///
/// # Errors
/// [`RevisionError`] when the template holds an invalid quantity.
pub fn template_data_value(template: &PodTemplateSpec) -> Result<Value, RevisionError> {
    let mut value = serde_json::to_value(template)
        .map_err(|error| RevisionError::Template(error.to_string()))?;
    go_types::normalize(&mut value, &go_types::POD_TEMPLATE_SPEC)?;
    let Value::Object(mut fields) = value else {
        return Err(RevisionError::Template("not a JSON object".to_owned()));
    };
    fields.insert("$patch".to_owned(), Value::String("replace".to_owned()));
    let mut spec = Map::new();
    spec.insert("template".to_owned(), Value::Object(fields));
    let mut data = Map::new();
    data.insert("spec".to_owned(), Value::Object(spec));
    Ok(Value::Object(data))
}

/// The data of a CloneSet / Advanced StatefulSet revision for a pod template, byte for byte as Go writes it.
///
/// # Errors
/// [`RevisionError`] when the template holds an invalid quantity.
pub fn template_data(template: &PodTemplateSpec) -> Result<String, RevisionError> {
    Ok(go_json::to_string_sorted(&template_data_value(template)?))
}

/// The revision of a pod template for a workload named `parent`, with the given collision count (the
/// workload's `status.collisionCount`, 0 when unset).
///
/// # Errors
/// [`RevisionError`] when the template holds an invalid quantity.
pub fn for_template(
    parent: &str,
    template: &PodTemplateSpec,
    collision_count: i32,
) -> Result<Revision, RevisionError> {
    let data = template_data(template)?;
    let hash = hash(data.as_bytes(), Some(collision_count));
    Ok(Revision {
        name: name(parent, &hash),
        hash,
        data,
    })
}

impl Revision {
    /// A `ControllerRevision` object for this revision, as `history.NewControllerRevision` builds it: the
    /// template's labels plus `controller.kubernetes.io/hash`, the data and the revision number. The caller adds
    /// the namespace, owner reference and (for CloneSet) the workload's annotations.
    ///
    /// The `data` field is a parsed JSON value; `k8s-openapi` writes it back with `serde_json`, which escapes
    /// `<`, `>` and `&` differently from Go. Send [`Self::data`] verbatim where byte equality with Go matters.
    #[must_use]
    pub fn to_controller_revision(
        &self,
        template_labels: Option<&BTreeMap<String, String>>,
        number: i64,
    ) -> ControllerRevision {
        let mut labels = template_labels.cloned().unwrap_or_default();
        labels.insert(
            kruise_api::keys::kubernetes::CONTROLLER_REVISION_HASH_OF_REVISION_LABEL.to_owned(),
            self.hash.clone(),
        );
        let metadata = ObjectMeta {
            name: Some(self.name.clone()),
            labels: Some(labels),
            ..ObjectMeta::default()
        };
        let data = RawExtension(serde_json::from_str(&self.data).unwrap_or(Value::Null));
        controller_revision(metadata, data, number)
    }
}

// `ControllerRevision.data` is optional up to Kubernetes 1.36 and required from 1.37 (where `revision` became
// optional).
k8s_openapi::k8s_if_le_1_36! {
    fn controller_revision(metadata: ObjectMeta, data: RawExtension, number: i64) -> ControllerRevision {
        ControllerRevision { metadata, data: Some(data), revision: number }
    }
}
k8s_openapi::k8s_if_ge_1_37! {
    fn controller_revision(metadata: ObjectMeta, data: RawExtension, number: i64) -> ControllerRevision {
        ControllerRevision { metadata, data, revision: Some(number) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1_reference_values() {
        // FNV-1 32-bit test vectors (Fowler/Noll/Vo reference set).
        assert_eq!(fnv1_32(FNV32_OFFSET_BASIS, b""), 0x811c_9dc5);
        assert_eq!(fnv1_32(FNV32_OFFSET_BASIS, b"a"), 0x050c_5d7e);
        assert_eq!(fnv1_32(FNV32_OFFSET_BASIS, b"foobar"), 0x31f0_b262);
    }

    #[test]
    fn safe_encoding_of_digits() {
        assert_eq!(safe_encode("0123456789"), "456789bcdf");
        assert_eq!(safe_encode("abcdef"), "vwxz24");
    }

    #[test]
    fn hash_appends_the_collision_count() {
        let data = b"{}";
        let without = hash(data, None);
        assert_eq!(
            without,
            safe_encode(&fnv1_32(FNV32_OFFSET_BASIS, data).to_string())
        );
        let with_zero = hash(data, Some(0));
        assert_eq!(
            with_zero,
            safe_encode(&fnv1_32(FNV32_OFFSET_BASIS, b"{}0").to_string())
        );
        assert_ne!(with_zero, hash(data, Some(1)));
        assert!(with_zero.bytes().all(|b| SAFE_ALPHABET.contains(&b)));
    }

    #[test]
    fn names_truncate_the_parent() {
        assert_eq!(name("demo", "abc"), "demo-abc");
        let long = "x".repeat(300);
        assert_eq!(name(&long, "h").len(), MAX_PARENT_NAME_BYTES + 2);
        let multibyte = "é".repeat(150);
        assert!(name(&multibyte, "h").ends_with("-h"));
    }
}
