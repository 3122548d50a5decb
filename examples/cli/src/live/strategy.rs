//! Where a workload keeps its rollout knobs (`paused`, `partition`, `maxUnavailable`) in each kind and
//! version, and how an int-or-percent knob turns into a pod count.

use serde_json::{Value, json};

use super::target::WorkloadKind;

/// The object holding the rolling update knobs: `spec.updateStrategy` in a v1alpha1 CloneSet, else
/// `spec.updateStrategy.rollingUpdate`.
#[must_use]
pub fn rolling_path(kind: WorkloadKind, version: &str) -> &'static [&'static str] {
    match (kind, version) {
        (WorkloadKind::CloneSet, "v1alpha1") => &["spec", "updateStrategy"],
        _ => &["spec", "updateStrategy", "rollingUpdate"],
    }
}

/// The field `leaf` of the rolling update knobs, as a dotted path for messages (`spec.updateStrategy.partition`).
#[must_use]
pub fn dotted(kind: WorkloadKind, version: &str, leaf: &str) -> String {
    let mut path: Vec<&str> = rolling_path(kind, version).to_vec();
    path.push(leaf);
    path.join(".")
}

/// The value of the rolling update knob `leaf`, if set (and not null).
#[must_use]
pub fn knob<'a>(
    object: &'a Value,
    kind: WorkloadKind,
    version: &str,
    leaf: &str,
) -> Option<&'a Value> {
    let pointer: String = rolling_path(kind, version)
        .iter()
        .chain(std::iter::once(&leaf))
        .map(|key| format!("/{key}"))
        .collect();
    object.pointer(&pointer).filter(|value| !value.is_null())
}

/// A patch setting the rolling update knob `leaf` to `value` (nested objects down to it).
#[must_use]
pub fn knob_patch(kind: WorkloadKind, version: &str, leaf: &str, value: &Value) -> Value {
    rolling_path(kind, version)
        .iter()
        .rev()
        .fold(json!({ leaf: value }), |inner, key| json!({ *key: inner }))
}

/// Whether the workload's rollout is paused.
#[must_use]
pub fn is_paused(object: &Value, kind: WorkloadKind, version: &str) -> bool {
    knob(object, kind, version, "paused")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// How a percentage becomes a count of pods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    /// Round a fraction of a pod up.
    Up,
    /// Round a fraction of a pod down.
    Down,
}

/// The pod count an int-or-percent `value` stands for among `total` pods.
///
/// # Errors
/// Neither a whole number nor a `N%` string (the message quotes the value).
pub fn scaled(value: &Value, total: i64, rounding: Rounding) -> Result<i64, String> {
    if let Some(count) = value.as_i64() {
        return Ok(count);
    }
    let percent = value
        .as_str()
        .and_then(|text| text.strip_suffix('%'))
        .and_then(|digits| digits.parse::<i64>().ok())
        .ok_or_else(|| {
            format!("{value}: expected a whole number or a percentage such as \"20%\"")
        })?;
    let product = percent.saturating_mul(total);
    Ok(match rounding {
        Rounding::Down => product.div_euclid(100),
        Rounding::Up => product.saturating_add(99).div_euclid(100),
    })
}

/// The number of pods the workload should run: `spec.replicas` (default 1), or for an Advanced DaemonSet
/// `status.desiredNumberScheduled`.
#[must_use]
pub fn desired_pods(object: &Value, kind: WorkloadKind) -> i64 {
    match kind {
        WorkloadKind::DaemonSet => object
            .pointer("/status/desiredNumberScheduled")
            .and_then(Value::as_i64)
            .unwrap_or(0),
        WorkloadKind::CloneSet | WorkloadKind::StatefulSet => object
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(1),
    }
}

/// How many pods the partition keeps at old revisions (0 when unset): percentages of the desired pods
/// round up for CloneSets and Advanced StatefulSets and down for Advanced DaemonSets, as upstream reads them.
///
/// # Errors
/// The partition is neither a number nor a percentage.
pub fn held_back(object: &Value, kind: WorkloadKind, version: &str) -> Result<i64, String> {
    let Some(partition) = knob(object, kind, version, "partition") else {
        return Ok(0);
    };
    let rounding = match kind {
        WorkloadKind::DaemonSet => Rounding::Down,
        WorkloadKind::CloneSet | WorkloadKind::StatefulSet => Rounding::Up,
    };
    scaled(partition, desired_pods(object, kind), rounding)
        .map(|count| count.max(0))
        .map_err(|error| format!("{}: {error}", dotted(kind, version, "partition")))
}

/// The `resourceVersion` the object was read at, for a conditional patch.
#[must_use]
pub fn resource_version(object: &Value) -> Value {
    object
        .pointer("/metadata/resourceVersion")
        .cloned()
        .unwrap_or(Value::Null)
}

/// `patch` made conditional on the object's `resourceVersion` (a 409 if it changed since it was read).
#[must_use]
pub fn conditional(object: &Value, mut patch: Value) -> Value {
    if let Some(fields) = patch.as_object_mut() {
        fields.insert(
            "metadata".to_owned(),
            json!({"resourceVersion": resource_version(object)}),
        );
    }
    patch
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_live_where_each_version_keeps_them() {
        let alpha = json!({"spec": {"updateStrategy": {"partition": "50%", "paused": true}, "replicas": 3}});
        assert!(is_paused(&alpha, WorkloadKind::CloneSet, "v1alpha1"));
        assert!(!is_paused(&alpha, WorkloadKind::CloneSet, "v1beta1"));
        assert_eq!(held_back(&alpha, WorkloadKind::CloneSet, "v1alpha1"), Ok(2));
        assert_eq!(held_back(&alpha, WorkloadKind::CloneSet, "v1beta1"), Ok(0));
        assert_eq!(
            knob_patch(WorkloadKind::StatefulSet, "v1beta1", "partition", &json!(1)),
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 1}}}})
        );
        assert_eq!(
            dotted(WorkloadKind::CloneSet, "v1alpha1", "partition"),
            "spec.updateStrategy.partition"
        );
        let ads = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": "50%"}}},
                         "status": {"desiredNumberScheduled": 3}});
        assert_eq!(held_back(&ads, WorkloadKind::DaemonSet, "v1beta1"), Ok(1));
        let bad = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": "lots"}}}});
        let error = held_back(&bad, WorkloadKind::StatefulSet, "v1beta1").unwrap_err();
        assert!(
            error.contains("rollingUpdate.partition") && error.contains("lots"),
            "{error}"
        );
    }

    #[test]
    fn percentages_round_as_asked() {
        assert_eq!(scaled(&json!("20%"), 3, Rounding::Up), Ok(1));
        assert_eq!(scaled(&json!("20%"), 3, Rounding::Down), Ok(0));
        assert_eq!(scaled(&json!("100%"), 7, Rounding::Up), Ok(7));
        assert_eq!(scaled(&json!(4), 7, Rounding::Up), Ok(4));
        assert!(scaled(&json!("x%"), 7, Rounding::Up).is_err());
        assert_eq!(
            conditional(
                &json!({"metadata": {"resourceVersion": "9"}}),
                json!({"spec": {}})
            ),
            json!({"metadata": {"resourceVersion": "9"}, "spec": {}})
        );
    }
}
