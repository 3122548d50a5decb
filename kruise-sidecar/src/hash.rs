//! The SidecarSet hashes (upstream `SidecarSetHash`, `SidecarSetHashWithoutImage`):
//! `SafeEncodeString(lowercase hex(SHA-256(json)))`, 64 characters.
//!
//! The JSON is Go's encoding of the map `{"containers": spec.containers}`, plus `"initContainers":
//! spec.initContainers` (all of them) when at least one init container is a native sidecar (`restartPolicy:
//! Always`); keys sorted, each element written in Go's field order with Go's omission rules. The hash
//! without image blanks every container's and init container's image first. Upstream computes both in its SidecarSet webhook, **after**
//! defaulting, and stores them in the SidecarSet's annotations; [`recorded_or_computed`] reads those and
//! computes only what is missing.

use std::borrow::Cow;

use kruise_api::apps::v1beta1::{SidecarContainer, SidecarSet};
use kruise_api::keys::sidecarset as keys;
use kruise_inplace::go_json::GoJsonError;
use sha2::{Digest, Sha256};

use crate::encoding::write_sidecar_list;
use crate::error::Error;

/// A SidecarSet's two hashes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SidecarSetHashes {
    /// `kruise.io/sidecarset-hash`.
    pub hash: String,
    /// `kruise.io/sidecarset-hash-without-image`.
    pub without_image: String,
}

/// The SidecarSet hash of already-encoded JSON bytes.
#[must_use]
pub fn hash_of_json(json: &[u8]) -> String {
    let digest = Sha256::digest(json);
    let hex: String = digest.iter().map(|byte| format!("{byte:02x}")).collect();
    kruise_inplace::revision::safe_encode(&hex)
}

/// Whether an init container is a native sidecar (`restartPolicy: Always`).
#[must_use]
pub fn is_native_sidecar(sidecar: &SidecarContainer) -> bool {
    sidecar.container.restart_policy.as_deref() == Some("Always")
}

/// The JSON the hash is computed from.
///
/// # Errors
/// A quantity of a container does not parse (the path names the list and index).
pub fn hash_input(
    containers: &[SidecarContainer],
    init_containers: &[SidecarContainer],
    blank_images: bool,
) -> Result<String, GoJsonError> {
    let mut json = String::with_capacity(512 * (containers.len() + 1));
    json.push_str("{\"containers\":");
    write_sidecar_list(&mut json, containers, blank_images).map_err(|error| GoJsonError {
        path: format!("/containers{}", error.path),
        source: error.source,
    })?;
    if init_containers.iter().any(is_native_sidecar) {
        json.push_str(",\"initContainers\":");
        write_sidecar_list(&mut json, init_containers, blank_images).map_err(|error| {
            GoJsonError {
                path: format!("/initContainers{}", error.path),
                source: error.source,
            }
        })?;
    }
    json.push('}');
    Ok(json)
}

/// Both hashes of a SidecarSet's containers, computed from the object as given (apply
/// [`kruise_api::defaults::ApplyDefaults`] first to get what upstream's webhook stores).
///
/// # Errors
/// [`Error::Encoding`] when a container holds an invalid quantity.
pub fn compute(sidecarset: &SidecarSet) -> Result<SidecarSetHashes, Error> {
    let spec = &sidecarset.spec;
    let encoding = |source| Error::Encoding {
        sidecarset: name_of(sidecarset).to_owned(),
        source,
    };
    let with = hash_input(&spec.containers, &spec.init_containers, false).map_err(encoding)?;
    let without = hash_input(&spec.containers, &spec.init_containers, true).map_err(encoding)?;
    Ok(SidecarSetHashes {
        hash: hash_of_json(with.as_bytes()),
        without_image: hash_of_json(without.as_bytes()),
    })
}

/// The hashes recorded in the SidecarSet's annotations (what upstream reads everywhere), each computed with
/// [`compute`] when its annotation is absent or empty (a SidecarSet that never went through the webhook).
///
/// # Errors
/// [`Error::Encoding`] when a missing hash cannot be computed.
pub fn recorded_or_computed(sidecarset: &SidecarSet) -> Result<SidecarSetHashes, Error> {
    let (hash, without_image) = recorded_or_computed_ref(sidecarset)?;
    Ok(SidecarSetHashes {
        hash: hash.into_owned(),
        without_image: without_image.into_owned(),
    })
}

/// [`recorded_or_computed`], borrowing the recorded hashes: `(hash, hash without image)`.
pub(crate) fn recorded_or_computed_ref(
    sidecarset: &SidecarSet,
) -> Result<(Cow<'_, str>, Cow<'_, str>), Error> {
    let recorded = |key: &str| {
        sidecarset
            .metadata
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(key))
            .filter(|value| !value.is_empty())
            .map(|value| Cow::Borrowed(value.as_str()))
    };
    match (
        recorded(keys::HASH_ANNOTATION),
        recorded(keys::HASH_WITHOUT_IMAGE_ANNOTATION),
    ) {
        (Some(hash), Some(without_image)) => Ok((hash, without_image)),
        (hash, without_image) => {
            let computed = compute(sidecarset)?;
            Ok((
                hash.unwrap_or(Cow::Owned(computed.hash)),
                without_image.unwrap_or(Cow::Owned(computed.without_image)),
            ))
        }
    }
}

/// Writes both hashes into the SidecarSet's annotations (what upstream's SidecarSet webhook does on create and
/// update).
///
/// # Errors
/// [`Error::Encoding`] when a container holds an invalid quantity.
pub fn annotate(sidecarset: &mut SidecarSet) -> Result<SidecarSetHashes, Error> {
    let hashes = compute(sidecarset)?;
    let annotations = sidecarset
        .metadata
        .annotations
        .get_or_insert_with(Default::default);
    annotations.insert(keys::HASH_ANNOTATION.to_owned(), hashes.hash.clone());
    annotations.insert(
        keys::HASH_WITHOUT_IMAGE_ANNOTATION.to_owned(),
        hashes.without_image.clone(),
    );
    Ok(hashes)
}

pub(crate) fn name_of(sidecarset: &SidecarSet) -> &str {
    sidecarset.metadata.name.as_deref().unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONTAINER: &str = r#"{"name":"container1","image":"test-image","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}"#;
    const NATIVE_SIDECAR: &str = r#"{"name":"container1","image":"test-image","resources":{},"restartPolicy":"Always","upgradeStrategy":{},"shareVolumePolicy":{}}"#;

    /// Upstream's own four expected hash values, from the bytes.
    #[test]
    fn upstream_vectors_from_bytes() {
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
