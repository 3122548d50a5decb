//! Decoding input objects with errors that name the file, the object and the failing field.

use serde_json::Value;

use crate::CliError;

/// An invalid-input error prefixed with where it is (`file: object i (Kind "name")`).
pub(super) fn invalid(path: &str, message: impl std::fmt::Display) -> CliError {
    CliError::Invalid(format!("{path}: {message}"))
}

/// Decodes `object`; on failure, names the first top-level field (or `spec`/`status` field) that fails.
pub(super) fn decode<T: serde::de::DeserializeOwned>(
    path: &str,
    object: &Value,
) -> Result<T, CliError> {
    serde_json::from_value::<T>(object.clone())
        .map_err(|error| invalid(path, format!("{}: {error}", failing_field::<T>(object))))
}

/// The path of the first field (two levels deep, e.g. `spec.replicas`, or one, e.g. `metadata`) without
/// which the object decodes; `(root)` when no single field is to blame.
fn failing_field<T: serde::de::DeserializeOwned>(object: &Value) -> String {
    let Some(fields) = object.as_object() else {
        return "(root)".to_owned();
    };
    let decodes = |candidate: serde_json::Map<String, Value>| {
        serde_json::from_value::<T>(Value::Object(candidate)).is_ok()
    };
    for (key, value) in fields {
        let Some(inner) = value.as_object() else {
            continue;
        };
        for inner_key in inner.keys() {
            let mut without = inner.clone();
            without.remove(inner_key);
            let mut candidate = fields.clone();
            candidate.insert(key.clone(), Value::Object(without));
            if decodes(candidate) {
                return format!("{key}.{inner_key}");
            }
        }
    }
    for key in fields.keys() {
        let mut candidate = fields.clone();
        candidate.remove(key);
        if decodes(candidate) {
            return key.clone();
        }
    }
    "(root)".to_owned()
}
