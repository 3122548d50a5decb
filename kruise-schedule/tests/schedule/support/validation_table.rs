//! Table rows for the validation rules (`validation_*`): a valid base object, one JSON merge patch per row
//! (and one for the stored object of an UPDATE), and the message expected, or none.

use kruise_schedule::validation::FieldError;
use serde_json::Value;

/// One row: the object is the base with `patch` merged in; with `old`, it is an UPDATE of the base with
/// `old` merged in.
pub struct Row {
    /// What the row checks.
    pub name: &'static str,
    /// Merged into the base to make the object (RFC 7386; `null` removes).
    pub patch: Value,
    /// Merged into the base to make the stored object of an UPDATE.
    pub old: Option<Value>,
    /// The message (or a part of it) of the one expected error; `None`: no error.
    pub expected: Option<&'static str>,
}

/// A CREATE row.
pub fn create(name: &'static str, patch: Value, expected: Option<&'static str>) -> Row {
    Row {
        name,
        patch,
        old: None,
        expected,
    }
}

/// An UPDATE row: the stored object is the base with `old` merged in.
pub fn update(name: &'static str, old: Value, patch: Value, expected: Option<&'static str>) -> Row {
    Row {
        name,
        patch,
        old: Some(old),
        expected,
    }
}

/// `base` with `patch` merged in (RFC 7386).
pub fn merged(base: &Value, patch: &Value) -> Value {
    let mut value = base.clone();
    json_merge(&mut value, patch);
    value
}

fn json_merge(target: &mut Value, patch: &Value) {
    let Value::Object(fields) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    let Value::Object(target) = target else {
        return;
    };
    for (key, value) in fields {
        if value.is_null() {
            target.remove(key);
        } else {
            json_merge(target.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// Runs every row through `validate` (which decodes and defaults the new and the stored object) and checks the outcome: no error, or exactly one whose message
/// contains the expected text. Every failing row is reported at once.
pub fn check(
    base: &Value,
    rows: &[Row],
    validate: impl Fn(Value, Option<Value>) -> Vec<FieldError>,
) {
    let mut failures = Vec::new();
    for row in rows {
        let object = merged(base, &row.patch);
        let old = row.old.as_ref().map(|old| merged(base, old));
        let errors: Vec<String> = validate(object, old)
            .iter()
            .map(ToString::to_string)
            .collect();
        let ok = match row.expected {
            None => errors.is_empty(),
            Some(expected) => errors.len() == 1 && errors[0].contains(expected),
        };
        if !ok {
            failures.push(format!(
                "{}: expected {:?}, got {errors:?}",
                row.name, row.expected
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
