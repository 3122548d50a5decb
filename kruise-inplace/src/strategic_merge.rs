//! The part of Kubernetes' strategic merge patch that in-place updates use: a two-way patch between the
//! metadata of two pod templates, and applying such a patch to a pod's metadata.
//!
//! Upstream computes `metaDataPatch` with `strategicpatch.CreateTwoWayMergePatch(Pod{metadata: old},
//! Pod{metadata: new})` and applies it with `StrategicMergePatch`. For `ObjectMeta` that means:
//!
//! * maps (`labels`, `annotations`) are diffed key by key; a removed key is `null`;
//! * `finalizers` is a merge list of strings: added items in the list, removed ones in
//!   `$deleteFromPrimitiveList/finalizers`, and the full new order in `$setElementOrder/finalizers` whenever
//!   something was removed or the order changed;
//! * any other field is replaced when it differs and `null` when removed.
//!
//! Deviation: `ownerReferences` (a merge list keyed by `uid` upstream) is replaced as a whole. Pod templates do
//! not carry owner references in practice.

use serde_json::{Map, Value};

use crate::go_json;

const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";
/// The merge lists of primitives in `ObjectMeta`.
const PRIMITIVE_MERGE_LISTS: [&str; 1] = ["finalizers"];

/// Why a metadata patch cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// The patch is not JSON.
    #[error("patch is not JSON: {0}")]
    NotJson(String),
    /// The patch is not an object, or has keys other than `metadata`.
    #[error("only {{\"metadata\": {{...}}}} patches are supported, got {0}")]
    Unsupported(String),
    /// A directive's value is not a list.
    #[error("{directive} must be a list, got {value}")]
    Directive {
        /// The directive key.
        directive: String,
        /// The value found.
        value: String,
    },
}

/// The two-way strategic merge patch from `Pod{metadata: old}` to `Pod{metadata: new}`, as the bytes Go writes:
/// `{}` when equal, else `{"metadata":{...}}` with sorted keys. Both values must hold `ObjectMeta` as Go writes it
/// (see [`crate::go_types`]).
#[must_use]
pub fn two_way_metadata_patch(old: &Value, new: &Value) -> String {
    let patch = match (old, new) {
        (Value::Object(old), Value::Object(new)) => diff_maps(old, new, true),
        _ if old == new => Map::new(),
        _ => {
            let mut whole = Map::new();
            whole.insert("metadata".to_owned(), new.clone());
            return go_json::to_string_sorted(&Value::Object(whole));
        }
    };
    if patch.is_empty() {
        return "{}".to_owned();
    }
    let mut root = Map::new();
    root.insert("metadata".to_owned(), Value::Object(patch));
    go_json::to_string_sorted(&Value::Object(root))
}

fn diff_maps(
    old: &Map<String, Value>,
    new: &Map<String, Value>,
    object_meta: bool,
) -> Map<String, Value> {
    let mut patch = Map::new();
    for (key, new_value) in new {
        let Some(old_value) = old.get(key) else {
            patch.insert(key.clone(), new_value.clone());
            continue;
        };
        match (old_value, new_value) {
            (Value::Object(old_map), Value::Object(new_map)) => {
                let nested = diff_maps(old_map, new_map, false);
                if !nested.is_empty() {
                    patch.insert(key.clone(), Value::Object(nested));
                }
            }
            (Value::Array(old_list), Value::Array(new_list))
                if object_meta && PRIMITIVE_MERGE_LISTS.contains(&key.as_str()) =>
            {
                diff_primitive_list(key, old_list, new_list, &mut patch);
            }
            _ if old_value != new_value => {
                patch.insert(key.clone(), new_value.clone());
            }
            _ => {}
        }
    }
    for key in old.keys() {
        if !new.contains_key(key) {
            patch.insert(key.clone(), Value::Null);
        }
    }
    patch
}

