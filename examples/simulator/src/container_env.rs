//! A container's environment as kubelet 1.20 builds it (`makeEnvironmentVariables`), pure: the caller fetches
//! the ConfigMaps and Secrets the container names ([`references`]) into [`EnvSources`], and [`resolve`] gives
//! the variables in the order they were defined, or the error kubelet reports as the container's
//! `CreateContainerConfigError` (the container is then not created).
//!
//! * `envFrom` first (ConfigMaps and Secrets, each key with the source's `prefix`; keys that are not valid
//!   variable names are skipped), then `env` in order; a later definition of a name replaces an earlier one;
//! * a literal `value` wins over `valueFrom`; `$(NAME)` in it is replaced by a variable defined before it
//!   (left as written when none is), `$$` is a literal `$`;
//! * `fieldRef`: `metadata.name`, `metadata.namespace`, `metadata.uid`, `metadata.labels['k']`,
//!   `metadata.annotations['k']` (empty when absent), `spec.nodeName`, `spec.serviceAccountName`,
//!   `status.podIP`, `status.podIPs` and `status.hostIP` (the node's address: pods run in the host network);
//! * `configMapKeyRef` / `secretKeyRef`: a missing object or key fails the container unless `optional`
//!   (then the variable is left out), with kubelet's messages (`configmap "x" not found`,
//!   `couldn't find key k in ConfigMap ns/x`);
//! * not supported: `resourceFieldRef` (the variable is left out) and the service link variables.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_simulator::container_env::{EnvSources, resolve};
//!
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web-0", "namespace": "ns", "labels": {"tier": "gold"}},
//!     "spec": {"containers": [{"name": "main", "env": [
//!         {"name": "TIER", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['tier']"}}},
//!         {"name": "GREETING", "value": "hello $(TIER)"},
//!     ]}]},
//! })).unwrap();
//! let container = &pod.spec.as_ref().unwrap().containers[0];
//! let env = resolve(&pod, container, "10.0.0.1", &EnvSources::default()).unwrap();
//! assert_eq!(env, [("TIER".to_owned(), "gold".to_owned()), ("GREETING".to_owned(), "hello gold".to_owned())]);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Container, EnvVar, ObjectFieldSelector, Pod};
use kube::ResourceExt;

/// Why kubelet refuses to create a container (its `CreateContainerConfigError` message).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct EnvError {
    /// Kubelet's message.
    pub message: String,
}

impl EnvError {
    fn new(message: String) -> Self {
        Self { message }
    }
}

/// The ConfigMaps and Secrets of the pod's namespace a container reads, as fetched: `None` for one that does
/// not exist. A name missing from the maps counts as not existing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnvSources {
    /// ConfigMap name to its `data`.
    pub config_maps: BTreeMap<String, Option<BTreeMap<String, String>>>,
    /// Secret name to its `data`, decoded.
    pub secrets: BTreeMap<String, Option<BTreeMap<String, String>>>,
}

/// The ConfigMaps and Secrets a container's env and envFrom name: `(config maps, secrets)`.
#[must_use]
pub fn references(container: &Container) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut config_maps = BTreeSet::new();
    let mut secrets = BTreeSet::new();
    for source in container.env_from.iter().flatten() {
        if let Some(reference) = &source.config_map_ref {
            config_maps.insert(reference.name.clone());
        }
        if let Some(reference) = &source.secret_ref {
            secrets.insert(reference.name.clone());
        }
    }
    for var in container.env.iter().flatten() {
        if var.value.as_deref().is_some_and(|value| !value.is_empty()) {
            continue;
        }
        let Some(from) = &var.value_from else {
            continue;
        };
        if let Some(selector) = &from.config_map_key_ref {
            config_maps.insert(selector.name.clone());
        }
        if let Some(selector) = &from.secret_key_ref {
            secrets.insert(selector.name.clone());
        }
    }
    (config_maps, secrets)
}

/// Variables in definition order; a redefinition keeps the first position and takes the new value.
#[derive(Default)]
struct Environment {
    vars: Vec<(String, String)>,
}

impl Environment {
    fn set(&mut self, name: String, value: String) {
        if let Some(slot) = self.vars.iter_mut().find(|(existing, _)| *existing == name) {
            slot.1 = value;
        } else {
            self.vars.push((name, value));
        }
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(existing, _)| existing == name)
            .map(|(_, value)| value.as_str())
    }
}

