//! "Nothing was lost": every non-zero value of the original appears, unchanged, in the re-serialised form.
//!
//! Zero values (`null`, `false`, `0`, `""`, `[]`, `{}`) may disappear, as they do with Go's `omitempty`, and
//! the output may add fields (for example an always-written empty struct).

use serde_json::Value;

/// Whether a JSON value is Go's zero value for its type.
pub fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(fields) => fields.is_empty(),
    }
}

/// Checks that `output` holds everything `original` does; the error names the first path that differs.
pub fn check(original: &Value, output: &Value) -> Result<(), String> {
    check_at("", original, output)
}

fn check_at(path: &str, original: &Value, output: &Value) -> Result<(), String> {
    match (original, output) {
        (Value::Object(fields), Value::Object(out_fields)) => {
            for (key, value) in fields {
                let here = format!("{path}/{key}");
                match out_fields.get(key) {
                    Some(out_value) => check_at(&here, value, out_value)?,
                    None if is_zero(value) => {}
                    None => return Err(format!("{here}: {value} was lost")),
                }
            }
            Ok(())
        }
        (Value::Object(fields), _) if fields.is_empty() => Ok(()),
        (Value::Array(items), Value::Array(out_items)) if items.len() == out_items.len() => items
            .iter()
            .zip(out_items)
            .enumerate()
            .try_for_each(|(i, (a, b))| check_at(&format!("{path}/{i}"), a, b)),
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => Ok(()),
        (a, b) if a == b => Ok(()),
        (a, b) if is_zero(a) && is_zero(b) => Ok(()),
        (a, b) => Err(format!("{path}: {a} became {b}")),
    }
}
