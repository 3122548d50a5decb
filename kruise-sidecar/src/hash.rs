//! The SidecarSet hash encoding (spec 3c): `SafeEncodeString(lowercase hex(SHA-256(json)))`, 64 characters.
//!
//! The JSON is Go's encoding of `{"containers": ..., "initContainers": ...}` (keys sorted, struct fields in Go
//! order, Go's omission rules); producing it from a SidecarSet is part of the SidecarSet issue. This module
//! turns those bytes into the hash.

use sha2::{Digest, Sha256};

/// The SidecarSet hash of already-encoded JSON bytes.
#[must_use]
pub fn hash_of_json(json: &[u8]) -> String {
    let digest = Sha256::digest(json);
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    kruise_inplace::revision::safe_encode(&hex)
}

#[cfg(test)]
mod tests {
    use super::hash_of_json;

    const CONTAINER: &str = r#"{"name":"container1","image":"test-image","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}"#;
    const NATIVE_SIDECAR: &str = r#"{"name":"container1","image":"test-image","resources":{},"restartPolicy":"Always","upgradeStrategy":{},"shareVolumePolicy":{}}"#;

    /// The four vectors of spec 3c (upstream's own expected values).
    #[test]
    fn upstream_vectors() {
        let containers_only = format!(r#"{{"containers":[{CONTAINER}]}}"#);
        assert_eq!(
            hash_of_json(containers_only.as_bytes()),
            "w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78"
        );
        let with_init =
            format!(r#"{{"containers":[{CONTAINER}],"initContainers":[{NATIVE_SIDECAR}]}}"#);
        assert_eq!(
            hash_of_json(with_init.as_bytes()),
            "4xwx4d4844vd4v9x79wb4xbxf4xb29475cc4446v8cz2c2f2f5c5bw448vd42z8w"
        );
        let strip = |json: &str| json.replace(r#""image":"test-image","#, "");
        assert_eq!(
            hash_of_json(strip(&containers_only).as_bytes()),
            "8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759"
        );
        assert_eq!(
            hash_of_json(strip(&with_init).as_bytes()),
            "5725fw8bwbx249bw57v5892c847dzf48bww9zb7c86xb95264fdz26654847b2c8"
        );
    }
}
