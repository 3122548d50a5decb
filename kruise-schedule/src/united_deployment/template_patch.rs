//! A subset's `patch` applied to the pod template of its workload, as upstream applies it with
//! `strategicpatch.StrategicMergePatch(template, patch, PodTemplateSpec{})`, for the part of the strategic
//! merge rules pod templates need:
//!
//! * objects merge key by key; `null` removes a key; `"$patch": "replace"` in an object replaces it whole;
//! * the pod's merge lists merge item by item on their merge key: `containers`, `initContainers`,
//!   `ephemeralContainers`, `volumes`, `env`, `imagePullSecrets` by `name`, `volumeMounts` by `mountPath`,
//!   `volumeDevices` by `devicePath`, `ports` by `containerPort`, `hostAliases` by `ip`; an item with an
//!   unknown key is appended, an item with `"$patch": "delete"` removes its match;
//! * any other list or value replaces the template's.
//!
//! ```
//! use k8s_openapi::api::core::v1::PodTemplateSpec;
//! use kruise_schedule::united_deployment::template_patch::apply_patch;
//!
//! let template: PodTemplateSpec = serde_json::from_value(serde_json::json!({
//!     "metadata": {"labels": {"app": "web"}},
//!     "spec": {"containers": [{"name": "main", "image": "nginx:1", "env": [{"name": "A", "value": "1"}]}]}
//! })).unwrap();
//! let patch = serde_json::json!({
//!     "metadata": {"labels": {"zone": "a"}},
//!     "spec": {"containers": [{"name": "main", "env": [{"name": "B", "value": "2"}]}]}
//! });
//! let patched = apply_patch(&template, &patch).unwrap();
//! let container = &patched.spec.unwrap().containers[0];
//! assert_eq!(container.image.as_deref(), Some("nginx:1"));
//! assert_eq!(container.env.as_ref().unwrap().len(), 2);
//! assert_eq!(patched.metadata.unwrap().labels.unwrap()["zone"], "a");
//! ```

use k8s_openapi::api::core::v1::PodTemplateSpec;
use serde_json::{Map, Value};

/// The merge lists of a pod template and their merge keys.
const MERGE_KEYS: [(&str, &str); 11] = [
    ("containers", "name"),
    ("initContainers", "name"),
    ("ephemeralContainers", "name"),
    ("volumes", "name"),
    ("env", "name"),
    ("imagePullSecrets", "name"),
    ("volumeMounts", "mountPath"),
    ("volumeDevices", "devicePath"),
    ("ports", "containerPort"),
    ("hostAliases", "ip"),
    ("readinessGates", "conditionType"),
];

const PATCH_DIRECTIVE: &str = "$patch";

/// `template` with `patch` applied (see the module documentation).
///
/// # Errors
/// The patch is not a JSON object, or the patched template is no longer a pod template; the message says
/// why.
pub fn apply_patch(template: &PodTemplateSpec, patch: &Value) -> Result<PodTemplateSpec, String> {
    let Value::Object(patch) = patch else {
        return Err(format!("{patch} is not a JSON object"));
    };
    let mut value = serde_json::to_value(template).map_err(|error| error.to_string())?;
    merge_object(&mut value, patch);
    serde_json::from_value(value).map_err(|error| format!("the patched template: {error}"))
}

fn merge_object(target: &mut Value, patch: &Map<String, Value>) {
    if patch.get(PATCH_DIRECTIVE).and_then(Value::as_str) == Some("replace") {
        let mut replaced = patch.clone();
        replaced.remove(PATCH_DIRECTIVE);
        *target = Value::Object(replaced);
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(target) = target else {
        return;
    };
    for (key, value) in patch {
        if key == PATCH_DIRECTIVE {
            continue;
        }
        let merge_key = MERGE_KEYS
            .iter()
            .find(|(list, _)| list == key)
            .map(|(_, merge_key)| *merge_key);
        match (value, merge_key) {
            (Value::Null, _) => {
                target.remove(key);
            }
            (Value::Object(inner), _) => {
                merge_object(target.entry(key.clone()).or_insert(Value::Null), inner);
            }
            (Value::Array(items), Some(merge_key)) => {
                merge_list(
                    target.entry(key.clone()).or_insert(Value::Null),
                    items,
                    merge_key,
                );
            }
            (other, _) => {
                target.insert(key.clone(), other.clone());
            }
        }
    }
}

fn merge_list(target: &mut Value, items: &[Value], merge_key: &str) {
    if !target.is_array() {
        *target = Value::Array(Vec::new());
    }
    let Value::Array(list) = target else {
        return;
    };
    for item in items {
        let key = item.get(merge_key).filter(|key| !key.is_null());
        let position = key.and_then(|key| {
            list.iter()
                .position(|entry| entry.get(merge_key) == Some(key))
        });
        let delete = item.get(PATCH_DIRECTIVE).and_then(Value::as_str) == Some("delete");
        match (position.and_then(|index| list.get_mut(index)), item) {
            (Some(_), _) if delete => {
                if let Some(index) = position {
                    list.remove(index);
                }
            }
            (Some(entry), Value::Object(fields)) => merge_object(entry, fields),
            (None, _) if delete => {}
            _ => list.push(item.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template() -> PodTemplateSpec {
        serde_json::from_value(serde_json::json!({
            "metadata": {"labels": {"app": "web", "tier": "front"}},
            "spec": {
                "containers": [
                    {"name": "main", "image": "nginx:1", "ports": [{"containerPort": 80}]},
                    {"name": "side", "image": "busybox"}
                ],
                "nodeSelector": {"disk": "ssd"}
            }
        }))
        .unwrap()
    }

    fn json(template: &PodTemplateSpec) -> Value {
        serde_json::to_value(template).unwrap()
    }

    #[test]
    fn maps_merge_and_null_removes() {
        let patched = apply_patch(
            &template(),
            &serde_json::json!({"metadata": {"labels": {"tier": null, "zone": "a"}}}),
        )
        .unwrap();
        assert_eq!(
            json(&patched)["metadata"]["labels"],
            serde_json::json!({"app": "web", "zone": "a"})
        );
    }

    #[test]
    fn merge_lists_merge_by_key_and_other_lists_replace() {
        let patch = serde_json::json!({"spec": {
            "containers": [
                {"name": "main", "image": "nginx:2", "ports": [{"containerPort": 443}]},
                {"name": "side", "$patch": "delete"},
                {"name": "extra", "image": "redis"}
            ],
            "tolerations": [{"key": "k", "operator": "Exists"}]
        }});
        let patched = json(&apply_patch(&template(), &patch).unwrap());
        let containers = patched["spec"]["containers"].as_array().unwrap();
        let names: Vec<_> = containers
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["main", "extra"]);
        assert_eq!(containers[0]["image"], "nginx:2");
        assert_eq!(containers[0]["ports"].as_array().unwrap().len(), 2);
        assert_eq!(patched["spec"]["tolerations"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn a_replace_directive_replaces_the_object() {
        let patch =
            serde_json::json!({"spec": {"nodeSelector": {"$patch": "replace", "zone": "b"}}});
        let patched = json(&apply_patch(&template(), &patch).unwrap());
        assert_eq!(
            patched["spec"]["nodeSelector"],
            serde_json::json!({"zone": "b"})
        );
    }

    #[test]
    fn a_patch_that_breaks_the_template_is_an_error() {
        assert!(apply_patch(&template(), &serde_json::json!([1])).is_err());
        let error = apply_patch(
            &template(),
            &serde_json::json!({"spec": {"containers": "x"}}),
        )
        .unwrap_err();
        assert!(error.contains("patched template"), "{error}");
    }
}
