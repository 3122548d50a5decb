//! What a pod's probe results do to it (upstream's `updatePodProbeStatus` of the NodePodProbe controller):
//!
//! * each result whose marker (still present, not being deleted) names a `podConditionType` gives that
//!   pod condition: status `True` when the state is `Succeeded`, `False` otherwise, with the result's
//!   `lastProbeTime`, `lastTransitionTime` and `message` (no reason, as upstream); when two probes name
//!   the same type, the first result listed wins;
//! * each result whose probe has a `markerPolicy` sets the labels and annotations of the policy whose
//!   `state` is the result's, and removes those of the other policy (so a result `Unknown` removes both);
//! * results with an empty state, and those of markers or probes that no longer exist, are skipped.
//!
//! [`condition_patch`] writes only the conditions that are missing or whose status or message differ
//! (upstream's `SetPodConditionIfMsgChanged`), as a strategic merge patch of `pods/status` (merged by
//! condition `type`); [`metadata_patch`] writes only the labels and annotations that change, as a JSON
//! merge patch of the pod (`null` removes).
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_api::apps::v1alpha1::{PodProbeMarker, PodProbeStatus};
//! use kruise_schedule::pod_probe::pod_marking::{marking, metadata_patch};
//!
//! let marker: PodProbeMarker = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "healthy", "namespace": "web"},
//!     "spec": {"selector": {"matchLabels": {"app": "web"}}, "probes": [{
//!         "name": "idle", "containerName": "main", "probe": {"exec": {"command": ["true"]}},
//!         "markerPolicy": [{"state": "Succeeded", "labels": {"idle": "true"}}]}]}
//! })).unwrap();
//! let status: PodProbeStatus = serde_json::from_value(serde_json::json!({
//!     "name": "web-0", "namespace": "web", "uid": "u0",
//!     "probeStates": [{"name": "healthy#idle", "state": "Succeeded"}]
//! })).unwrap();
//! let result = marking(&status, |name| (name == "healthy").then_some(&marker));
//! let pod = Pod::default();
//! assert_eq!(
//!     metadata_patch(&pod, &result),
//!     Some(serde_json::json!({"metadata": {"labels": {"idle": "true"}}}))
//! );
//! ```

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Pod, PodCondition};
use kruise_api::apps::v1alpha1::{PodProbeMarker, PodProbeStatus, ProbeMarkerPolicy, ProbeState};
use serde_json::{Map, Value, json};

use super::split_probe_name;

/// The conditions and the label and annotation changes one pod's results call for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodMarking {
    /// The pod conditions, one per type.
    pub conditions: Vec<PodCondition>,
    /// Labels to set (`Some`) or remove (`None`).
    pub labels: BTreeMap<String, Option<String>>,
    /// Annotations to set (`Some`) or remove (`None`).
    pub annotations: BTreeMap<String, Option<String>>,
}

/// The marking of the results in `status`; `marker` returns the PodProbeMarker of a name in the pod's
/// namespace, `None` when it is gone or being deleted.
#[must_use]
pub fn marking<'m>(
    status: &PodProbeStatus,
    marker: impl Fn(&str) -> Option<&'m PodProbeMarker>,
) -> PodMarking {
    let mut result = PodMarking::default();
    let mut condition_types = BTreeSet::new();
    for state in &status.probe_states {
        if state.state.as_str().is_empty() {
            continue;
        }
        let Some((marker_name, probe_name)) = split_probe_name(&state.name) else {
            continue;
        };
        let Some(marker) = marker(marker_name) else {
            continue;
        };
        let Some(probe) = marker
            .spec
            .probes
            .iter()
            .find(|probe| probe.name == probe_name)
        else {
            continue;
        };
        let condition_type = &probe.pod_condition_type;
        if !condition_type.is_empty() && condition_types.insert(condition_type.clone()) {
            let status = if state.state == ProbeState::Succeeded {
                "True"
            } else {
                "False"
            };
            result.conditions.push(PodCondition {
                type_: condition_type.clone(),
                status: status.to_owned(),
                last_probe_time: state.last_probe_time.clone(),
                last_transition_time: state.last_transition_time.clone(),
                message: Some(state.message.clone()).filter(|message| !message.is_empty()),
                ..PodCondition::default()
            });
        }
        apply_policies(&mut result, &probe.marker_policy, &state.state);
    }
    result
}

