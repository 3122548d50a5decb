//! Container image references, parsed with the grammar of the docker distribution `reference` package (what
//! Kubernetes uses to default `imagePullPolicy` and OpenKruise to compare sidecar images).
//!
//! ```
//! use kruise_api::image::Reference;
//!
//! let reference = Reference::parse("registry:5000/team/app:v1@sha256:0123456789abcdef0123456789abcdef").unwrap();
//! assert_eq!(reference.domain, Some("registry:5000"));
//! assert_eq!(reference.path, "team/app");
//! assert_eq!(reference.tag, Some("v1"));
//! assert!(Reference::parse("Upper/Case").is_none());
//! ```

/// A parsed image reference; the parts borrow from the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reference<'a> {
    /// The registry host (and port), when the first path component is one.
    pub domain: Option<&'a str>,
    /// The repository path (without the registry).
    pub path: &'a str,
    /// The tag, if any.
    pub tag: Option<&'a str>,
    /// The digest (`algorithm:hex`), if any.
    pub digest: Option<&'a str>,
}

impl<'a> Reference<'a> {
    /// Parses `[domain/]path[:tag][@digest]`; `None` when the text is not a valid reference.
    #[must_use]
    pub fn parse(text: &'a str) -> Option<Self> {
        if text.is_empty() {
            return None;
        }
        let (rest, digest) = match text.split_once('@') {
            Some((rest, digest)) => (rest, Some(digest)),
            None => (text, None),
        };
        if let Some(digest) = digest
            && !is_digest(digest)
        {
            return None;
        }
        let last_slash = rest.rfind('/').map_or(0, |index| index + 1);
        let (name, tag) = match rest.get(last_slash..).and_then(|last| last.rfind(':')) {
            Some(colon) => {
                let at = last_slash + colon;
                (rest.get(..at)?, Some(rest.get(at + 1..)?))
            }
            None => (rest, None),
        };
        if let Some(tag) = tag
            && !is_tag(tag)
        {
            return None;
        }
        if name.len() > 255 {
            return None;
        }
        let (domain, path) = match name.split_once('/') {
            Some((first, path))
                if first.contains(['.', ':'])
                    || first == "localhost"
                    || first.to_lowercase() != first =>
            {
                (Some(first), path)
            }
            _ => (None, name),
        };
        if let Some(domain) = domain
            && !is_domain(domain)
        {
            return None;
        }
        if !path.split('/').all(is_path_component) {
            return None;
        }
        if domain.is_none() && path.len() == 64 && path.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(Self {
            domain,
            path,
            tag,
            digest,
        })
    }

    /// The tag Kubernetes reads from an image when defaulting `imagePullPolicy`: the explicit tag, `latest`
    /// when there is neither tag nor digest, and `""` for a digest-only or an invalid reference.
    #[must_use]
    pub fn kubernetes_tag(image: &'a str) -> &'a str {
        match Self::parse(image) {
            Some(Self { tag: Some(tag), .. }) => tag,
            Some(Self {
                tag: None,
                digest: None,
                ..
            }) => "latest",
            _ => "",
        }
    }
}

fn is_tag(tag: &str) -> bool {
    let bytes = tag.as_bytes();
    let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    !bytes.is_empty()
        && bytes.len() <= 128
        && bytes.first().is_some_and(word)
        && bytes.iter().all(|b| word(b) || matches!(b, b'.' | b'-'))
}

fn is_digest(digest: &str) -> bool {
    let Some((algorithm, encoded)) = digest.split_once(':') else {
        return false;
    };
    let algorithm_ok = !algorithm.is_empty()
        && algorithm.split(['-', '_', '+', '.']).all(|part| {
            part.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
                && part.bytes().all(|b| b.is_ascii_alphanumeric())
        });
    algorithm_ok && encoded.len() >= 32 && encoded.bytes().all(|b| b.is_ascii_hexdigit())
}

fn is_domain(domain: &str) -> bool {
    let (host, port) = match domain.rsplit_once(':') {
        Some((host, port)) if !domain.starts_with('[') || host.ends_with(']') => (host, Some(port)),
        _ => (domain, None),
    };
    if let Some(port) = port
        && (port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()))
    {
        return false;
    }
    if let Some(ipv6) = host
        .strip_prefix('[')
        .and_then(|rest| rest.strip_suffix(']'))
    {
        return !ipv6.is_empty() && ipv6.bytes().all(|b| b.is_ascii_hexdigit() || b == b':');
    }
    !host.is_empty()
        && host.split('.').all(|component| {
            let bytes = component.as_bytes();
            bytes.first().is_some_and(u8::is_ascii_alphanumeric)
                && bytes.last().is_some_and(u8::is_ascii_alphanumeric)
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        })
}

