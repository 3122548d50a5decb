//! The exact pod changes a decision asks for, and the two ways to carry them out: apply them to a [`Pod`] in
//! memory, or render the patch a controller sends.
//!
//! A [`PodChange`] has two halves because the API server writes them through different endpoints:
//!
//! * [`MetadataChange`] — labels to set, annotations to set, finalizers to **add**. It never removes
//!   anything: finalizers of other owners are never touched, whatever the pod looked like when the decision
//!   was made.
//! * [`StatusChange`] — pod conditions to write (through the `status` subresource), each replacing the
//!   condition of the same type.
//!
//! When a decision carries both, send the status first and the metadata second, as upstream does: the pod
//! is already not-ready when the user's operator sees the new lifecycle state.
//!
//! Patches are built as JSON values with `serde_json`, never by formatting strings, so any label value
//! (quotes, backslashes, newlines, non-ASCII) survives.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_lifecycle::change::MetadataChange;
//!
//! let change = MetadataChange::default()
//!     .with_label("example.com/said", r#"he said "hi""#)
//!     .with_finalizer("example.com/hold");
//! assert_eq!(
//!     change.strategic_merge_patch().unwrap(),
//!     serde_json::json!({"metadata": {
//!         "labels": {"example.com/said": "he said \"hi\""},
//!         "finalizers": ["example.com/hold"],
//!     }})
//! );
//!
//! let mut pod = Pod::default();
//! pod.metadata.finalizers = Some(vec!["someone.else/keep".into()]);
//! let pod = change.apply(&pod);
//! assert_eq!(
//!     pod.metadata.finalizers.unwrap(),
//!     ["someone.else/keep", "example.com/hold"]
//! );
//! ```

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use serde_json::{Map, Value};

/// Metadata to write: labels and annotations to set, finalizers to add (merged into the pod's list, never
/// replacing it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MetadataChange {
    /// Labels to set (existing labels with other keys are kept).
    pub labels: BTreeMap<String, String>,
    /// Annotations to set (existing annotations with other keys are kept).
    pub annotations: BTreeMap<String, String>,
    /// Finalizers to add when missing, in order, without duplicates. Nothing is ever removed.
    pub finalizers: Vec<String>,
}