/// The matched policy's labels and annotations set, the other's removed (the matched one wins a key
/// both name).
fn apply_policies(result: &mut PodMarking, policies: &[ProbeMarkerPolicy], state: &ProbeState) {
    let (matched, opposite): (Vec<_>, Vec<_>) =
        policies.iter().partition(|policy| policy.state == *state);
    for policy in opposite {
        for key in policy.labels.keys() {
            result.labels.insert(key.clone(), None);
        }
        for key in policy.annotations.keys() {
            result.annotations.insert(key.clone(), None);
        }
    }
    for policy in matched {
        for (key, value) in &policy.labels {
            result.labels.insert(key.clone(), Some(value.clone()));
        }
        for (key, value) in &policy.annotations {
            result.annotations.insert(key.clone(), Some(value.clone()));
        }
    }
}

/// The strategic merge patch of `pods/status` writing the conditions of `marking` that the pod lacks or
/// has with another status or message; `None` when there is none.
#[must_use]
pub fn condition_patch(pod: &Pod, marking: &PodMarking) -> Option<Value> {
    let changed: Vec<&PodCondition> = marking
        .conditions
        .iter()
        .filter(|wanted| {
            kruise_api::pod::condition(pod, &wanted.type_).is_none_or(|current| {
                current.status != wanted.status
                    || current.message.as_deref().unwrap_or_default()
                        != wanted.message.as_deref().unwrap_or_default()
            })
        })
        .collect();
    if changed.is_empty() {
        return None;
    }
    Some(json!({"status": {"conditions": changed}}))
}

/// The JSON merge patch of the pod setting and removing the labels and annotations of `marking` that
/// differ from the pod's; `None` when nothing changes.
#[must_use]
pub fn metadata_patch(pod: &Pod, marking: &PodMarking) -> Option<Value> {
    let labels = changed_keys(pod.metadata.labels.as_ref(), &marking.labels);
    let annotations = changed_keys(pod.metadata.annotations.as_ref(), &marking.annotations);
    let mut metadata = Map::new();
    if !labels.is_empty() {
        metadata.insert("labels".to_owned(), Value::Object(labels));
    }
    if !annotations.is_empty() {
        metadata.insert("annotations".to_owned(), Value::Object(annotations));
    }
    (!metadata.is_empty()).then(|| json!({"metadata": metadata}))
}

