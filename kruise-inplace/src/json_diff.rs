//! The RFC 6902 diff of two JSON documents, operation for operation the one `json_patch::diff` (json-patch 4.2)
//! produces, without its cost on equal subtrees.
//!
//! `json_patch::diff` walks every node of both documents and builds a JSON pointer for each, so diffing two
//! revisions that differ in one image costs as much as walking the whole template. This walk skips equal
//! subtrees (a deep equality check, no allocation) and builds a pointer only for the operations it emits. The
//! operations and their order are the same: object keys of the new document in order (`add` or a recursive
//! diff), then removed keys; arrays index by index (`add` past the old length, `remove` at the new length past
//! the new one); any other difference is a `replace`. A property test checks the equality against
//! `json_patch::diff`.

use std::borrow::Cow;

use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, Patch, PatchOperation, RemoveOperation, ReplaceOperation};
use serde_json::{Map, Value};

/// The RFC 6902 patch from `left` to `right`, equal to `json_patch::diff(left, right)`.
#[must_use]
pub fn diff(left: &Value, right: &Value) -> Patch {
    let mut patch = Vec::new();
    let mut path = Vec::new();
    diff_value(left, right, &mut path, &mut patch);
    Patch(patch)
}

fn pointer(path: &[Cow<'_, str>], last: Option<&str>) -> PointerBuf {
    let tokens: Vec<&str> = path.iter().map(AsRef::as_ref).chain(last).collect();
    let mut text = String::with_capacity(tokens.iter().map(|token| token.len() + 1).sum());
    for token in &tokens {
        text.push('/');
        for ch in token.chars() {
            match ch {
                '~' => text.push_str("~0"),
                '/' => text.push_str("~1"),
                _ => text.push(ch),
            }
        }
    }
    PointerBuf::parse(text).unwrap_or_else(|_| PointerBuf::from_tokens(tokens))
}

fn diff_value<'a>(
    left: &'a Value,
    right: &'a Value,
    path: &mut Vec<Cow<'a, str>>,
    patch: &mut Vec<PatchOperation>,
) {
    match (left, right) {
        (Value::Object(left), Value::Object(right)) => diff_object(left, right, path, patch),
        (Value::Array(left), Value::Array(right)) => diff_array(left, right, path, patch),
        _ if left == right => {}
        _ => patch.push(PatchOperation::Replace(ReplaceOperation {
            path: pointer(path, None),
            value: right.clone(),
        })),
    }
}

fn diff_object<'a>(
    left: &'a Map<String, Value>,
    right: &'a Map<String, Value>,
    path: &mut Vec<Cow<'a, str>>,
    patch: &mut Vec<PatchOperation>,
) {
    for (key, right_value) in right {
        match left.get(key) {
            Some(left_value) if left_value == right_value => {}
            Some(left_value) => {
                path.push(Cow::Borrowed(key));
                diff_value(left_value, right_value, path, patch);
                path.pop();
            }
            None => patch.push(PatchOperation::Add(AddOperation {
                path: pointer(path, Some(key)),
                value: right_value.clone(),
            })),
        }
    }
    for key in left.keys().filter(|key| !right.contains_key(*key)) {
        patch.push(PatchOperation::Remove(RemoveOperation {
            path: pointer(path, Some(key)),
        }));
    }
}

fn diff_array<'a>(
    left: &'a [Value],
    right: &'a [Value],
    path: &mut Vec<Cow<'a, str>>,
    patch: &mut Vec<PatchOperation>,
) {
    let mut shift = 0_usize;
    for index in 0..left.len().max(right.len()) {
        let position = index.saturating_sub(shift).to_string();
        match (left.get(index), right.get(index)) {
            (Some(left_value), Some(right_value)) => {
                if left_value != right_value {
                    path.push(Cow::Owned(position));
                    diff_value(left_value, right_value, path, patch);
                    path.pop();
                }
            }
            (Some(_), None) => {
                shift += 1;
                patch.push(PatchOperation::Remove(RemoveOperation {
                    path: pointer(path, Some(&position)),
                }));
            }
            (None, Some(right_value)) => patch.push(PatchOperation::Add(AddOperation {
                path: pointer(path, Some(&position)),
                value: right_value.clone(),
            })),
            (None, None) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn same_operations_as_json_patch() {
        let cases = [
            (json!({"a": 1}), json!({"a": 2})),
            (
                json!({"a": {"b/c": [1, 2, 3]}}),
                json!({"a": {"b/c": [1]}, "d~": null}),
            ),
            (json!([1, 2, 3, 4]), json!([9])),
            (json!([]), json!([{"x": 1}, 2])),
            (json!({"k": [1, {"a": "b"}]}), json!({"k": {"a": "b"}})),
            (json!(null), json!({"a": 1})),
            (json!({"": 1}), json!({"": 2})),
            (json!({"a": 1, "b": 2}), json!({"b": 2})),
        ];
        for (left, right) in cases {
            assert_eq!(
                diff(&left, &right),
                json_patch::diff(&left, &right),
                "{left} -> {right}"
            );
        }
    }
}

/// Property test: the diff of any two JSON values is the one `json_patch::diff` makes, and it patches one into
/// the other.
#[cfg(test)]
mod properties {
    #![allow(clippy::unwrap_used)] // test code

    use proptest::prelude::*;
    use serde_json::Value;

    use super::diff;

    fn json_values() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3_i64..3).prop_map(Value::from),
            "[a-c/~]{0,2}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::btree_map("[a-c/~]{0,2}", inner, 0..4)
                    .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn matches_json_patch(left in json_values(), right in json_values()) {
            let ours = diff(&left, &right);
            prop_assert_eq!(&ours, &json_patch::diff(&left, &right));
            let mut patched = left.clone();
            json_patch::patch(&mut patched, &ours).unwrap();
            prop_assert_eq!(patched, right);
        }
    }
}
