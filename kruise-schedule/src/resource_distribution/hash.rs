//! The hash of a distributed resource (upstream's `hashResource`): the SHA-256, in lowercase hex, of the
//! bytes of `spec.resource` as the API server serves them, which is what upstream's controller reads into
//! the `RawExtension` it hashes. The API server keeps a custom resource as untyped JSON and writes it with
//! Go's `encoding/json`: compact, object keys sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped
//! ([`kruise_inplace::go_json`]). So a copy written by the Go controller and one written here carry the same
//! `kruise.io/resourcedistribution.resource.hashcode` and neither rewrites the other's copies.
//!
//! ```
//! use kruise_schedule::resource_distribution::hash::resource_hash;
//!
//! let a = serde_json::json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "x"}});
//! let b = serde_json::json!({"apiVersion": "v1", "metadata": {"name": "x"}, "kind": "ConfigMap"});
//! assert_eq!(resource_hash(&a), resource_hash(&b));
//! assert_eq!(resource_hash(&a).len(), 64);
//! ```

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The hash code of `resource` (the value of `spec.resource`).
#[must_use]
pub fn resource_hash(resource: &Value) -> String {
    let json = kruise_inplace::go_json::to_string_sorted(resource);
    Sha256::digest(json.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}