fn changed_keys(
    current: Option<&BTreeMap<String, String>>,
    wanted: &BTreeMap<String, Option<String>>,
) -> Map<String, Value> {
    wanted
        .iter()
        .filter(|(key, value)| current.and_then(|map| map.get(*key)) != value.as_ref())
        .map(|(key, value)| {
            (
                key.clone(),
                value.clone().map_or(Value::Null, Value::String),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn marker() -> PodProbeMarker {
        serde_json::from_value(json!({
            "metadata": {"name": "m", "namespace": "web"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "probes": [
                {"name": "a", "containerName": "main", "podConditionType": "x.io/ready",
                    "probe": {"exec": {"command": ["true"]}},
                    "markerPolicy": [
                        {"state": "Succeeded", "labels": {"ok": "yes"}},
                        {"state": "Failed", "annotations": {"broken": "yes"}}]},
                {"name": "b", "containerName": "main", "podConditionType": "x.io/ready",
                    "probe": {"exec": {"command": ["true"]}}},
                {"name": "c", "containerName": "main",
                    "probe": {"exec": {"command": ["true"]}},
                    "markerPolicy": [{"state": "Succeeded", "labels": {"c": "on"}}]}
            ]}
        }))
        .unwrap()
    }

    fn status(states: serde_json::Value) -> PodProbeStatus {
        let mut value = json!({"name": "p", "namespace": "web", "uid": "u"});
        value["probeStates"] = states;
        serde_json::from_value(value).unwrap()
    }

    fn summary(marking: &PodMarking) -> (Vec<(String, String)>, Value) {
        let conditions = marking
            .conditions
            .iter()
            .map(|condition| (condition.type_.clone(), condition.status.clone()))
            .collect();
        let metadata = json!({"labels": marking.labels, "annotations": marking.annotations});
        (conditions, metadata)
    }

    #[test]
    fn marking_table() {
        let marker = marker();
        let lookup = |name: &str| (name == "m").then_some(&marker);
        let rows = [
            (
                "succeeded: condition True, its labels set, the Failed annotations removed",
                json!([{"name": "m#a", "state": "Succeeded"}]),
                vec![("x.io/ready", "True")],
                json!({"labels": {"ok": "yes"}, "annotations": {"broken": null}}),
            ),
            (
                "failed: condition False, the Succeeded labels removed",
                json!([{"name": "m#a", "state": "Failed"}]),
                vec![("x.io/ready", "False")],
                json!({"labels": {"ok": null}, "annotations": {"broken": "yes"}}),
            ),
            (
                "unknown: condition False, both policies removed",
                json!([{"name": "m#a", "state": "Unknown"}]),
                vec![("x.io/ready", "False")],
                json!({"labels": {"ok": null}, "annotations": {"broken": null}}),
            ),
            (
                "a second probe of the same condition type does not override the first",
                json!([{"name": "m#a", "state": "Succeeded"}, {"name": "m#b", "state": "Failed"}]),
                vec![("x.io/ready", "True")],
                json!({"labels": {"ok": "yes"}, "annotations": {"broken": null}}),
            ),
            (
                "without a Failed policy a failure removes the Succeeded labels",
                json!([{"name": "m#c", "state": "Failed"}]),
                vec![],
                json!({"labels": {"c": null}, "annotations": {}}),
            ),
            (
                "empty states, unknown markers and probes are skipped",
                json!([{"name": "m#a", "state": ""}, {"name": "gone#a", "state": "Succeeded"},
                    {"name": "m#zz", "state": "Succeeded"}, {"name": "nohash", "state": "Failed"}]),
                vec![],
                json!({"labels": {}, "annotations": {}}),
            ),
        ];
        for (case, states, conditions, metadata) in rows {
            let result = marking(&status(states), lookup);
            let conditions: Vec<(String, String)> = conditions
                .into_iter()
                .map(|(kind, value)| (kind.to_owned(), value.to_owned()))
                .collect();
            assert_eq!(summary(&result), (conditions, metadata), "{case}");
        }
    }

    #[test]
    fn condition_patch_writes_only_changes() {
        let marker = marker();
        let result = marking(
            &status(json!([{"name": "m#a", "state": "Succeeded", "message": "fine"}])),
            |_| Some(&marker),
        );
        let pod = |conditions: Value| -> Pod {
            serde_json::from_value(json!({"status": {"conditions": conditions}})).unwrap()
        };
        let rows = [
            ("missing", json!([]), true),
            (
                "same status and message",
                json!([{"type": "x.io/ready", "status": "True", "message": "fine"}]),
                false,
            ),
            (
                "other status",
                json!([{"type": "x.io/ready", "status": "False", "message": "fine"}]),
                true,
            ),
            (
                "other message",
                json!([{"type": "x.io/ready", "status": "True", "message": "old"}]),
                true,
            ),
        ];
        for (case, conditions, expected) in rows {
            let patch = condition_patch(&pod(conditions), &result);
            assert_eq!(patch.is_some(), expected, "{case}");
            if let Some(patch) = patch {
                assert_eq!(
                    patch["status"]["conditions"][0]["type"], "x.io/ready",
                    "{case}"
                );
                assert_eq!(
                    patch["status"]["conditions"][0]["message"], "fine",
                    "{case}"
                );
            }
        }
    }

    #[test]
    fn metadata_patch_writes_only_changes() {
        let marker = marker();
        let failed = marking(&status(json!([{"name": "m#a", "state": "Failed"}])), |_| {
            Some(&marker)
        });
        let pod = |metadata: Value| -> Pod {
            serde_json::from_value(json!({"metadata": metadata})).unwrap()
        };
        let rows = [
            (
                "label present, annotation absent",
                json!({"labels": {"ok": "yes"}}),
                Some(
                    json!({"metadata": {"labels": {"ok": null}, "annotations": {"broken": "yes"}}}),
                ),
            ),
            (
                "already marked",
                json!({"annotations": {"broken": "yes"}}),
                None,
            ),
            (
                "annotation with another value",
                json!({"annotations": {"broken": "no"}}),
                Some(json!({"metadata": {"annotations": {"broken": "yes"}}})),
            ),
        ];
        for (case, metadata, expected) in rows {
            assert_eq!(metadata_patch(&pod(metadata), &failed), expected, "{case}");
        }
    }
}
