//! Arbitrary JSON values, and the places inside a document where one can be put, for structure-aware fuzzing
//! of objects (a valid object with one value somewhere replaced).

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;

/// Any JSON value up to three levels deep: scalars that parsers trip over, arbitrary strings, arrays and
/// objects.
pub fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop::num::f64::NORMAL.prop_map(Value::from),
        prop::sample::select(&["", "0", "-0", "5%", "2147483648%", "x", "true", "Always"][..])
            .prop_map(Value::from),
        any::<String>().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-zA-Z]{0,8}", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// The JSON pointers of every value inside `document` (the root included), in document order.
pub fn pointers(document: &Value) -> Vec<String> {
    fn walk(value: &Value, at: &str, out: &mut Vec<String>) {
        out.push(at.to_owned());
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    let escaped = key.replace('~', "~0").replace('/', "~1");
                    walk(child, &format!("{at}/{escaped}"), out);
                }
            }
            Value::Array(items) => {
                for (index, child) in items.iter().enumerate() {
                    walk(child, &format!("{at}/{index}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(document, "", &mut out);
    out
}

/// `document` with the value at one of its places (picked by `at`; never the root) replaced by `value`.
pub fn replaced(mut document: Value, at: Index, value: Value) -> Value {
    let places = pointers(&document);
    let inner = places.get(1..).unwrap_or_default();
    if inner.is_empty() {
        return document;
    }
    if let Some(pointer) = inner.get(at.index(inner.len()))
        && let Some(slot) = document.pointer_mut(pointer)
    {
        *slot = value;
    }
    document
}
