//! The writes of the live verbs, decided from the object as read (pure, so they are tested without a
//! cluster). Each is a JSON merge patch carrying the `resourceVersion` it was decided from, so the API
//! server refuses it (409) if the object changed in between.

use serde_json::{Map, Value, json};

use super::target::WorkloadKind;

fn resource_version(object: &Value) -> Value {
    object
        .pointer("/metadata/resourceVersion")
        .cloned()
        .unwrap_or(Value::Null)
}

/// Where `paused` lives: `spec.updateStrategy.paused` in a v1alpha1 CloneSet, else
/// `spec.updateStrategy.rollingUpdate.paused`.
fn paused_path(kind: WorkloadKind, version: &str) -> &'static [&'static str] {
    match (kind, version) {
        (WorkloadKind::CloneSet, "v1alpha1") => &["spec", "updateStrategy", "paused"],
        _ => &["spec", "updateStrategy", "rollingUpdate", "paused"],
    }
}

fn nested(path: &[&str], leaf: Value) -> Value {
    path.iter()
        .rev()
        .fold(leaf, |inner, key| json!({ *key: inner }))
}

/// The patch that sets the workload's `paused` to `paused`, or `None` when it already is.
#[must_use]
pub fn pause(object: &Value, kind: WorkloadKind, version: &str, paused: bool) -> Option<Value> {
    let path = paused_path(kind, version);
    let pointer: String = path.iter().map(|key| format!("/{key}")).collect();
    let current = object
        .pointer(&pointer)
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if current == paused {
        return None;
    }
    let mut patch = nested(path, Value::Bool(paused));
    if let Some(fields) = patch.as_object_mut() {
        fields.insert(
            "metadata".to_owned(),
            json!({"resourceVersion": resource_version(object)}),
        );
    }
    Some(patch)
}

/// One `CONTAINER=IMAGE` of `set image` (`*` for every container).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageAssignment {
    /// The container name, or `*`.
    pub container: String,
    /// The image.
    pub image: String,
}

impl std::str::FromStr for ImageAssignment {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.split_once('=') {
            Some((container, image)) if !container.is_empty() && !image.is_empty() => Ok(Self {
                container: container.to_owned(),
                image: image.to_owned(),
            }),
            _ => Err(format!("{text:?}: expected CONTAINER=IMAGE (or *=IMAGE)")),
        }
    }
}

/// The patch that gives the pod template's containers (and init containers) their new images, or
/// `None` when every image already is as asked.
///
/// # Errors
/// A named container is not in the template (the message names it and the containers there are).
pub fn set_image(object: &Value, assignments: &[ImageAssignment]) -> Result<Option<Value>, String> {
    let pod_spec = object
        .pointer("/spec/template/spec")
        .and_then(Value::as_object)
        .ok_or_else(|| "the object has no spec.template.spec".to_owned())?;
    let mut changed = false;
    let mut lists = Map::new();
    let mut names = Vec::new();
    for key in ["initContainers", "containers"] {
        let Some(containers) = pod_spec.get(key).and_then(Value::as_array) else {
            continue;
        };
        let mut updated = containers.clone();
        for container in &mut updated {
            let name = container["name"].as_str().unwrap_or_default().to_owned();
            names.push(name.clone());
            let wanted = assignments
                .iter()
                .rev()
                .find(|a| a.container == name || a.container == "*");
            if let Some(wanted) = wanted
                && container["image"].as_str() != Some(wanted.image.as_str())
            {
                container["image"] = Value::String(wanted.image.clone());
                changed = true;
            }
        }
        lists.insert(key.to_owned(), Value::Array(updated));
    }
    if let Some(missing) = assignments
        .iter()
        .find(|a| a.container != "*" && !names.contains(&a.container))
    {
        return Err(format!(
            "unable to find container named {:?} (the template has {})",
            missing.container,
            names.join(", ")
        ));
    }
    if !changed {
        return Ok(None);
    }
    Ok(Some(json!({
        "metadata": {"resourceVersion": resource_version(object)},
        "spec": {"template": {"spec": Value::Object(lists)}},
    })))
}

