//! What a pod admitted into a subset gets (upstream `injectWorkloadSpreadIntoPod`):
//!
//! * the subset's `requiredNodeSelector` term ANDed into every required node selector term of the pod
//!   (its expressions and fields appended to each), or as the pod's only term when it has none;
//! * the subset's `preferredNodeSelector` terms appended to the pod's preferred terms;
//! * the subset's tolerations appended;
//! * the subset's `patch`, applied like a strategic merge patch for what subsets patch in practice: maps are
//!   merged key by key (`null` removes a key), `containers` and `initContainers` are merged item by item by
//!   `name` (an unknown name is appended), any other list or value replaces the pod's;
//! * the annotation `apps.kruise.io/matched-workloadspread` = `{"name":<spread>,"subset":<subset>}` (with
//!   `"uid"` when the pod was admitted before it had a name).
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_api::apps::v1beta1::WorkloadSpreadSubset;
//! use kruise_schedule::spread::workload_spread::injection::inject;
//!
//! let mut pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web-1"}, "spec": {"containers": [{"name": "main", "image": "nginx"}]}})).unwrap();
//! let subset: WorkloadSpreadSubset = serde_json::from_value(serde_json::json!({
//!     "name": "zone-a",
//!     "requiredNodeSelector": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
//!     "patch": {"metadata": {"labels": {"zone": "a"}}}})).unwrap();
//! inject(&mut pod, "default/ws", "ws", &subset, None).unwrap();
//! assert_eq!(pod.metadata.labels.unwrap()["zone"], "a");
//! assert_eq!(
//!     pod.metadata.annotations.unwrap()["apps.kruise.io/matched-workloadspread"],
//!     r#"{"name":"ws","subset":"zone-a"}"#
//! );
//! ```

use k8s_openapi::api::core::v1::{Affinity, NodeAffinity, NodeSelector, Pod, PodSpec};
use kruise_api::annotations::MatchedWorkloadSpread;
use kruise_api::apps::v1beta1::WorkloadSpreadSubset;
use kruise_api::keys::workloadspread::MATCHED_WORKLOADSPREAD_ANNOTATION;
use serde_json::{Map, Value};

use super::WorkloadSpreadError;

/// The lists a subset patch merges item by item, by `name`.
const NAMED_LISTS: [&str; 2] = ["containers", "initContainers"];

/// Injects `subset` of the WorkloadSpread `spread_name` (`spread`: `namespace/name`, for errors) into
/// `pod`; `uid` is the id recorded in `creatingPods` for a pod without a name.
///
/// # Errors
/// The subset's patch is not an object, or the patched pod is no longer a pod.
pub fn inject(
    pod: &mut Pod,
    spread: &str,
    spread_name: &str,
    subset: &WorkloadSpreadSubset,
    uid: Option<&str>,
) -> Result<(), WorkloadSpreadError> {
    if let Some(patch) = &subset.patch {
        apply_patch(pod, patch).map_err(|reason| WorkloadSpreadError::InvalidPatch {
            spread: spread.to_owned(),
            subset: subset.name.clone(),
            reason,
        })?;
    }
    let spec = pod.spec.get_or_insert_with(PodSpec::default);
    merge_node_affinity(spec, subset);
    if !subset.tolerations.is_empty() {
        spec.tolerations
            .get_or_insert_with(Vec::new)
            .extend(subset.tolerations.iter().cloned());
    }
    let matched = MatchedWorkloadSpread {
        name: spread_name.to_owned(),
        subset: subset.name.clone(),
        uid: uid.unwrap_or_default().to_owned(),
    };
    pod.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(
            MATCHED_WORKLOADSPREAD_ANNOTATION.to_owned(),
            kruise_api::annotations::to_value(&matched),
        );
    Ok(())
}