/// `[a-z0-9]+` runs joined by `.`, `_`, `__` or any number of `-`.
fn is_path_component(component: &str) -> bool {
    let lower_alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let separators: Vec<&str> = component.split(lower_alnum).collect();
    let (Some(first), Some(last)) = (separators.first(), separators.last()) else {
        return false;
    };
    !component.is_empty()
        && first.is_empty()
        && last.is_empty()
        && separators.iter().all(|separator| {
            matches!(*separator, "" | "." | "_" | "__") || separator.bytes().all(|b| b == b'-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_references() {
        let cases = [
            ("nginx", None, "nginx", None, None),
            ("nginx:1.25", None, "nginx", Some("1.25"), None),
            (
                "library/nginx:latest",
                None,
                "library/nginx",
                Some("latest"),
                None,
            ),
            (
                "docker.io/library/nginx",
                Some("docker.io"),
                "library/nginx",
                None,
                None,
            ),
            (
                "registry:5000/app",
                Some("registry:5000"),
                "app",
                None,
                None,
            ),
            (
                "localhost/app:v1",
                Some("localhost"),
                "app",
                Some("v1"),
                None,
            ),
            ("[::1]:5000/app", Some("[::1]:5000"), "app", None, None),
            (
                "a/b_c__d.e---f:tag_1.2-3",
                None,
                "a/b_c__d.e---f",
                Some("tag_1.2-3"),
                None,
            ),
        ];
        for (text, domain, path, tag, digest) in cases {
            let reference = Reference::parse(text).unwrap_or_else(|| panic!("{text} should parse"));
            assert_eq!(
                (
                    reference.domain,
                    reference.path,
                    reference.tag,
                    reference.digest
                ),
                (domain, path, tag, digest),
                "{text}"
            );
        }
        let digest = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        let with_digest = format!("nginx@{digest}");
        assert_eq!(Reference::parse(&with_digest).unwrap().digest, Some(digest));
    }

    #[test]
    fn invalid_references() {
        for text in [
            "",
            "Nginx",
            "nginx:",
            "nginx:-bad",
            "nginx@sha256:short",
            "a//b",
            "a/-b",
            "a/b-",
            "registry:port/app",
            ":tag",
            "nginx@",
            "a/b...c",
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ] {
            assert_eq!(Reference::parse(text), None, "{text} should not parse");
        }
    }

    #[test]
    fn kubernetes_tags() {
        assert_eq!(Reference::kubernetes_tag("nginx"), "latest");
        assert_eq!(Reference::kubernetes_tag("nginx:latest"), "latest");
        assert_eq!(Reference::kubernetes_tag("nginx:1.25"), "1.25");
        assert_eq!(Reference::kubernetes_tag("registry:5000/nginx"), "latest");
        let digest_only =
            "nginx@sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(Reference::kubernetes_tag(digest_only), "");
        assert_eq!(
            Reference::kubernetes_tag(""),
            "",
            "invalid: Kubernetes then defaults IfNotPresent"
        );
        assert_eq!(Reference::kubernetes_tag("NGINX"), "");
    }
}