/// The patch of `scaledown`: the pods join `spec.scaleStrategy.podsToDelete` and `spec.replicas` drops by
/// the pods that were not listed already, so the CloneSet deletes exactly those pods and does not replace
/// them.
///
/// # Errors
/// No pods, or more pods than `replicas`.
pub fn scale_down(object: &Value, pods: &[String]) -> Result<Value, String> {
    if pods.is_empty() {
        return Err("--pods names no pod".to_owned());
    }
    let replicas = object
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let mut listed: Vec<String> = object
        .pointer("/spec/scaleStrategy/podsToDelete")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(|name| name.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let mut added = 0_i64;
    for pod in pods {
        if !listed.contains(pod) {
            listed.push(pod.clone());
            added += 1;
        }
    }
    let remaining = replicas - added;
    if remaining < 0 {
        return Err(format!(
            "cannot scale down {added} pods: spec.replicas is {replicas}"
        ));
    }
    Ok(json!({
        "metadata": {"resourceVersion": resource_version(object)},
        "spec": {"replicas": remaining, "scaleStrategy": {"podsToDelete": listed}},
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cloneset() -> Value {
        json!({
            "metadata": {"name": "web", "resourceVersion": "42"},
            "spec": {
                "replicas": 3,
                "scaleStrategy": {"podsToDelete": ["web-old"]},
                "updateStrategy": {"paused": false},
                "template": {"spec": {
                    "initContainers": [{"name": "init", "image": "busybox:1"}],
                    "containers": [{"name": "main", "image": "nginx:1.24"},
                                   {"name": "log", "image": "fluentd:1"}]
                }}
            }
        })
    }

    #[test]
    fn pause_writes_where_the_version_keeps_it_and_only_when_needed() {
        let v1alpha1 = pause(&cloneset(), WorkloadKind::CloneSet, "v1alpha1", true).unwrap();
        assert_eq!(
            v1alpha1,
            json!({"metadata": {"resourceVersion": "42"}, "spec": {"updateStrategy": {"paused": true}}})
        );
        let v1beta1 = pause(&cloneset(), WorkloadKind::CloneSet, "v1beta1", true).unwrap();
        assert_eq!(
            v1beta1["spec"]["updateStrategy"]["rollingUpdate"]["paused"],
            true
        );
        let asts = pause(&cloneset(), WorkloadKind::StatefulSet, "v1alpha1", true).unwrap();
        assert_eq!(
            asts["spec"]["updateStrategy"]["rollingUpdate"]["paused"],
            true
        );
        assert_eq!(
            pause(&cloneset(), WorkloadKind::CloneSet, "v1alpha1", false),
            None,
            "already running"
        );
    }

    #[test]
    fn set_image_changes_named_containers_and_refuses_unknown_ones() {
        let assign = |text: &str| text.parse::<ImageAssignment>().unwrap();
        let patch = set_image(&cloneset(), &[assign("main=nginx:1.25")])
            .unwrap()
            .unwrap();
        assert_eq!(patch["metadata"]["resourceVersion"], "42");
        let containers = &patch["spec"]["template"]["spec"]["containers"];
        assert_eq!(containers[0]["image"], "nginx:1.25");
        assert_eq!(containers[1]["image"], "fluentd:1", "the others are kept");
        let all = set_image(&cloneset(), &[assign("*=busybox:2")])
            .unwrap()
            .unwrap();
        assert_eq!(
            all["spec"]["template"]["spec"]["initContainers"][0]["image"],
            "busybox:2"
        );
        assert_eq!(
            all["spec"]["template"]["spec"]["containers"][1]["image"],
            "busybox:2"
        );
        assert_eq!(
            set_image(&cloneset(), &[assign("main=nginx:1.24")]),
            Ok(None)
        );
        let error = set_image(&cloneset(), &[assign("nope=x:1")]).unwrap_err();
        assert!(
            error.contains("\"nope\"") && error.contains("main, log"),
            "{error}"
        );
        assert!("main".parse::<ImageAssignment>().is_err());
        assert!("=x".parse::<ImageAssignment>().is_err());
    }

    #[test]
    fn scale_down_lists_the_pods_and_lowers_replicas_by_the_new_ones() {
        let pods = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        let patch = scale_down(&cloneset(), &pods(&["web-a", "web-old"])).unwrap();
        assert_eq!(patch["spec"]["replicas"], 2, "web-old was listed already");
        assert_eq!(
            patch["spec"]["scaleStrategy"]["podsToDelete"],
            json!(["web-old", "web-a"])
        );
        assert_eq!(patch["metadata"]["resourceVersion"], "42");
        assert!(scale_down(&cloneset(), &[]).is_err());
        let error = scale_down(&cloneset(), &pods(&["a", "b", "c", "d"])).unwrap_err();
        assert!(error.contains("spec.replicas is 3"), "{error}");
    }
}
