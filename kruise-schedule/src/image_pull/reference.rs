//! Image names as NodeImage keys them: upstream's `NormalizeImageRefToNameTag` (docker's familiar name, and
//! the tag, `latest` by default, or the digest).
//!
//! ```
//! use kruise_schedule::image_pull::reference::{NameTag, normalize};
//!
//! assert_eq!(normalize("nginx").unwrap(), NameTag { name: "nginx".into(), tag: "latest".into() });
//! assert_eq!(normalize("docker.io/library/nginx:1.25").unwrap().name, "nginx");
//! let local = normalize("127.0.0.1:5000/kruise-test/busybox:v2").unwrap();
//! assert_eq!((local.name.as_str(), local.tag.as_str()), ("127.0.0.1:5000/kruise-test/busybox", "v2"));
//! assert_eq!(local.reference(), "127.0.0.1:5000/kruise-test/busybox:v2");
//! ```

use kruise_api::image::Reference;

/// An image split the way NodeImage stores it: `spec.images[name].tags[].tag`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NameTag {
    /// The familiar repository name (`nginx`, `quay.io/team/app`).
    pub name: String,
    /// The tag, or the digest (`sha256:...`) of a digested reference.
    pub tag: String,
}

impl NameTag {
    /// The reference to pull: `name:tag`, or `name@digest`.
    #[must_use]
    pub fn reference(&self) -> String {
        join(&self.name, &self.tag)
    }
}

/// `name:tag`, or `name@digest` when the tag is a digest.
#[must_use]
pub fn join(name: &str, tag: &str) -> String {
    if tag.contains(':') {
        format!("{name}@{tag}")
    } else {
        format!("{name}:{tag}")
    }
}

/// Why an image reference cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid image {0:?}")]
pub struct InvalidImage(pub String);

/// Splits an image reference into its familiar name and its tag (`latest` when unset; the digest when
/// the reference has one).
///
/// # Errors
/// [`InvalidImage`] when the text is not an image reference.
pub fn normalize(image: &str) -> Result<NameTag, InvalidImage> {
    let parsed = Reference::parse(image).ok_or_else(|| InvalidImage(image.to_owned()))?;
    let name = match parsed.domain {
        None | Some("docker.io" | "index.docker.io") => parsed
            .path
            .strip_prefix("library/")
            .filter(|rest| !rest.contains('/'))
            .unwrap_or(parsed.path)
            .to_owned(),
        Some(domain) => format!("{domain}/{}", parsed.path),
    };
    let tag = parsed.digest.or(parsed.tag).unwrap_or("latest").to_owned();
    Ok(NameTag { name, tag })
}

/// The registry host of a familiar name (`docker.io` when it has none), for matching credentials.
#[must_use]
pub fn registry(name: &str) -> &str {
    match name.split_once('/') {
        Some((first, _)) if first.contains(['.', ':']) || first == "localhost" => first,
        _ => "docker.io",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let cases = [
            ("busybox", "busybox", "latest"),
            ("library/busybox:1.35", "busybox", "1.35"),
            ("docker.io/team/app:v1", "team/app", "v1"),
            (
                "localhost/kruise-test/busybox:1.35",
                "localhost/kruise-test/busybox",
                "1.35",
            ),
            ("quay.io/a/b", "quay.io/a/b", "latest"),
        ];
        for (image, name, tag) in cases {
            let got = normalize(image).unwrap();
            assert_eq!(
                (got.name.as_str(), got.tag.as_str()),
                (name, tag),
                "{image}"
            );
        }
        let pinned = normalize(&format!("nginx:1.25@{digest}")).unwrap();
        assert_eq!(pinned.tag, digest);
        assert_eq!(pinned.reference(), format!("nginx@{digest}"));
        assert!(normalize("Not Valid").is_err());
        assert!(normalize("").is_err());
    }

    #[test]
    fn registries() {
        assert_eq!(registry("127.0.0.1:5000/x/y"), "127.0.0.1:5000");
        assert_eq!(registry("localhost/x"), "localhost");
        assert_eq!(registry("team/app"), "docker.io");
        assert_eq!(registry("nginx"), "docker.io");
    }
}