impl MetadataChange {
    /// Adds a label to set.
    #[must_use]
    pub fn with_label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.labels.insert(key.into(), value.into());
        self
    }

    /// Adds an annotation to set.
    #[must_use]
    pub fn with_annotation(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.annotations.insert(key.into(), value.into());
        self
    }

    /// Adds a finalizer to add (ignored if already listed).
    #[must_use]
    pub fn with_finalizer(mut self, finalizer: impl Into<String>) -> Self {
        let finalizer = finalizer.into();
        if !self.finalizers.contains(&finalizer) {
            self.finalizers.push(finalizer);
        }
        self
    }

    /// Nothing to write.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.annotations.is_empty() && self.finalizers.is_empty()
    }

    /// Adds everything `other` writes; on a key both set, `other` wins.
    pub fn merge(&mut self, other: &Self) {
        self.labels
            .extend(other.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
        self.annotations.extend(
            other
                .annotations
                .iter()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        for finalizer in &other.finalizers {
            if !self.finalizers.contains(finalizer) {
                self.finalizers.push(finalizer.clone());
            }
        }
    }

    /// Writes the change into `pod`: sets labels and annotations, appends missing finalizers.
    pub fn apply_to(&self, pod: &mut Pod) {
        if !self.labels.is_empty() {
            pod.metadata
                .labels
                .get_or_insert_with(BTreeMap::new)
                .extend(self.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        if !self.annotations.is_empty() {
            pod.metadata
                .annotations
                .get_or_insert_with(BTreeMap::new)
                .extend(self.annotations.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        if !self.finalizers.is_empty() {
            let finalizers = pod.metadata.finalizers.get_or_insert_with(Vec::new);
            for finalizer in &self.finalizers {
                if !finalizers.contains(finalizer) {
                    finalizers.push(finalizer.clone());
                }
            }
        }
    }

    /// A copy of `pod` with the change written into it.
    #[must_use]
    pub fn apply(&self, pod: &Pod) -> Pod {
        let mut pod = pod.clone();
        self.apply_to(&mut pod);
        pod
    }

    /// The strategic-merge patch (`application/strategic-merge-patch+json`) for the pod:
    /// `{"metadata":{"labels":{..},"annotations":{..},"finalizers":[..]}}`, each part only when non-empty.
    /// `metadata.finalizers` has the `merge` patch strategy, so the listed finalizers are added to the pod's
    /// and nothing is removed. `None` when there is nothing to write.
    #[must_use]
    pub fn strategic_merge_patch(&self) -> Option<Value> {
        if self.is_empty() {
            return None;
        }
        let mut metadata = self.maps();
        if !self.finalizers.is_empty() {
            metadata.insert("finalizers".into(), strings(&self.finalizers));
        }
        Some(wrap("metadata", metadata))
    }

    /// The JSON merge patch (`application/merge-patch+json`, RFC 7386) for the pod `base` as observed. Labels
    /// and annotations merge key by key. A merge patch replaces lists, so when finalizers are added the patch
    /// carries the whole list (`base`'s finalizers followed by the missing ones) together with `base`'s
    /// `metadata.resourceVersion`: if anyone changed the pod since, the API server refuses the patch
    /// (409 Conflict) instead of dropping their finalizers. `None` when there is nothing to write.
    #[must_use]
    pub fn merge_patch(&self, base: &Pod) -> Option<Value> {
        if self.is_empty() {
            return None;
        }
        let mut metadata = self.maps();
        if !self.finalizers.is_empty() {
            let mut all = base.metadata.finalizers.clone().unwrap_or_default();
            for finalizer in &self.finalizers {
                if !all.contains(finalizer) {
                    all.push(finalizer.clone());
                }
            }
            metadata.insert("finalizers".into(), strings(&all));
            if let Some(version) = &base.metadata.resource_version {
                metadata.insert("resourceVersion".into(), Value::String(version.clone()));
            }
        }
        Some(wrap("metadata", metadata))
    }

    fn maps(&self) -> Map<String, Value> {
        let mut metadata = Map::new();
        if !self.labels.is_empty() {
            metadata.insert("labels".into(), string_map(&self.labels));
        }
        if !self.annotations.is_empty() {
            metadata.insert("annotations".into(), string_map(&self.annotations));
        }
        metadata
    }
}

/// Pod conditions to write through the `status` subresource, each replacing the pod's condition of the same
/// type (or appended when the pod has none).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusChange {
    /// The complete new conditions, at most one per type.
    pub conditions: Vec<PodCondition>,
}

impl StatusChange {
    /// Nothing to write.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.conditions.is_empty()
    }

    /// The condition of the given type this change writes.
    #[must_use]
    pub fn condition(&self, type_: &str) -> Option<&PodCondition> {
        self.conditions
            .iter()
            .find(|condition| condition.type_ == type_)
    }

    /// Records `condition`, replacing one of the same type already recorded.
    pub fn set(&mut self, condition: PodCondition) {
        match self
            .conditions
            .iter_mut()
            .find(|existing| existing.type_ == condition.type_)
        {
            Some(existing) => *existing = condition,
            None => self.conditions.push(condition),
        }
    }

    /// Adds everything `other` writes; on a type both write, `other` wins.
    pub fn merge(&mut self, other: &Self) {
        for condition in &other.conditions {
            self.set(condition.clone());
        }
    }

    /// Writes the conditions into `pod.status.conditions` (replace by type, else append).
    pub fn apply_to(&self, pod: &mut Pod) {
        if self.conditions.is_empty() {
            return;
        }
        let conditions = pod
            .status
            .get_or_insert_with(PodStatus::default)
            .conditions
            .get_or_insert_with(Vec::new);
        for condition in &self.conditions {
            match conditions
                .iter_mut()
                .find(|existing| existing.type_ == condition.type_)
            {
                Some(existing) => *existing = condition.clone(),
                None => conditions.push(condition.clone()),
            }
        }
    }

    /// A copy of `pod` with the conditions written into it.
    #[must_use]
    pub fn apply(&self, pod: &Pod) -> Pod {
        let mut pod = pod.clone();
        self.apply_to(&mut pod);
        pod
    }

    /// The strategic-merge patch for the `status` subresource: `{"status":{"conditions":[..]}}`, plus
    /// `base`'s `metadata.resourceVersion` as a precondition.
    ///
    /// `status.conditions` merges by `type` and a strategic merge merges each condition field by field, so a
    /// field that `base`'s condition has and the new one lacks (say the `reason` of a `Ready=False` that
    /// becomes `True`) is sent as `null`: the written condition is exactly the new one.
    ///
    /// Several writers share the `KruisePodReady` message, so a write made from a stale pod must fail with
    /// 409 Conflict (then re-read the pod and decide again) rather than drop another writer's entry; upstream
    /// gets the same guarantee from get + update-status with retry on conflict. `None` when there is nothing
    /// to write.
    #[must_use]
    pub fn strategic_merge_patch(&self, base: &Pod) -> Option<Value> {
        if self.conditions.is_empty() {
            return None;
        }
        let mut conditions = Vec::with_capacity(self.conditions.len());
        for condition in &self.conditions {
            let Some(Value::Object(mut new)) = condition_json(condition) else {
                continue;
            };
            let old = kruise_api::pod::condition(base, &condition.type_).and_then(condition_json);
            if let Some(Value::Object(old)) = old {
                for key in old.keys() {
                    if !new.contains_key(key) {
                        new.insert(key.clone(), Value::Null);
                    }
                }
            }
            conditions.push(Value::Object(new));
        }
        Some(status_patch(base, Value::Array(conditions)))
    }

    /// The JSON merge patch for the `status` subresource: a merge patch replaces lists, so it carries the
    /// whole condition list of `base` with this change applied, plus `base`'s `metadata.resourceVersion`.
    /// `None` when there is nothing to write.
    #[must_use]
    pub fn merge_patch(&self, base: &Pod) -> Option<Value> {
        if self.conditions.is_empty() {
            return None;
        }
        let after = self.apply(base);
        let all = after
            .status
            .and_then(|status| status.conditions)
            .unwrap_or_default();
        Some(status_patch(base, conditions_json(&all)))
    }
}

/// Everything one decision writes to a pod: metadata (labels, annotations, finalizers) and status
/// (conditions).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodChange {
    /// Labels, annotations and finalizers, written with a metadata patch.
    pub metadata: MetadataChange,
    /// Conditions, written through the `status` subresource (send this first).
    pub status: StatusChange,
}

impl PodChange {
    /// Nothing to write.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.metadata.is_empty() && self.status.is_empty()
    }

    /// Writes both halves into `pod` (status first, as a controller sends them).
    pub fn apply_to(&self, pod: &mut Pod) {
        self.status.apply_to(pod);
        self.metadata.apply_to(pod);
    }

    /// A copy of `pod` with both halves written into it.
    #[must_use]
    pub fn apply(&self, pod: &Pod) -> Pod {
        let mut pod = pod.clone();
        self.apply_to(&mut pod);
        pod
    }

    /// Adds everything `other` writes; on a key or condition type both write, `other` wins.
    pub fn merge(&mut self, other: &Self) {
        self.metadata.merge(&other.metadata);
        self.status.merge(&other.status);
    }
}

fn strings(values: &[String]) -> Value {
    Value::Array(values.iter().cloned().map(Value::String).collect())
}

fn string_map(values: &BTreeMap<String, String>) -> Value {
    Value::Object(
        values
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

fn wrap(key: &str, inner: Map<String, Value>) -> Value {
    let mut outer = Map::new();
    outer.insert(key.into(), Value::Object(inner));
    Value::Object(outer)
}

fn condition_json(condition: &PodCondition) -> Option<Value> {
    // Serialising a PodCondition cannot fail: it holds strings, an optional integer and UTC times, which
    // k8s-openapi formats infallibly.
    serde_json::to_value(condition).ok()
}

fn conditions_json(conditions: &[PodCondition]) -> Value {
    Value::Array(conditions.iter().filter_map(condition_json).collect())
}

fn status_patch(base: &Pod, conditions: Value) -> Value {
    let mut status = Map::new();
    status.insert("conditions".into(), conditions);
    let mut patch = Map::new();
    if let Some(version) = &base.metadata.resource_version {
        let mut metadata = Map::new();
        metadata.insert("resourceVersion".into(), Value::String(version.clone()));
        patch.insert("metadata".into(), Value::Object(metadata));
    }
    patch.insert("status".into(), Value::Object(status));
    Value::Object(patch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_changes_render_nothing() {
        assert!(MetadataChange::default().strategic_merge_patch().is_none());
        assert!(
            MetadataChange::default()
                .merge_patch(&Pod::default())
                .is_none()
        );
        assert!(
            StatusChange::default()
                .strategic_merge_patch(&Pod::default())
                .is_none()
        );
        assert!(PodChange::default().is_empty());
    }

    #[test]
    fn a_patch_without_finalizers_never_mentions_them() {
        // Upstream sends `"finalizers":[]` when the hook has none, which a strategic merge treats as
        // "replace with nothing".
        let patch = MetadataChange::default()
            .with_label("a", "b")
            .strategic_merge_patch()
            .unwrap();
        assert_eq!(patch, json!({"metadata": {"labels": {"a": "b"}}}));
    }

    #[test]
    fn merge_patch_carries_the_whole_finalizer_list_and_a_precondition() {
        let mut base = Pod::default();
        base.metadata.resource_version = Some("42".into());
        base.metadata.finalizers = Some(vec!["other/keep".into(), "mine/x".into()]);
        let change = MetadataChange::default()
            .with_finalizer("mine/x")
            .with_finalizer("mine/y")
            .with_annotation("k", "v");
        assert_eq!(
            change.merge_patch(&base).unwrap(),
            json!({"metadata": {
                "annotations": {"k": "v"},
                "finalizers": ["other/keep", "mine/x", "mine/y"],
                "resourceVersion": "42"
            }})
        );
        let labels_only = MetadataChange::default().with_label("k", "v");
        assert_eq!(
            labels_only.merge_patch(&base).unwrap(),
            json!({"metadata": {"labels": {"k": "v"}}}),
            "no list, no precondition needed"
        );
    }

    #[test]
    fn status_changes_replace_by_type() {
        let mut pod = Pod::default();
        pod.metadata.resource_version = Some("7".into());
        pod.status = Some(PodStatus {
            conditions: Some(vec![
                PodCondition {
                    type_: "Ready".into(),
                    status: "True".into(),
                    ..Default::default()
                },
                PodCondition {
                    type_: "Other".into(),
                    status: "True".into(),
                    ..Default::default()
                },
            ]),
            ..Default::default()
        });
        let mut change = StatusChange::default();
        change.set(PodCondition {
            type_: "Ready".into(),
            status: "False".into(),
            ..Default::default()
        });
        change.set(PodCondition {
            type_: "KruisePodReady".into(),
            status: "False".into(),
            message: Some("[]".into()),
            ..Default::default()
        });
        let after = change.apply(&pod);
        let conditions = after.status.unwrap().conditions.unwrap();
        let summary: Vec<_> = conditions
            .iter()
            .map(|c| (c.type_.as_str(), c.status.as_str()))
            .collect();
        assert_eq!(
            summary,
            [
                ("Ready", "False"),
                ("Other", "True"),
                ("KruisePodReady", "False")
            ]
        );
        assert_eq!(
            change.strategic_merge_patch(&pod).unwrap(),
            json!({
                "metadata": {"resourceVersion": "7"},
                "status": {"conditions": [
                    {"type": "Ready", "status": "False"},
                    {"type": "KruisePodReady", "status": "False", "message": "[]"}
                ]}
            })
        );
        let mut stale = pod.clone();
        if let Some(ready) = stale
            .status
            .as_mut()
            .and_then(|status| status.conditions.as_mut())
            .and_then(|conditions| conditions.first_mut())
        {
            ready.reason = Some("ReadinessGatesNotReady".into());
            ready.message = Some("gate".into());
        }
        assert_eq!(
            change.strategic_merge_patch(&stale).unwrap()["status"]["conditions"][0],
            json!({"type": "Ready", "status": "False", "reason": null, "message": null}),
            "fields the new condition lacks are cleared, not merged"
        );
        assert_eq!(
            change.merge_patch(&pod).unwrap()["status"]["conditions"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
    }
}