/// The environment of `container` in `pod` on a node whose address is `host_ip`.
///
/// # Errors
/// [`EnvError`] with kubelet's message for a missing ConfigMap, Secret or key that is not optional, or an
/// unsupported `fieldPath`.
pub fn resolve(
    pod: &Pod,
    container: &Container,
    host_ip: &str,
    sources: &EnvSources,
) -> Result<Vec<(String, String)>, EnvError> {
    let namespace = pod.namespace().unwrap_or_default();
    let mut environment = Environment::default();
    for source in container.env_from.iter().flatten() {
        let prefix = source.prefix.as_deref().unwrap_or("");
        let data = if let Some(reference) = &source.config_map_ref {
            match sources.config_maps.get(&reference.name).cloned().flatten() {
                Some(data) => data,
                None if reference.optional == Some(true) => continue,
                None => return Err(not_found("configmap", &reference.name)),
            }
        } else if let Some(reference) = &source.secret_ref {
            match sources.secrets.get(&reference.name).cloned().flatten() {
                Some(data) => data,
                None if reference.optional == Some(true) => continue,
                None => return Err(not_found("secret", &reference.name)),
            }
        } else {
            continue;
        };
        for (key, value) in data {
            let name = format!("{prefix}{key}");
            if is_env_var_name(&name) {
                environment.set(name, value);
            }
        }
    }
    for var in container.env.iter().flatten() {
        if let Some(value) = resolve_var(pod, var, &namespace, host_ip, sources, &environment)? {
            environment.set(var.name.clone(), value);
        }
    }
    Ok(environment.vars)
}

fn resolve_var(
    pod: &Pod,
    var: &EnvVar,
    namespace: &str,
    host_ip: &str,
    sources: &EnvSources,
    defined: &Environment,
) -> Result<Option<String>, EnvError> {
    let literal = var.value.as_deref().unwrap_or("");
    let Some(from) = var.value_from.as_ref().filter(|_| literal.is_empty()) else {
        return Ok(Some(expand(literal, defined)));
    };
    if let Some(field) = &from.field_ref {
        return field_value(pod, field, host_ip).map(Some);
    }
    if let Some(selector) = &from.config_map_key_ref {
        let optional = selector.optional == Some(true);
        let Some(data) = sources.config_maps.get(&selector.name).cloned().flatten() else {
            return if optional {
                Ok(None)
            } else {
                Err(not_found("configmap", &selector.name))
            };
        };
        return match data.get(&selector.key) {
            Some(value) => Ok(Some(value.clone())),
            None if optional => Ok(None),
            None => Err(EnvError::new(format!(
                "couldn't find key {} in ConfigMap {namespace}/{}",
                selector.key, selector.name
            ))),
        };
    }
    if let Some(selector) = &from.secret_key_ref {
        let optional = selector.optional == Some(true);
        let Some(data) = sources.secrets.get(&selector.name).cloned().flatten() else {
            return if optional {
                Ok(None)
            } else {
                Err(not_found("secret", &selector.name))
            };
        };
        return match data.get(&selector.key) {
            Some(value) => Ok(Some(value.clone())),
            None if optional => Ok(None),
            None => Err(EnvError::new(format!(
                "couldn't find key {} in Secret {namespace}/{}",
                selector.key, selector.name
            ))),
        };
    }
    Ok(None)
}

fn not_found(kind: &str, name: &str) -> EnvError {
    EnvError::new(format!("{kind} {name:?} not found"))
}

/// The value of a `fieldRef` for `pod`.
fn field_value(pod: &Pod, field: &ObjectFieldSelector, host_ip: &str) -> Result<String, EnvError> {
    let path = field.field_path.as_str();
    let spec = pod.spec.as_ref();
    let value = match path {
        "metadata.name" => pod.name_any(),
        "metadata.namespace" => pod.namespace().unwrap_or_default(),
        "metadata.uid" => pod.metadata.uid.clone().unwrap_or_default(),
        "spec.nodeName" => spec
            .and_then(|spec| spec.node_name.clone())
            .unwrap_or_default(),
        "spec.serviceAccountName" => spec
            .and_then(|spec| spec.service_account_name.clone())
            .unwrap_or_default(),
        "status.podIP" | "status.podIPs" | "status.hostIP" => host_ip.to_owned(),
        _ => {
            let map = |prefix: &str| match prefix {
                "metadata.labels" => Some(pod.metadata.labels.as_ref()),
                "metadata.annotations" => Some(pod.metadata.annotations.as_ref()),
                _ => None,
            };
            let subscripted = path
                .strip_suffix("']")
                .and_then(|inner| inner.split_once("['"));
            match subscripted.and_then(|(prefix, key)| map(prefix).map(|source| (source, key))) {
                Some((source, key)) => source
                    .and_then(|values| values.get(key))
                    .cloned()
                    .unwrap_or_default(),
                None => match map(path) {
                    Some(source) => format_map(source),
                    None => return Err(EnvError::new(format!("unsupported fieldPath: {path}"))),
                },
            }
        }
    };
    Ok(value)
}

