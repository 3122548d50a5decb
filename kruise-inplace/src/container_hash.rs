//! Kubelet's container hashes, which kruise-daemon reports in `apps.kruise.io/runtime-containers-meta` and the
//! completion check compares (`plainHash`).
//!
//! Both are Kubernetes' `hashutil.DeepHashObject` over JSON bytes: FNV-1a 32 over go-spew's `%#v` rendering of
//! a `[]byte`, which is `([]uint8)[b0 b1 ...]` with the bytes in decimal.
//!
//! * Kubelet 1.31 and later ([`hash_v1_31`]) hash the JSON of `{"image": ..., "name": ...}` only.
//! * Kubelet 1.30 and earlier ([`hash_before_v1_31`]) hash the JSON of the whole container in Go's field order
//!   and omission rules (the crate's tables of Go's struct definitions, as [`crate::go_json::write_container`]
//!   writes it), which this crate reproduces for every field of `Container` known to Kubernetes 1.33 (a
//!   container using a field added after the kubelet's version hashes differently there, as it would for
//!   upstream).
//!
//! ```
//! use k8s_openapi::api::core::v1::{Container, ContainerPort};
//! use kruise_inplace::container_hash;
//!
//! // Kubernetes' own TestHashContainer vectors, for both kubelet generations.
//! let container = Container {
//!     name: "test_container".into(),
//!     image: Some("foo/image:v1".into()),
//!     args: Some(vec!["/bin/sh".into(), "-c".into(), "echo abc".into()]),
//!     ports: Some(vec![ContainerPort { container_port: 8001, ..Default::default() }]),
//!     ..Default::default()
//! };
//! assert_eq!(container_hash::hash_v1_31(&container), 0x8e45_cbd0);
//! assert_eq!(container_hash::hash_before_v1_31(&container), Some(0x3c42_280f));
//! ```

use k8s_openapi::api::core::v1::Container;

use crate::go_json;
use crate::go_types;

const FNV1A_OFFSET: u32 = 0x811c_9dc5;
const FNV_PRIME: u32 = 0x0100_0193;

fn fnv1a(state: u32, bytes: &[u8]) -> u32 {
    bytes.iter().fold(state, |hash, byte| {
        (hash ^ u32::from(*byte)).wrapping_mul(FNV_PRIME)
    })
}

/// `DeepHashObject` of a byte slice: FNV-1a 32 over `([]uint8)[b0 b1 ...]`.
#[must_use]
pub fn deep_hash_bytes(bytes: &[u8]) -> u32 {
    let mut state = fnv1a(FNV1A_OFFSET, b"([]uint8)[");
    let mut digits = [0_u8; 3];
    for (index, byte) in bytes.iter().enumerate() {
        if index > 0 {
            state = fnv1a(state, b" ");
        }
        let mut len = 0;
        let mut value = *byte;
        loop {
            if let Some(slot) = digits.get_mut(len) {
                *slot = b'0' + value % 10;
            }
            len += 1;
            value /= 10;
            if value == 0 {
                break;
            }
        }
        for position in (0..len).rev() {
            state = fnv1a(state, digits.get(position..=position).unwrap_or_default());
        }
    }
    fnv1a(state, b"]")
}

/// Kubelet 1.31+ `HashContainer`: name and image only.
#[must_use]
pub fn hash_v1_31(container: &Container) -> u64 {
    let mut json = String::with_capacity(64);
    json.push_str("{\"image\":");
    go_json::write_str(&mut json, container.image.as_deref().unwrap_or(""));
    json.push_str(",\"name\":");
    go_json::write_str(&mut json, &container.name);
    json.push('}');
    u64::from(deep_hash_bytes(json.as_bytes()))
}

/// Kubelet 1.30-and-earlier `HashContainer`: the whole container as Go writes it. `None` when the container
/// holds a value Go could not have written (an invalid quantity).
#[must_use]
pub fn hash_before_v1_31(container: &Container) -> Option<u64> {
    let mut value = serde_json::to_value(container).ok()?;
    go_types::normalize(&mut value, &go_types::CONTAINER).ok()?;
    let mut json = String::with_capacity(512);
    go_types::write_in_go_order(&mut json, &value, &go_types::CONTAINER);
    Some(u64::from(deep_hash_bytes(json.as_bytes())))
}

/// Whether a reported plain hash matches the container under either kubelet generation (upstream accepts
/// both).
#[must_use]
pub fn plain_hash_matches(container: &Container, reported: u64) -> bool {
    hash_v1_31(container) == reported || hash_before_v1_31(container) == Some(reported)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_reference_values() {
        assert_eq!(fnv1a(FNV1A_OFFSET, b""), 0x811c_9dc5);
        assert_eq!(fnv1a(FNV1A_OFFSET, b"a"), 0xe40c_292c);
        assert_eq!(fnv1a(FNV1A_OFFSET, b"foobar"), 0xbf9c_f968);
    }

    #[test]
    fn spew_rendering() {
        // "([]uint8)[123 125]" for `{}`
        assert_eq!(
            deep_hash_bytes(b"{}"),
            fnv1a(FNV1A_OFFSET, b"([]uint8)[123 125]")
        );
        assert_eq!(
            deep_hash_bytes(&[0, 9, 10, 255]),
            fnv1a(FNV1A_OFFSET, b"([]uint8)[0 9 10 255]")
        );
        assert_eq!(deep_hash_bytes(b""), fnv1a(FNV1A_OFFSET, b"([]uint8)[]"));
    }
}
