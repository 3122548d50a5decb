//! Deterministic identities a kubelet would report: image IDs per image, container IDs per container start,
//! addresses per node and pod. The same inputs always give the same strings, so tests can predict them.
//!
//! ```
//! use kruise_simulator::identity;
//!
//! let id = identity::image_id("nginx:1.25");
//! assert!(id.starts_with("docker-pullable://nginx@sha256:"));
//! assert_eq!(id, identity::image_id("nginx:1.25"));
//! assert_ne!(id, identity::image_id("nginx:1.26"));
//! assert_eq!(identity::reported_image("nginx"), "nginx:latest");
//! ```

use sha2::{Digest, Sha256};

/// The image as the container runtime reports it in `status.containerStatuses[].image`: the spec image, with
/// `:latest` appended when it has neither tag nor digest (what Docker reports, and what OpenKruise's
/// completion check `DefaultCheckInPlaceUpdateCompleted` compares against).
#[must_use]
pub fn reported_image(image: &str) -> String {
    match kruise_api::image::Reference::parse(image) {
        Some(reference) if reference.tag.is_none() && reference.digest.is_none() => {
            format!("{image}:latest")
        }
        _ => image.to_owned(),
    }
}

/// `docker-pullable://<repository>@sha256:<digest>`: the digest is the image's own when it has one, else
/// the SHA-256 of the image reference text (so every distinct image has its own ID, and the same image
/// always the same one).
#[must_use]
pub fn image_id(image: &str) -> String {
    let reported = reported_image(image);
    match kruise_api::image::Reference::parse(image) {
        Some(reference) => {
            let repository = match reference.domain {
                Some(domain) => format!("{domain}/{}", reference.path),
                None => reference.path.to_owned(),
            };
            match reference.digest {
                Some(digest) => format!("docker-pullable://{repository}@{digest}"),
                None => format!(
                    "docker-pullable://{repository}@sha256:{}",
                    hex_sha256(&reported)
                ),
            }
        }
        // Not a valid reference (the API server accepts any non-empty string): still deterministic.
        None => format!("docker-pullable://{image}@sha256:{}", hex_sha256(image)),
    }
}

/// `docker://<64 hex>`, unique per pod, container and start (`start` is the restart count of that start).
#[must_use]
pub fn container_id(pod_uid: &str, container: &str, start: i32) -> String {
    format!(
        "docker://{}",
        hex_sha256(&format!("{pod_uid}/{container}/{start}"))
    )
}

/// The InternalIP of the simulated node with this index: `172.16.<index / 250>.<index % 250 + 1>`.
#[must_use]
pub fn node_ip(index: usize) -> String {
    format!("172.16.{}.{}", (index / 250) % 256, index % 250 + 1)
}

/// A pod IP in `10.128.0.0/9`, derived from the pod's UID.
#[must_use]
pub fn pod_ip(pod_uid: &str) -> String {
    let digest = Sha256::digest(pod_uid.as_bytes());
    let byte = |index: usize| digest.get(index).copied().unwrap_or_default();
    format!(
        "10.{}.{}.{}",
        128 + byte(0) % 128,
        byte(1),
        byte(2) % 254 + 1
    )
}

fn hex_sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_ids_keep_the_repository_and_digest() {
        assert!(
            image_id("registry:5000/team/app:v1")
                .starts_with("docker-pullable://registry:5000/team/app@sha256:")
        );
        let digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        assert_eq!(
            image_id(&format!("nginx@{digest}")),
            format!("docker-pullable://nginx@{digest}")
        );
        assert_eq!(image_id("nginx"), image_id("nginx:latest"));
        assert!(
            image_id("Not A Reference").starts_with("docker-pullable://Not A Reference@sha256:")
        );
    }

    #[test]
    fn container_ids_differ_per_start() {
        let first = container_id("uid-1", "main", 0);
        assert_eq!(first.len(), "docker://".len() + 64);
        assert_ne!(first, container_id("uid-1", "main", 1));
        assert_ne!(first, container_id("uid-2", "main", 0));
        assert_ne!(first, container_id("uid-1", "sidecar", 0));
    }

    #[test]
    fn addresses_are_stable() {
        assert_eq!(node_ip(0), "172.16.0.1");
        assert_eq!(node_ip(251), "172.16.1.2");
        assert_eq!(pod_ip("a"), pod_ip("a"));
        assert!(pod_ip("a").starts_with("10."));
    }

    #[test]
    fn reported_images_add_latest_only_without_tag_or_digest() {
        assert_eq!(reported_image("nginx:1.25"), "nginx:1.25");
        assert_eq!(
            reported_image("registry:5000/img"),
            "registry:5000/img:latest"
        );
        let pinned =
            "nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        assert_eq!(reported_image(pinned), pinned);
    }
}
