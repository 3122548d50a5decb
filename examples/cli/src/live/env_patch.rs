//! The write of `set env` and the listing of `set env --list`, decided from the workload as read (pure).
//!
//! As kubectl does it, each selected container keeps its `env` entries in their order: a removed name goes,
//! a name that is set again has its entry replaced in place, and new names are appended. Entries are kept as
//! the server returned them, so `valueFrom` references (and any field this tool does not know) survive the
//! write.

use std::fmt::Write as _;

use serde_json::Value;

use super::container_selector::{
    CONTAINER_LISTS, container_lists_patch, matches, pod_spec, require_match, update_containers,
};
use super::env_changes::{EnvChanges, entry_name};

/// A container's `env` after the changes.
#[must_use]
pub fn updated_env(existing: &[Value], changes: &EnvChanges) -> Vec<Value> {
    // The last assignment of a name wins, as in a shell.
    let wanted = |name: &str| {
        changes
            .set
            .iter()
            .rev()
            .find(|entry| entry_name(entry) == name)
    };
    let mut placed: Vec<&str> = changes.remove.iter().map(String::as_str).collect();
    let mut env = Vec::with_capacity(existing.len() + changes.set.len());
    for entry in existing {
        let name = entry_name(entry);
        if placed.contains(&name) {
            continue;
        }
        match wanted(name) {
            Some(replacement) => {
                placed.push(name);
                env.push(replacement.clone());
            }
            None => env.push(entry.clone()),
        }
    }
    for entry in &changes.set {
        let name = entry_name(entry);
        if !placed.contains(&name)
            && let Some(last) = wanted(name)
        {
            placed.push(name);
            env.push(last.clone());
        }
    }
    env
}

/// The patch of `set env`, or `None` when every selected container already has the asked environment.
///
/// # Errors
/// No container matches `pattern` (the message names it and the containers there are).
pub fn set_env(
    object: &Value,
    pattern: &str,
    changes: &EnvChanges,
) -> Result<Option<Value>, String> {
    let lists = update_containers(object, pattern, |container| {
        let existing = container
            .get("env")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let env = updated_env(&existing, changes);
        if env.is_empty() {
            container.remove("env");
        } else {
            container.insert("env".to_owned(), Value::Array(env));
        }
        Ok(())
    })?;
    Ok(lists.map(|lists| container_lists_patch(object, lists)))
}