/// Go's `diffListsOfScalars` plus the `$setElementOrder` rule for merge lists of primitives.
fn diff_primitive_list(key: &str, old: &[Value], new: &[Value], patch: &mut Map<String, Value>) {
    if old.is_empty() {
        if !new.is_empty() {
            patch.insert(key.to_owned(), Value::Array(new.to_vec()));
        }
        return;
    }
    let mut old_sorted: Vec<(String, &Value)> = old.iter().map(|v| (scalar_text(v), v)).collect();
    let mut new_sorted: Vec<(String, &Value)> = new.iter().map(|v| (scalar_text(v), v)).collect();
    old_sorted.sort_by(|a, b| a.0.cmp(&b.0));
    new_sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let (mut additions, mut deletions) = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    loop {
        match (old_sorted.get(i), new_sorted.get(j)) {
            (None, None) => break,
            (Some((old_text, _)), Some((new_text, _))) if old_text == new_text => {
                i += 1;
                j += 1;
            }
            (Some((old_text, old_value)), Some((new_text, _))) if old_text < new_text => {
                deletions.push((*old_value).clone());
                i += 1;
            }
            (Some((old_text, old_value)), None) => {
                let _ = old_text;
                deletions.push((*old_value).clone());
                i += 1;
            }
            (_, Some((_, new_value))) => {
                additions.push((*new_value).clone());
                j += 1;
            }
        }
    }
    dedup_in_order(&mut deletions);
    let additions = order_by(additions, new);
    let order_changed = old != new;
    if !additions.is_empty() {
        patch.insert(key.to_owned(), Value::Array(additions));
    }
    if !deletions.is_empty() {
        patch.insert(
            format!("{DELETE_FROM_PRIMITIVE_LIST}{key}"),
            Value::Array(deletions.clone()),
        );
    }
    if !deletions.is_empty() || order_changed {
        patch.insert(
            format!("{SET_ELEMENT_ORDER}{key}"),
            Value::Array(new.to_vec()),
        );
    }
}

/// Go's `fmt.Sprintf("%v", scalar)` for the scalars that appear in metadata lists.
fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn dedup_in_order(items: &mut Vec<Value>) {
    let mut seen: Vec<Value> = Vec::with_capacity(items.len());
    items.retain(|item| {
        if seen.contains(item) {
            false
        } else {
            seen.push(item.clone());
            true
        }
    });
}

fn index_in(list: &[Value], item: &Value) -> Option<usize> {
    list.iter().position(|candidate| candidate == item)
}

/// Go's `normalizeSliceOrder`: items found in `order` sorted (stably) by their position there, then the others
/// in their current order.
fn order_by(items: Vec<Value>, order: &[Value]) -> Vec<Value> {
    let (mut found, missing): (Vec<Value>, Vec<Value>) = items
        .into_iter()
        .partition(|item| index_in(order, item).is_some());
    found.sort_by_key(|item| index_in(order, item));
    found.extend(missing);
    found
}

/// Applies a metadata patch (`{"metadata": {...}}` or `{}`, as produced by [`two_way_metadata_patch`]) to an
/// `ObjectMeta` JSON object, with `StrategicMergePatch`'s semantics for maps, `null`s and primitive merge lists.
///
/// # Errors
/// [`MergeError`] when the patch is not JSON, touches more than `metadata`, or has a malformed directive.
#[cfg(test)]
pub fn apply_metadata_patch(meta: &mut Map<String, Value>, patch: &[u8]) -> Result<(), MergeError> {
    merge_object_meta(meta, parse_metadata_patch(patch)?)
}

