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
    if let Some(default) = node.get("default")
        && let Err(problem) = default_is_valid(default, schema)
    {
        found.push(format!("{path}: default {default} is invalid: {problem}"));
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

/// Whether a `default` value validates against its schema, as the API server requires of CRD defaults: types,
/// required properties, enums, and no properties the schema would prune.
fn default_is_valid(value: &Value, schema: &Value) -> Result<(), String> {
    if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        return if value.is_i64() || value.is_string() {
            Ok(())
        } else {
            Err(format!("{value} is not an int or string"))
        };
    }
    if let Some(Value::Array(allowed)) = schema.get("enum")
        && !allowed.contains(value)
    {
        return Err(format!("{value} is not one of {allowed:?}"));
    }
    let preserve = schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    match (schema.get("type").and_then(Value::as_str), value) {
        (Some("object"), Value::Object(fields)) => {
            for required in schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(name) = required.as_str()
                    && !fields.contains_key(name)
                {
                    return Err(format!("required property {name} is missing"));
                }
            }
            for (name, field) in fields {
                match (
                    schema.get("properties").and_then(|p| p.get(name)),
                    schema.get("additionalProperties"),
                ) {
                    (Some(property), _) => default_is_valid(field, property)?,
                    (None, Some(additional)) if additional.is_object() => {
                        default_is_valid(field, additional)?;
                    }
                    _ if preserve => {}
                    _ => return Err(format!("property {name} would be pruned")),
                }
            }
            Ok(())
        }
        (Some("array"), Value::Array(items)) => {
            let item_schema = schema.get("items").cloned().unwrap_or(Value::Null);
            items
                .iter()
                .try_for_each(|item| default_is_valid(item, &item_schema))
        }
        (Some("string"), Value::String(_))
        | (Some("boolean"), Value::Bool(_))
        | (Some("number"), Value::Number(_))
        | (None, _) => Ok(()),
        (Some("integer"), Value::Number(n)) if n.is_i64() => Ok(()),
        (Some(type_), other) => Err(format!("{other} is not of type {type_}")),
    }
}
