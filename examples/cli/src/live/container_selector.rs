//! `-c/--containers` of `set env` and `set resources`: which of the pod template's containers (init
//! containers included) a verb changes, by name or by a wildcard pattern as kubectl matches it (`*` any run
//! of characters, `?` one character; the default `*` selects every container), and the merge patch that
//! writes the container lists back, conditional on the `resourceVersion` read.

use serde_json::{Map, Value, json};

/// The pattern that selects every container (kubectl's default).
pub const EVERY_CONTAINER: &str = "*";

/// Whether `name` matches `pattern` (`*` any run of characters, `?` exactly one, anything else itself).
#[must_use]
pub fn matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    // Classic wildcard matching: remember the last `*` and how much of the name it has eaten.
    let (mut p, mut n) = (0_usize, 0_usize);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
            }
            Some(&wanted) if wanted == '?' || Some(&wanted) == name.get(n) => {
                p += 1;
                n += 1;
            }
            _ => match star {
                Some((star_at, eaten)) => {
                    p = star_at + 1;
                    n = eaten + 1;
                    star = Some((star_at, eaten + 1));
                }
                None => return false,
            },
        }
    }
    pattern
        .get(p..)
        .is_some_and(|rest| rest.iter().all(|c| *c == '*'))
}

/// The lists of a pod spec that hold containers, in the order kubectl walks them.
pub const CONTAINER_LISTS: [&str; 2] = ["initContainers", "containers"];

/// The names of every container of `pod_spec` (init containers first).
#[must_use]
pub fn container_names(pod_spec: &Value) -> Vec<String> {
    CONTAINER_LISTS
        .iter()
        .filter_map(|list| pod_spec.get(list).and_then(Value::as_array))
        .flatten()
        .filter_map(|container| container.get("name").and_then(Value::as_str))
        .map(str::to_owned)
        .collect()
}

/// Refuses a pattern that selects none of `pod_spec`'s containers, naming it and the containers there are.
///
/// # Errors
/// No container of the pod spec matches `pattern`.
pub fn require_match(pod_spec: &Value, pattern: &str) -> Result<(), String> {
    let names = container_names(pod_spec);
    if names.iter().any(|name| matches(pattern, name)) {
        return Ok(());
    }
    Err(format!(
        "unable to find container named {pattern:?} (the template has {})",
        if names.is_empty() {
            "no containers".to_owned()
        } else {
            names.join(", ")
        }
    ))
}

fn resource_version(object: &Value) -> Value {
    object
        .pointer("/metadata/resourceVersion")
        .cloned()
        .unwrap_or(Value::Null)
}

/// The pod spec of a workload's template.
///
/// # Errors
/// The object has no `spec.template.spec`.
pub(crate) fn pod_spec(object: &Value) -> Result<&Value, String> {
    object
        .pointer("/spec/template/spec")
        .filter(|spec| spec.is_object())
        .ok_or_else(|| "the object has no spec.template.spec".to_owned())
}

/// Applies `update` to every container of the pod spec whose name matches `pattern`; the container lists
/// that changed, or `None` when nothing did.
///
/// # Errors
/// The object has no pod template, or no container matches `pattern`.
pub(crate) fn update_containers(
    object: &Value,
    pattern: &str,
    mut update: impl FnMut(&mut Map<String, Value>) -> Result<(), String>,
) -> Result<Option<Map<String, Value>>, String> {
    let spec = pod_spec(object)?;
    require_match(spec, pattern)?;
    let mut lists = Map::new();
    let mut changed = false;
    for list in CONTAINER_LISTS {
        let Some(containers) = spec.get(list).and_then(Value::as_array) else {
            continue;
        };
        let mut updated = containers.clone();
        for container in &mut updated {
            let Some(fields) = container.as_object_mut() else {
                continue;
            };
            let name = fields
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if !matches(pattern, name) {
                continue;
            }
            let before = fields.clone();
            update(fields)?;
            changed |= *fields != before;
        }
        lists.insert(list.to_owned(), Value::Array(updated));
    }
    Ok(changed.then_some(lists))
}

/// The merge patch (conditional on the `resourceVersion` read) that writes the changed container lists.
pub(crate) fn container_lists_patch(object: &Value, lists: Map<String, Value>) -> Value {
    json!({
        "metadata": {"resourceVersion": resource_version(object)},
        "spec": {"template": {"spec": Value::Object(lists)}},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_as_kubectl_globs_do() {
        assert!(matches("*", "main"));
        assert!(matches("*", ""));
        assert!(matches("main", "main"));
        assert!(!matches("main", "main2"));
        assert!(!matches("mai", "main"));
        assert!(matches("m*", "main"));
        assert!(matches("*n", "main"));
        assert!(matches("m*i*n", "main"));
        assert!(!matches("m*x", "main"));
        assert!(matches("ma?n", "main"));
        assert!(!matches("ma?n", "man"));
        assert!(matches("side-*-log", "side-a-b-log"));
        assert!(!matches("", "main"));
    }

    #[test]
    fn a_pattern_that_selects_nothing_is_refused_with_the_names_there_are() {
        let spec = json!({
            "initContainers": [{"name": "init"}],
            "containers": [{"name": "main"}, {"name": "log"}]
        });
        assert_eq!(container_names(&spec), ["init", "main", "log"]);
        assert_eq!(require_match(&spec, "l*"), Ok(()));
        assert_eq!(require_match(&spec, "init"), Ok(()));
        let error = require_match(&spec, "nope").unwrap_err();
        assert!(
            error.contains("\"nope\"") && error.contains("init, main, log"),
            "{error}"
        );
        let error = require_match(&json!({}), "*").unwrap_err();
        assert!(error.contains("no containers"), "{error}");
    }

    #[test]
    fn only_selected_containers_are_updated_and_no_change_writes_nothing() {
        let object = json!({
            "metadata": {"resourceVersion": "3"},
            "spec": {"template": {"spec": {"containers": [{"name": "main"}, {"name": "log"}]}}}
        });
        let lists = update_containers(&object, "lo?", |container| {
            container.insert("image".to_owned(), json!("new"));
            Ok(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(
            container_lists_patch(&object, lists),
            json!({"metadata": {"resourceVersion": "3"}, "spec": {"template": {"spec": {"containers":
                [{"name": "main"}, {"name": "log", "image": "new"}]}}}})
        );
        assert_eq!(update_containers(&object, "*", |_| Ok(())), Ok(None));
        assert_eq!(
            update_containers(&object, "*", |_| Err("refused".to_owned())),
            Err("refused".to_owned())
        );
        assert!(update_containers(&json!({"spec": {}}), "*", |_| Ok(())).is_err());
    }
}