/// How kubectl describes a `valueFrom` in `--list`.
fn reference(value_from: &Value) -> String {
    let text = |pointer: &str| {
        value_from
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    if value_from.get("configMapKeyRef").is_some() {
        return format!(
            "configmap {}, key {}",
            text("/configMapKeyRef/name"),
            text("/configMapKeyRef/key")
        );
    }
    if value_from.get("secretKeyRef").is_some() {
        return format!(
            "secret {}, key {}",
            text("/secretKeyRef/name"),
            text("/secretKeyRef/key")
        );
    }
    if value_from.get("fieldRef").is_some() {
        return format!("field path {}", text("/fieldRef/fieldPath"));
    }
    if value_from.get("resourceFieldRef").is_some() {
        let container = text("/resourceFieldRef/containerName");
        let prefix = if container.is_empty() {
            String::new()
        } else {
            format!("{container}/")
        };
        return format!(
            "resource field {prefix}{}",
            text("/resourceFieldRef/resource")
        );
    }
    "invalid valueFrom".to_owned()
}

/// The text of `set env --list`: for each selected container a `# KIND NAME, container C` line, then one
/// `NAME=VALUE` line per variable, a `valueFrom` variable as a `# NAME from ...` comment. `changes` are shown
/// applied (kubectl's preview); nothing is written.
///
/// # Errors
/// No container matches `pattern`.
pub fn list_env(object: &Value, pattern: &str, changes: &EnvChanges) -> Result<String, String> {
    let spec = pod_spec(object)?;
    require_match(spec, pattern)?;
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut text = String::new();
    for list in CONTAINER_LISTS {
        for container in spec
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let container_name = entry_name(container);
            if !matches(pattern, container_name) {
                continue;
            }
            let _ = writeln!(text, "# {kind} {name}, container {container_name}");
            let existing = container
                .get("env")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            for entry in updated_env(&existing, changes) {
                match entry.get("valueFrom") {
                    Some(value_from) => {
                        let _ = writeln!(
                            text,
                            "# {} from {}",
                            entry_name(&entry),
                            reference(value_from)
                        );
                    }
                    None => {
                        let value = entry
                            .get("value")
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        let _ = writeln!(text, "{}={value}", entry_name(&entry));
                    }
                }
            }
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::live::env_changes::EnvArgument;

    fn cloneset() -> Value {
        json!({
            "kind": "CloneSet",
            "metadata": {"name": "web", "resourceVersion": "7"},
            "spec": {"template": {"spec": {
                "initContainers": [{"name": "init", "image": "busybox"}],
                "containers": [
                    {"name": "main", "image": "nginx", "env": [
                        {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                        {"name": "MODE", "value": "slow"},
                        {"name": "OLD", "value": "x"},
                        {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "t"}}}
                    ]},
                    {"name": "log", "image": "fluentd"}
                ]
            }}}
        })
    }

    fn changes(arguments: &[&str]) -> EnvChanges {
        let arguments: Vec<EnvArgument> = arguments.iter().map(|a| a.parse().unwrap()).collect();
        EnvChanges::new(&arguments, vec![], "").unwrap()
    }

    #[test]
    fn entries_keep_their_order_replace_in_place_and_new_ones_are_appended() {
        let existing = cloneset()["spec"]["template"]["spec"]["containers"][0]["env"].clone();
        let existing = existing.as_array().unwrap();
        let env = updated_env(existing, &changes(&["NEW=1", "MODE=fast", "OLD-", "NEW=2"]));
        let names: Vec<&str> = env.iter().map(entry_name).collect();
        assert_eq!(names, ["POD", "MODE", "TOKEN", "NEW"]);
        assert_eq!(env[0], existing[0], "valueFrom entries are kept as read");
        assert_eq!(env[1], json!({"name": "MODE", "value": "fast"}));
        assert_eq!(
            env[3],
            json!({"name": "NEW", "value": "2"}),
            "the last assignment wins"
        );
        assert_eq!(
            updated_env(existing, &changes(&["GONE-"])),
            existing.clone()
        );
    }

    #[test]
    fn the_patch_changes_only_selected_containers_and_keeps_value_from() {
        let patch = set_env(&cloneset(), "main", &changes(&["MODE=fast"]))
            .unwrap()
            .unwrap();
        assert_eq!(patch["metadata"]["resourceVersion"], "7");
        let spec = &patch["spec"]["template"]["spec"];
        let env = &spec["containers"][0]["env"];
        assert_eq!(
            env[0]["valueFrom"]["fieldRef"]["fieldPath"],
            "metadata.name"
        );
        assert_eq!(env[1]["value"], "fast");
        assert_eq!(env[3]["valueFrom"]["secretKeyRef"]["key"], "t");
        assert_eq!(
            spec["containers"][1],
            json!({"name": "log", "image": "fluentd"})
        );
        assert_eq!(
            spec["initContainers"][0],
            json!({"name": "init", "image": "busybox"})
        );

        let every = set_env(&cloneset(), "*", &changes(&["A=1"]))
            .unwrap()
            .unwrap();
        let spec = &every["spec"]["template"]["spec"];
        assert_eq!(
            spec["initContainers"][0]["env"],
            json!([{"name": "A", "value": "1"}])
        );
        assert_eq!(
            spec["containers"][1]["env"],
            json!([{"name": "A", "value": "1"}])
        );
        assert_eq!(
            spec["containers"][0]["env"][4],
            json!({"name": "A", "value": "1"})
        );

        let emptied = set_env(&cloneset(), "l*", &changes(&["A=1"]))
            .unwrap()
            .unwrap();
        assert!(emptied["spec"]["template"]["spec"]["containers"][0]["env"].is_array());
        let removed = set_env(
            &json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "env": [{"name": "A", "value": "1"}]}]}}}}),
            "*",
            &changes(&["A-"]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            removed["spec"]["template"]["spec"]["containers"][0],
            json!({"name": "c"})
        );
    }

    #[test]
    fn nothing_to_do_and_unknown_containers() {
        assert_eq!(
            set_env(&cloneset(), "main", &changes(&["MODE=slow"])),
            Ok(None)
        );
        assert_eq!(set_env(&cloneset(), "log", &changes(&["MODE-"])), Ok(None));
        let error = set_env(&cloneset(), "nope", &changes(&["A=1"])).unwrap_err();
        assert!(
            error.contains("\"nope\"") && error.contains("init, main, log"),
            "{error}"
        );
        assert!(set_env(&json!({"spec": {}}), "*", &changes(&["A=1"])).is_err());
    }

    #[test]
    fn the_listing_prints_values_and_describes_references() {
        let text = list_env(&cloneset(), "main", &EnvChanges::default()).unwrap();
        assert_eq!(
            text,
            "# CloneSet web, container main\n# POD from field path metadata.name\nMODE=slow\nOLD=x\n\
             # TOKEN from secret s, key t\n"
        );
        let text = list_env(&cloneset(), "*", &changes(&["OLD-", "B=2"])).unwrap();
        assert!(
            text.starts_with(
                "# CloneSet web, container init\nB=2\n# CloneSet web, container main\n"
            ),
            "{text}"
        );
        assert!(!text.contains("OLD="), "{text}");
        assert!(
            text.ends_with("# CloneSet web, container log\nB=2\n"),
            "{text}"
        );
        assert_eq!(
            reference(&json!({"configMapKeyRef": {"name": "c", "key": "k"}})),
            "configmap c, key k"
        );
        assert_eq!(
            reference(
                &json!({"resourceFieldRef": {"containerName": "main", "resource": "limits.cpu"}})
            ),
            "resource field main/limits.cpu"
        );
        assert_eq!(
            reference(&json!({"resourceFieldRef": {"resource": "requests.memory"}})),
            "resource field requests.memory"
        );
        assert_eq!(reference(&json!({})), "invalid valueFrom");
        assert!(list_env(&cloneset(), "x", &EnvChanges::default()).is_err());
    }
}