/// The subset's required term ANDed into the pod's required terms, its preferred terms appended.
fn merge_node_affinity(spec: &mut PodSpec, subset: &WorkloadSpreadSubset) {
    if subset.required_node_selector.is_none() && subset.preferred_node_selector.is_empty() {
        return;
    }
    let node_affinity = spec
        .affinity
        .get_or_insert_with(Affinity::default)
        .node_affinity
        .get_or_insert_with(NodeAffinity::default);
    if let Some(term) = &subset.required_node_selector {
        let required = node_affinity
            .required_during_scheduling_ignored_during_execution
            .get_or_insert_with(NodeSelector::default);
        if required.node_selector_terms.is_empty() {
            required.node_selector_terms.push(term.clone());
        } else {
            for existing in &mut required.node_selector_terms {
                if let Some(expressions) = &term.match_expressions {
                    existing
                        .match_expressions
                        .get_or_insert_with(Vec::new)
                        .extend(expressions.iter().cloned());
                }
                if let Some(fields) = &term.match_fields {
                    existing
                        .match_fields
                        .get_or_insert_with(Vec::new)
                        .extend(fields.iter().cloned());
                }
            }
        }
    }
    if !subset.preferred_node_selector.is_empty() {
        node_affinity
            .preferred_during_scheduling_ignored_during_execution
            .get_or_insert_with(Vec::new)
            .extend(subset.preferred_node_selector.iter().cloned());
    }
}

/// Applies a subset patch to the pod (see the module doc).
fn apply_patch(pod: &mut Pod, patch: &Value) -> Result<(), String> {
    let Value::Object(patch) = patch else {
        return Err(format!("invalid value {patch}: not an object"));
    };
    let mut value = serde_json::to_value(&*pod).map_err(|error| error.to_string())?;
    merge_object(&mut value, patch);
    *pod = serde_json::from_value(value).map_err(|error| format!("the patched pod: {error}"))?;
    Ok(())
}

fn merge_object(target: &mut Value, patch: &Map<String, Value>) {
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(target) = target else {
        return;
    };
    for (key, value) in patch {
        match value {
            Value::Null => {
                target.remove(key);
            }
            Value::Object(inner) => {
                merge_object(target.entry(key.clone()).or_insert(Value::Null), inner);
            }
            Value::Array(items) if NAMED_LISTS.contains(&key.as_str()) => {
                merge_named_list(target.entry(key.clone()).or_insert(Value::Null), items);
            }
            other => {
                target.insert(key.clone(), other.clone());
            }
        }
    }
}

