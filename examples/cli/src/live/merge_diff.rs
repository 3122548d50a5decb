//! The JSON merge patch (RFC 7386) that turns one value into another: changed keys carry their new value,
//! removed keys `null`, arrays and scalars are replaced whole.

use serde_json::{Map, Value};

/// The merge patch taking `from` to `to`, or `None` when they are equal. `to` must hold no `null`s (a
/// merge patch cannot set a value to `null`); drop them first with [`without_nulls`].
#[must_use]
pub fn merge_diff(from: &Value, to: &Value) -> Option<Value> {
    if from == to {
        return None;
    }
    let (Value::Object(from), Value::Object(to)) = (from, to) else {
        return Some(to.clone());
    };
    let mut patch = Map::new();
    for (key, old) in from {
        match to.get(key) {
            None => {
                patch.insert(key.clone(), Value::Null);
            }
            Some(new) => {
                if let Some(change) = merge_diff(old, new) {
                    patch.insert(key.clone(), change);
                }
            }
        }
    }
    for (key, new) in to {
        if !from.contains_key(key) {
            patch.insert(key.clone(), new.clone());
        }
    }
    Some(Value::Object(patch))
}

/// `value` without the `null` members of its objects (at any depth): what the API server would store.
#[must_use]
pub fn without_nulls(value: &Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .filter(|(_, value)| !value.is_null())
                .map(|(key, value)| (key.clone(), without_nulls(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_patch_sets_changes_removes_keys_and_replaces_arrays() {
        let from = json!({"a": 1, "b": {"c": 2, "d": 3}, "list": [1, 2], "same": {"x": 1}});
        let to = json!({"a": 2, "b": {"c": 2}, "list": [1], "new": "n", "same": {"x": 1}});
        let patch = merge_diff(&from, &to).unwrap();
        assert_eq!(
            patch,
            json!({"a": 2, "b": {"d": null}, "list": [1], "new": "n"})
        );
        let mut applied = from.clone();
        json_patch::merge(&mut applied, &patch);
        assert_eq!(applied, to);
        assert_eq!(merge_diff(&to, &to), None);
        assert_eq!(
            without_nulls(&json!({"m": {"creationTimestamp": null, "n": [{"k": null, "v": 1}]}})),
            json!({"m": {"n": [{"v": 1}]}})
        );
    }
}