/// A whole label or annotation map as the downward API writes it: `key="value"` lines, sorted by key.
fn format_map(values: Option<&BTreeMap<String, String>>) -> String {
    values
        .into_iter()
        .flatten()
        .map(|(key, value)| format!("{key}={value:?}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Kubernetes' `expansion.Expand`: `$(NAME)` of a defined variable is its value, `$$` is `$`, anything
/// else is kept as written.
fn expand(input: &str, defined: &Environment) -> String {
    let mut output = String::with_capacity(input.len());
    let mut rest = input;
    while let Some(position) = rest.find('$') {
        let (before, after) = rest.split_at(position);
        output.push_str(before);
        let after = after.get(1..).unwrap_or("");
        if let Some(tail) = after.strip_prefix('$') {
            output.push('$');
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('(') {
            match tail.split_once(')') {
                Some((name, remainder)) => {
                    match defined.get(name) {
                        Some(value) => output.push_str(value),
                        None => {
                            output.push_str("$(");
                            output.push_str(name);
                            output.push(')');
                        }
                    }
                    rest = remainder;
                }
                None => {
                    output.push_str("$(");
                    rest = tail;
                }
            }
        } else {
            output.push('$');
            rest = after;
        }
    }
    output.push_str(rest);
    output
}

/// Kubernetes' `IsEnvVarName`: letters, digits, `_`, `-` and `.`, not starting with a digit.
fn is_env_var_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(env: serde_json::Value, env_from: serde_json::Value) -> Pod {
        let mut container = json!({"name": "main"});
        container["env"] = env;
        container["envFrom"] = env_from;
        let containers = json!([container]);
        serde_json::from_value(json!({
            "metadata": {"name": "web-0", "namespace": "ns", "uid": "u-1",
                "labels": {"app": "web", "tier": "gold"}, "annotations": {"note": "hi"}},
            "spec": {"nodeName": "node-1", "serviceAccountName": "sa",
                "containers": containers},
        }))
        .unwrap()
    }

    fn run(pod: &Pod, sources: &EnvSources) -> Result<Vec<(String, String)>, EnvError> {
        resolve(
            pod,
            &pod.spec.as_ref().unwrap().containers[0],
            "10.0.0.7",
            sources,
        )
    }

    fn field(name: &str, path: &str) -> serde_json::Value {
        json!({"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}})
    }

    fn sources(config_maps: &[(&str, &[(&str, &str)])]) -> EnvSources {
        EnvSources {
            config_maps: config_maps
                .iter()
                .map(|(name, data)| {
                    let data = data
                        .iter()
                        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                        .collect();
                    ((*name).to_owned(), Some(data))
                })
                .collect(),
            secrets: BTreeMap::from([(
                "creds".to_owned(),
                Some(BTreeMap::from([("token".to_owned(), "s3cret".to_owned())])),
            )]),
        }
    }

    #[test]
    fn field_refs_read_the_pod() {
        let pod = pod(
            json!([
                field("NAME", "metadata.name"),
                field("NS", "metadata.namespace"),
                field("UID", "metadata.uid"),
                field("TIER", "metadata.labels['tier']"),
                field("MISSING", "metadata.labels['none']"),
                field("NOTE", "metadata.annotations['note']"),
                field("NODE", "spec.nodeName"),
                field("SA", "spec.serviceAccountName"),
                field("IP", "status.podIP"),
                field("HOST", "status.hostIP"),
                field("LABELS", "metadata.labels"),
            ]),
            json!(null),
        );
        let env: BTreeMap<_, _> = run(&pod, &EnvSources::default())
            .unwrap()
            .into_iter()
            .collect();
        assert_eq!(env["NAME"], "web-0");
        assert_eq!(env["NS"], "ns");
        assert_eq!(env["UID"], "u-1");
        assert_eq!(env["TIER"], "gold");
        assert_eq!(env["MISSING"], "");
        assert_eq!(env["NOTE"], "hi");
        assert_eq!(env["NODE"], "node-1");
        assert_eq!(env["SA"], "sa");
        assert_eq!(env["IP"], "10.0.0.7");
        assert_eq!(env["HOST"], "10.0.0.7");
        assert_eq!(env["LABELS"], "app=\"web\"\ntier=\"gold\"");
    }

    #[test]
    fn an_unsupported_field_path_fails() {
        let pod = pod(json!([field("X", "spec.hostname")]), json!(null));
        assert_eq!(
            run(&pod, &EnvSources::default()).unwrap_err().message,
            "unsupported fieldPath: spec.hostname"
        );
    }

    #[test]
    fn config_map_and_secret_keys() {
        let env = json!([
            {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "a"}}},
            {"name": "T", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}},
        ]);
        let pod = pod(env, json!(null));
        assert_eq!(
            run(&pod, &sources(&[("cm", &[("a", "1")])])).unwrap(),
            [("A".into(), "1".into()), ("T".into(), "s3cret".into())]
        );
        assert_eq!(
            run(&pod, &sources(&[])).unwrap_err().message,
            "configmap \"cm\" not found"
        );
        assert_eq!(
            run(&pod, &sources(&[("cm", &[("b", "2")])]))
                .unwrap_err()
                .message,
            "couldn't find key a in ConfigMap ns/cm"
        );
        let mut no_secret = sources(&[("cm", &[("a", "1")])]);
        no_secret.secrets.clear();
        assert_eq!(
            run(&pod, &no_secret).unwrap_err().message,
            "secret \"creds\" not found"
        );
    }

    #[test]
    fn optional_references_are_left_out() {
        let env = json!([
            {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "a", "optional": true}}},
            {"name": "B", "valueFrom": {"secretKeyRef": {"name": "none", "key": "b", "optional": true}}},
            {"name": "C", "value": "c"},
        ]);
        let pod = pod(
            env,
            json!([{"configMapRef": {"name": "gone", "optional": true}}]),
        );
        assert_eq!(
            run(&pod, &sources(&[("cm", &[])])).unwrap(),
            [("C".into(), "c".into())]
        );
    }

    #[test]
    fn env_from_comes_first_and_env_overrides_it() {
        let pod = pod(
            json!([{"name": "CFG_a", "value": "literal"}]),
            json!([
                {"configMapRef": {"name": "cm"}, "prefix": "CFG_"},
                {"secretRef": {"name": "creds"}},
            ]),
        );
        let env = run(
            &pod,
            &sources(&[("cm", &[("a", "1"), ("b", "2"), ("bad key", "x")])]),
        )
        .unwrap();
        assert_eq!(
            env,
            [
                ("CFG_a".into(), "literal".into()),
                ("CFG_b".into(), "2".into()),
                ("token".into(), "s3cret".into()),
            ]
        );
        let missing = run(&pod, &sources(&[])).unwrap_err();
        assert_eq!(missing.message, "configmap \"cm\" not found");
    }

    #[test]
    fn literal_values_expand_earlier_variables() {
        let pod = pod(
            json!([
                {"name": "A", "value": "x"},
                {"name": "B", "value": "$(A)-$(UNSET)-$$(A)-$"},
                {"name": "C", "value": "keep", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            ]),
            json!(null),
        );
        assert_eq!(
            run(&pod, &EnvSources::default()).unwrap(),
            [
                ("A".into(), "x".into()),
                ("B".into(), "x-$(UNSET)-$(A)-$".into()),
                ("C".into(), "keep".into()),
            ]
        );
    }

    #[test]
    fn references_list_what_must_be_fetched() {
        let pod = pod(
            json!([
                {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "a"}}},
                {"name": "L", "value": "v", "valueFrom": {"configMapKeyRef": {"name": "unused", "key": "a"}}},
            ]),
            json!([{"secretRef": {"name": "creds"}}, {"configMapRef": {"name": "all"}}]),
        );
        let (config_maps, secrets) = references(&pod.spec.as_ref().unwrap().containers[0]);
        assert_eq!(config_maps.into_iter().collect::<Vec<_>>(), ["all", "cm"]);
        assert_eq!(secrets.into_iter().collect::<Vec<_>>(), ["creds"]);
    }
}