/// The `metadata` fields of a patch (empty for `{}`).
///
/// # Errors
/// [`MergeError`] when the patch is not JSON or touches more than `metadata`.
pub fn parse_metadata_patch(patch: &[u8]) -> Result<Map<String, Value>, MergeError> {
    let patch: Value =
        serde_json::from_slice(patch).map_err(|error| MergeError::NotJson(error.to_string()))?;
    let Value::Object(mut root) = patch else {
        return Err(MergeError::Unsupported(go_json::to_string_sorted(&patch)));
    };
    let metadata = root.remove("metadata");
    if !root.is_empty() {
        return Err(MergeError::Unsupported(go_json::to_string_sorted(
            &Value::Object(root),
        )));
    }
    match metadata {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(fields)) => Ok(fields),
        Some(other) => Err(MergeError::Unsupported(go_json::to_string_sorted(&other))),
    }
}

/// Merges the `metadata` fields of a patch (see [`parse_metadata_patch`]) into an `ObjectMeta` JSON object.
///
/// # Errors
/// [`MergeError::Directive`] for a malformed directive.
pub fn merge_object_meta(
    meta: &mut Map<String, Value>,
    mut patch: Map<String, Value>,
) -> Result<(), MergeError> {
    // `$setElementOrder` first, merging its list with the patch list and the live list (Go's
    // mergePatchIntoOriginal); the patch list is consumed there.
    let orders: Vec<(String, Value)> = patch
        .iter()
        .filter(|(key, _)| key.starts_with(SET_ELEMENT_ORDER))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    for (directive, order) in orders {
        let field = directive.trim_start_matches(SET_ELEMENT_ORDER).to_owned();
        let Value::Array(order) = order else {
            return Err(MergeError::Directive {
                directive,
                value: go_json::to_string_sorted(&order),
            });
        };
        let original = match meta.get(&field) {
            Some(Value::Array(list)) => Some(list.clone()),
            _ => None,
        };
        let patch_list = match patch.remove(&field) {
            Some(Value::Array(list)) => Some(list),
            Some(other) => {
                patch.insert(field.clone(), other);
                None
            }
            None => None,
        };
        let merged = match (&original, patch_list) {
            (None, None) => continue,
            (None, Some(list)) => list,
            (Some(list), None) => list.clone(),
            (Some(list), Some(additions)) => merge_primitive_lists(list, &additions),
        };
        let original = original.unwrap_or_default();
        let (in_order, server_only): (Vec<Value>, Vec<Value>) = merged
            .into_iter()
            .partition(|item| index_in(&order, item).is_some());
        meta.insert(
            field,
            Value::Array(normalize_element_order(
                in_order,
                server_only,
                &order,
                &original,
            )),
        );
    }
    for (key, value) in patch {
        if key.starts_with(SET_ELEMENT_ORDER) {
            continue;
        }
        if let Some(field) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            let Value::Array(deletions) = value else {
                return Err(MergeError::Directive {
                    directive: key,
                    value: go_json::to_string_sorted(&value),
                });
            };
            if let Some(Value::Array(list)) = meta.get_mut(field) {
                list.retain(|item| !deletions.contains(item));
            }
            continue;
        }
        merge_field(meta, key, value, true);
    }
    Ok(())
}

fn merge_field(target: &mut Map<String, Value>, key: String, value: Value, object_meta: bool) {
    if value.is_null() {
        target.remove(&key);
        return;
    }
    match (target.get_mut(&key), value) {
        (None, mut value) => {
            discard_nulls(&mut value);
            target.insert(key, value);
        }
        (Some(Value::Object(existing)), Value::Object(fields)) => {
            for (nested_key, nested_value) in fields {
                merge_field(existing, nested_key, nested_value, false);
            }
        }
        (Some(Value::Array(existing)), Value::Array(additions))
            if object_meta && PRIMITIVE_MERGE_LISTS.contains(&key.as_str()) =>
        {
            *existing = merge_primitive_lists(existing, &additions);
        }
        (Some(existing), value) => *existing = value,
    }
}

