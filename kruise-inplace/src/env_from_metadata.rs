//! Env vars that read pod labels or annotations through `fieldRef` (upstream `pkg/util/containermeta`).
//!
//! An env var counts when its literal `value` is empty, it has `valueFrom.fieldRef`, its name is not one of the
//! SidecarSet version envs (`SIDECARSET_VERSION`, `SIDECARSET_VERSION_ALT`), and its `fieldPath` is subscripted:
//! `metadata.labels['<key>']` or `metadata.annotations['<key>']`.

use k8s_openapi::api::core::v1::Container;
use kruise_api::keys::sidecarset::{VERSION_ALT_ENV, VERSION_ENV};
use serde_json::Value;

use crate::container_hash;
use crate::go_json;

/// `metadata.labels`, the field path prefix of labels.
pub const LABELS_PATH: &str = "metadata.labels";
/// `metadata.annotations`, the field path prefix of annotations.
pub const ANNOTATIONS_PATH: &str = "metadata.annotations";

/// Kubernetes' `fieldpath.SplitMaybeSubscriptedPath`: `"metadata.labels['k']"` is `("metadata.labels", "k")`;
/// an unsubscripted path is `None`.
#[must_use]
pub fn split_subscripted_path(field_path: &str) -> Option<(&str, &str)> {
    let inner = field_path.strip_suffix("']")?;
    let (path, key) = inner.split_once("['")?;
    (!path.is_empty()).then_some((path, key))
}

/// The `(path, key)` an env var reads from pod metadata, if it is one that counts (see the module docs).
#[must_use]
pub fn metadata_reference<'a>(
    name: &str,
    value: Option<&str>,
    field_path: Option<&'a str>,
) -> Option<(&'a str, &'a str)> {
    if value.is_some_and(|value| !value.is_empty())
        || name == VERSION_ENV
        || name == VERSION_ALT_ENV
    {
        return None;
    }
    split_subscripted_path(field_path?)
}

/// Whether a container (as JSON) has an env var reading `path['key']`.
pub(crate) fn json_container_references(container: &Value, path: &str, key: &str) -> bool {
    let Some(Value::Array(env)) = container.get("env") else {
        return false;
    };
    env.iter().any(|var| {
        let name = var.get("name").and_then(Value::as_str).unwrap_or("");
        let value = var.get("value").and_then(Value::as_str);
        let field_path = var
            .get("valueFrom")
            .and_then(|from| from.get("fieldRef"))
            .and_then(|field_ref| field_ref.get("fieldPath"))
            .and_then(Value::as_str);
        metadata_reference(name, value, field_path) == Some((path, key))
    })
}

/// The metadata references of a typed container's env vars.
fn container_references(container: &Container) -> impl Iterator<Item = (&str, &str, &str)> {
    container.env.iter().flatten().filter_map(|var| {
        let field_path = var
            .value_from
            .as_ref()
            .and_then(|from| from.field_ref.as_ref())
            .map(|field_ref| field_ref.field_path.as_str());
        metadata_reference(&var.name, var.value.as_deref(), field_path)
            .map(|(path, key)| (var.name.as_str(), path, key))
    })
}

/// The hash kruise-daemon reports as `extractedEnvFromMetadataHash` for a container of a pod with these labels
/// and annotations: FNV-1a 32 over the go-spew dump of the JSON list of `{"name","value"}` of every counted env
/// var, sorted by name (stable), with the value looked up in the metadata (`""` when absent).
#[must_use]
pub fn expected_hash(
    container: &Container,
    labels: Option<&std::collections::BTreeMap<String, String>>,
    annotations: Option<&std::collections::BTreeMap<String, String>>,
) -> u64 {
    let mut envs: Vec<(&str, &str)> = container_references(container)
        .filter_map(|(name, path, key)| {
            let source = match path {
                LABELS_PATH => labels,
                ANNOTATIONS_PATH => annotations,
                _ => return None,
            };
            let value = source
                .and_then(|map| map.get(key))
                .map_or("", String::as_str);
            Some((name, value))
        })
        .collect();
    envs.sort_by(|a, b| a.0.cmp(b.0));
    let mut json = String::with_capacity(64);
    if envs.is_empty() {
        json.push_str("null");
    } else {
        json.push('[');
        for (index, (name, value)) in envs.iter().enumerate() {
            if index > 0 {
                json.push(',');
            }
            json.push_str("{\"name\":");
            go_json::write_str(&mut json, name);
            if !value.is_empty() {
                json.push_str(",\"value\":");
                go_json::write_str(&mut json, value);
            }
            json.push('}');
        }
        json.push(']');
    }
    u64::from(container_hash::deep_hash_bytes(json.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscripted_paths() {
        assert_eq!(
            split_subscripted_path("metadata.annotations['myKey']"),
            Some(("metadata.annotations", "myKey"))
        );
        assert_eq!(
            split_subscripted_path("metadata.annotations['a[b]c']"),
            Some(("metadata.annotations", "a[b]c"))
        );
        assert_eq!(
            split_subscripted_path("metadata.labels['']"),
            Some(("metadata.labels", ""))
        );
        assert_eq!(split_subscripted_path("metadata.labels"), None);
        assert_eq!(split_subscripted_path("['k']"), None);
    }

    #[test]
    fn which_env_vars_count() {
        let path = Some("metadata.labels['k']");
        assert_eq!(
            metadata_reference("E", None, path),
            Some(("metadata.labels", "k"))
        );
        assert_eq!(
            metadata_reference("E", Some(""), path),
            Some(("metadata.labels", "k"))
        );
        assert_eq!(metadata_reference("E", Some("literal"), path), None);
        assert_eq!(metadata_reference("SIDECARSET_VERSION", None, path), None);
        assert_eq!(
            metadata_reference("SIDECARSET_VERSION_ALT", None, path),
            None
        );
        assert_eq!(metadata_reference("E", None, None), None);
    }
}
