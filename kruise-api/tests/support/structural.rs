//! The structural-schema rules of apiextensions.k8s.io/v1 as a Kubernetes 1.20 API server enforces them
//! (the subset that generated schemas can break), so that CRDs are checked before a server sees them.

use serde_json::Value;

/// Every violation found, as `path: rule`.
pub fn violations(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    check(schema, "", true, &mut found);
    found
}

fn check(schema: &Value, path: &str, root: bool, found: &mut Vec<String>) {
    let Some(node) = schema.as_object() else {
        found.push(format!("{path}: schema is not an object"));
        return;
    };
    let int_or_string = node.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true));
    let preserve = node.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    for forbidden in ["$ref", "definitions", "$schema", "oneOf", "not", "allOf"] {
        if node.contains_key(forbidden) {
            found.push(format!("{path}: {forbidden} is not allowed"));
        }
    }
    if node.get("uniqueItems") == Some(&Value::Bool(true)) {
        found.push(format!("{path}: uniqueItems must not be true"));
    }
    if node.get("additionalProperties") == Some(&Value::Bool(false)) {
        found.push(format!("{path}: additionalProperties must not be false"));
    }
    if node.contains_key("properties") && node.contains_key("additionalProperties") {
        found.push(format!(
            "{path}: properties and additionalProperties are mutually exclusive"
        ));
    }
    if let Some(any_of) = node.get("anyOf") {
        let is_int_or_string_form = int_or_string
            && any_of == &serde_json::json!([{"type": "integer"}, {"type": "string"}]);
        if !is_int_or_string_form {
            found.push(format!(
                "{path}: anyOf is only allowed as the int-or-string pattern"
            ));
        }
    }
    match node.get("type").and_then(Value::as_str) {
        Some("object" | "array" | "string" | "integer" | "number" | "boolean") => {
            if int_or_string {
                found.push(format!(
                    "{path}: x-kubernetes-int-or-string must not have a type"
                ));
            }
        }
        Some(other) => found.push(format!("{path}: unknown type {other}")),
        None if int_or_string || preserve => {}
        None => found.push(format!("{path}: type must be specified")),
    }
    if let Some(Value::String(format)) = node.get("format")
        && ![
            "int32",
            "int64",
            "float",
            "double",
            "byte",
            "date-time",
            "date",
            "binary",
            "password",
        ]
        .contains(&format.as_str())
    {
        found.push(format!(
            "{path}: format {format} is not one Kubernetes knows"
        ));
    }
    if let (Some(Value::Array(values)), Some(Value::String(type_))) =
        (node.get("enum"), node.get("type"))
    {
        let wrong = values.iter().any(|value| match type_.as_str() {
            "string" => !value.is_string(),
            "integer" => !value.is_i64(),
            "boolean" => !value.is_boolean(),
            _ => false,
        });
        if wrong {
            found.push(format!("{path}: enum values do not match type {type_}"));
        }
    }
    if root && node.get("type").and_then(Value::as_str) != Some("object") {
        found.push(format!("{path}: the root must be an object"));
    }
    if let Some(Value::Object(properties)) = node.get("properties") {
        for (name, property) in properties {
            check(property, &format!("{path}/{name}"), false, found);
        }
    }
    if let Some(additional) = node.get("additionalProperties").filter(|a| a.is_object()) {
        check(additional, &format!("{path}/*"), false, found);
    }
    if let Some(items) = node.get("items") {
        check(items, &format!("{path}[]"), false, found);
    }
}