/// Go's `mergeSlice` for primitives: live items then patch items, duplicates dropped, ordered by the patch
/// where it has an opinion and by the live list otherwise.
fn merge_primitive_lists(original: &[Value], patch: &[Value]) -> Vec<Value> {
    let mut merged: Vec<Value> = original.iter().chain(patch).cloned().collect();
    dedup_in_order(&mut merged);
    let (in_patch, server_only): (Vec<Value>, Vec<Value>) = merged
        .into_iter()
        .partition(|item| index_in(patch, item).is_some());
    normalize_element_order(in_patch, server_only, patch, original)
}

/// Go's `normalizeElementOrder` + `mergeSortedSlice`: sort the patch items by `patch_order` and the live-only
/// items by `server_order`, then interleave them so that both relative orders hold.
fn normalize_element_order(
    patch_items: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
) -> Vec<Value> {
    let right = order_by(patch_items, patch_order);
    let left = order_by(server_only, server_order);
    let mut merged = Vec::with_capacity(left.len() + right.len());
    let (mut left, mut right) = (left.into_iter().peekable(), right.into_iter().peekable());
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => matches!(
                (index_in(server_order, l), index_in(server_order, r)),
                (Some(li), Some(ri)) if li < ri
            ),
        };
        let next = if take_left { left.next() } else { right.next() };
        merged.extend(next);
    }
    merged
}

fn discard_nulls(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.retain(|_, field| !field.is_null());
            fields.values_mut().for_each(discard_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(discard_nulls),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_removed_finalizer_and_a_changed_label() {
        let old = json!({"labels": {"k": "v", "k2": "v2"}, "finalizers": ["fz1", "fz2"]});
        let new = json!({"labels": {"k": "v", "k1": "v1"}, "finalizers": ["fz2"]});
        assert_eq!(
            two_way_metadata_patch(&old, &new),
            r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["fz1"],"$setElementOrder/finalizers":["fz2"],"labels":{"k1":"v1","k2":null}}}"#
        );
    }

    fn apply(meta: Value, patch: &str) -> Value {
        let Value::Object(mut meta) = meta else {
            panic!()
        };
        apply_metadata_patch(&mut meta, patch.as_bytes()).unwrap();
        Value::Object(meta)
    }

    /// Patches from upstream's TestCalculateInPlaceUpdateSpec and obvious variants.
    #[test]
    fn two_way_patches() {
        let cases = [
            (
                json!({"labels": {"k": "v"}}),
                json!({"labels": {"k": "v", "k1": "v1"}}),
                r#"{"metadata":{"labels":{"k1":"v1"}}}"#,
            ),
            (
                json!({"labels": {"k": "v"}}),
                json!({"labels": {"k": "v"}}),
                "{}",
            ),
            (
                json!({"labels": {"k": "v"}}),
                json!({}),
                r#"{"metadata":{"labels":null}}"#,
            ),
            (
                json!({}),
                json!({"annotations": {"a": "<&>"}}),
                r#"{"metadata":{"annotations":{"a":"\u003c\u0026\u003e"}}}"#,
            ),
            (
                json!({"finalizers": ["a"]}),
                json!({"finalizers": ["a", "b"]}),
                r#"{"metadata":{"$setElementOrder/finalizers":["a","b"],"finalizers":["b"]}}"#,
            ),
            (
                json!({"finalizers": ["a", "b"]}),
                json!({"finalizers": ["b", "a"]}),
                r#"{"metadata":{"$setElementOrder/finalizers":["b","a"]}}"#,
            ),
            (
                json!({"finalizers": ["a", "b"]}),
                json!({"finalizers": ["b", "c"]}),
                r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"],"$setElementOrder/finalizers":["b","c"],"finalizers":["c"]}}"#,
            ),
            (
                json!({"finalizers": ["a"]}),
                json!({}),
                r#"{"metadata":{"finalizers":null}}"#,
            ),
            (
                json!({}),
                json!({"finalizers": ["a"]}),
                r#"{"metadata":{"finalizers":["a"]}}"#,
            ),
            (
                json!({"name": "x"}),
                json!({"name": "y"}),
                r#"{"metadata":{"name":"y"}}"#,
            ),
        ];
        for (old, new, expected) in cases {
            assert_eq!(
                two_way_metadata_patch(&old, &new),
                expected,
                "{old} -> {new}"
            );
            // Applying the patch to the old metadata gives the new one.
            assert_eq!(apply(old.clone(), expected), new, "{old} + {expected}");
        }
    }

    #[test]
    fn apply_keeps_what_the_pod_has_on_its_own() {
        let pod = json!({"labels": {"own": "1", "k2": "v2"}, "finalizers": ["x", "fz1", "fz2"]});
        let patch = r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["fz1"],"$setElementOrder/finalizers":["fz2","fz3"],"finalizers":["fz3"],"labels":{"k1":"v1","k2":null}}}"#;
        assert_eq!(
            apply(pod, patch),
            json!({"labels": {"own": "1", "k1": "v1"}, "finalizers": ["x", "fz2", "fz3"]})
        );
        // A label map the pod does not have yet: nulls are dropped, the rest is taken.
        assert_eq!(
            apply(json!({}), r#"{"metadata":{"labels":{"a":"1","b":null}}}"#),
            json!({"labels": {"a": "1"}})
        );
        assert_eq!(
            apply(json!({"labels": {"a": "1"}}), "{}"),
            json!({"labels": {"a": "1"}})
        );
    }

    #[test]
    fn malformed_patches() {
        let mut meta = Map::new();
        assert!(matches!(
            apply_metadata_patch(&mut meta, b"not json"),
            Err(MergeError::NotJson(_))
        ));
        assert!(matches!(
            apply_metadata_patch(&mut meta, br#"{"spec":{}}"#),
            Err(MergeError::Unsupported(_))
        ));
        assert!(matches!(
            apply_metadata_patch(
                &mut meta,
                br#"{"metadata":{"$deleteFromPrimitiveList/finalizers":"a"}}"#
            ),
            Err(MergeError::Directive { .. })
        ));
    }
}