fn merge_named_list(target: &mut Value, items: &[Value]) {
    if !target.is_array() {
        *target = Value::Array(Vec::new());
    }
    let Value::Array(list) = target else {
        return;
    };
    for item in items {
        let name = item.get("name").and_then(Value::as_str);
        let existing = name.and_then(|name| {
            list.iter_mut()
                .find(|entry| entry.get("name").and_then(Value::as_str) == Some(name))
        });
        match (existing, item) {
            (Some(entry), Value::Object(fields)) => merge_object(entry, fields),
            _ => list.push(item.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(value: Value) -> Pod {
        serde_json::from_value(value).unwrap()
    }

    fn subset(value: Value) -> WorkloadSpreadSubset {
        serde_json::from_value(value).unwrap()
    }

    fn expressions(pod: &Pod) -> Value {
        serde_json::to_value(
            &pod.spec
                .as_ref()
                .unwrap()
                .affinity
                .as_ref()
                .unwrap()
                .node_affinity
                .as_ref()
                .unwrap()
                .required_during_scheduling_ignored_during_execution,
        )
        .unwrap()
    }

    #[test]
    fn the_required_term_is_anded_into_every_term() {
        let zone = serde_json::json!({"key": "zone", "operator": "In", "values": ["a"]});
        let subset = subset(
            serde_json::json!({"name": "a", "requiredNodeSelector": {"matchExpressions": [zone]}}),
        );
        // No affinity: the subset's term is the only one.
        let mut bare =
            pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": []}}));
        inject(&mut bare, "ns/ws", "ws", &subset, None).unwrap();
        assert_eq!(
            expressions(&bare),
            serde_json::json!({"nodeSelectorTerms": [{"matchExpressions": [zone]}]})
        );
        // Two terms (ORed): each gets the subset's expression.
        let gpu = serde_json::json!({"key": "gpu", "operator": "Exists"});
        let ssd = serde_json::json!({"key": "disk", "operator": "In", "values": ["ssd"]});
        let mut with_terms = pod(
            serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [gpu]}, {"matchExpressions": [ssd]}]}}}}}),
        );
        inject(&mut with_terms, "ns/ws", "ws", &subset, None).unwrap();
        assert_eq!(
            expressions(&with_terms),
            serde_json::json!({"nodeSelectorTerms": [
                {"matchExpressions": [gpu, zone]}, {"matchExpressions": [ssd, zone]}]})
        );
    }

    #[test]
    fn preferred_terms_and_tolerations_are_appended() {
        let subset = subset(serde_json::json!({"name": "a",
            "preferredNodeSelector": [{"weight": 10, "preference": {"matchExpressions": [{"key": "k", "operator": "Exists"}]}}],
            "tolerations": [{"key": "spot", "operator": "Exists"}]}));
        let mut pod = pod(
            serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [],
            "tolerations": [{"key": "other", "operator": "Exists"}]}}),
        );
        inject(&mut pod, "ns/ws", "ws", &subset, Some("gen-1")).unwrap();
        let spec = pod.spec.as_ref().unwrap();
        assert_eq!(spec.tolerations.as_ref().unwrap().len(), 2);
        let preferred = spec
            .affinity
            .as_ref()
            .unwrap()
            .node_affinity
            .as_ref()
            .unwrap()
            .preferred_during_scheduling_ignored_during_execution
            .as_ref()
            .unwrap();
        assert_eq!(preferred[0].weight, 10);
        assert_eq!(
            pod.metadata.annotations.unwrap()[MATCHED_WORKLOADSPREAD_ANNOTATION],
            r#"{"name":"ws","subset":"a","uid":"gen-1"}"#
        );
    }

    #[test]
    fn the_patch_merges_metadata_and_containers_by_name() {
        let subset = subset(serde_json::json!({"name": "a", "patch": {
            "metadata": {"labels": {"zone": "a", "drop": null}, "annotations": {"note": "x"}},
            "spec": {"containers": [
                {"name": "main", "resources": {"limits": {"cpu": "2"}}},
                {"name": "extra", "image": "busybox"}]}}}));
        let mut pod = pod(
            serde_json::json!({"metadata": {"name": "p", "labels": {"app": "web", "drop": "me"}},
            "spec": {"containers": [{"name": "main", "image": "nginx", "resources": {"requests": {"cpu": "1"}}}]}}),
        );
        inject(&mut pod, "ns/ws", "ws", &subset, None).unwrap();
        let value = serde_json::to_value(&pod).unwrap();
        assert_eq!(
            value["metadata"]["labels"],
            serde_json::json!({"app": "web", "zone": "a"})
        );
        assert_eq!(value["metadata"]["annotations"]["note"], "x");
        assert_eq!(
            value["spec"]["containers"][0],
            serde_json::json!({"name": "main", "image": "nginx",
                "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}})
        );
        assert_eq!(value["spec"]["containers"][1]["name"], "extra");
    }

    #[test]
    fn a_patch_that_is_not_an_object_is_an_error_naming_the_subset() {
        let subset = subset(serde_json::json!({"name": "a", "patch": ["x"]}));
        let mut pod =
            pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": []}}));
        let error = inject(&mut pod, "ns/ws", "ws", &subset, None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "WorkloadSpread ns/ws: spec.subsets[a].patch: invalid value [\"x\"]: not an object"
        );
        let subset = WorkloadSpreadSubset {
            patch: Some(serde_json::json!({"spec": {"containers": "nope"}})),
            ..subset
        };
        let error = inject(&mut pod, "ns/ws", "ws", &subset, None).unwrap_err();
        assert!(error.to_string().contains("the patched pod"), "{error}");
    }
}