/// Property test: a two-way metadata patch of labels and finalizers turns the old metadata into the new.
#[cfg(test)]
mod properties {
    #![allow(clippy::unwrap_used)] // test code

    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::{apply_metadata_patch, two_way_metadata_patch};

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn metadata_patches_round_trip(
            old_labels in proptest::collection::btree_map("[a-c]{1,2}", "[x-z]{1,2}", 0..4),
            new_labels in proptest::collection::btree_map("[a-c]{1,2}", "[x-z]{1,2}", 0..4),
            old_finalizers in proptest::collection::btree_set("f[0-4]", 0..4),
            new_finalizers in proptest::collection::btree_set("f[0-4]", 0..4),
            shuffle in any::<bool>(),
        ) {
            let mut new_list: Vec<String> = new_finalizers.into_iter().collect();
            if shuffle {
                new_list.reverse();
            }
            let meta = |labels: &BTreeMap<String, String>, finalizers: Vec<String>| {
                let mut value = json!({});
                if !labels.is_empty() {
                    value["labels"] = json!(labels);
                }
                if !finalizers.is_empty() {
                    value["finalizers"] = json!(finalizers);
                }
                value
            };
            let old = meta(&old_labels, old_finalizers.into_iter().collect());
            let new = meta(&new_labels, new_list);
            let patch = two_way_metadata_patch(&old, &new);
            let Value::Object(mut applied) = old.clone() else {
                return Err(TestCaseError::fail("the old metadata is an object"));
            };
            apply_metadata_patch(&mut applied, patch.as_bytes()).unwrap();
            // An emptied map or list stays as an empty value where Go would drop it with omitempty.
            applied.retain(|_, value| {
                !matches!(value, Value::Object(m) if m.is_empty())
                    && !matches!(value, Value::Array(a) if a.is_empty())
            });
            prop_assert_eq!(Value::Object(applied), new, "{}", patch);
        }
    }
}
