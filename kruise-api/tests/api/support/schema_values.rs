//! Arbitrary JSON values that conform to a CRD version's OpenAPI schema, for property tests that must hold
//! "for any value".

use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Strings and keys worth hitting: the values conversions and defaults look at.
#[derive(Clone, Debug)]
pub struct Hints {
    /// Keys used for labels and annotations (and any other string map).
    pub map_keys: Vec<String>,
    /// Values used for strings without an enum.
    pub strings: Vec<String>,
}

impl Default for Hints {
    fn default() -> Self {
        Self {
            map_keys: ["a", "b", "app"].map(String::from).to_vec(),
            strings: [
                "", "a", "true", "false", "5", "007", "50%", "12.5%", "x-y", "Always", "default",
            ]
            .map(String::from)
            .to_vec(),
        }
    }
}

impl Hints {
    /// The defaults plus extra keys (for instance the well-known annotations a conversion reads).
    pub fn with_keys(keys: &[&str]) -> Self {
        let mut hints = Self::default();
        hints
            .map_keys
            .extend(keys.iter().map(|key| (*key).to_owned()));
        hints
    }
}

const MAX_DEPTH: usize = 7;

/// A whole object of the given kind: `apiVersion`, `kind`, metadata with labels and annotations from the
/// hints, and `spec`/`status` generated from the version's `openAPIV3Schema`.
pub fn object(
    api_version: &str,
    kind: &str,
    schema: &Value,
    hints: &Hints,
) -> BoxedStrategy<Value> {
    let api_version = api_version.to_owned();
    let kind = kind.to_owned();
    let body = match schema.get("properties") {
        Some(Value::Object(properties)) => {
            let mut parts = Vec::new();
            for (name, property) in properties {
                if name == "spec" || name == "status" {
                    let required = name == "spec";
                    parts.push((name.clone(), required, value(property, hints, 0)));
                }
            }
            object_from_parts(parts)
        }
        _ => Just(Map::new()).boxed(),
    };
    let string_map = string_map(hints);
    (
        body,
        string_map.clone(),
        string_map,
        proptest::option::of("[a-z]{1,5}"),
    )
        .prop_map(move |(mut body, labels, annotations, namespace)| {
            let mut metadata = json!({"name": "sample"});
            if let Some(namespace) = namespace {
                metadata["namespace"] = json!(namespace);
            }
            if !labels.is_empty() {
                metadata["labels"] = Value::Object(labels);
            }
            if !annotations.is_empty() {
                metadata["annotations"] = Value::Object(annotations);
            }
            body.insert("apiVersion".into(), json!(api_version));
            body.insert("kind".into(), json!(kind));
            body.insert("metadata".into(), metadata);
            Value::Object(body)
        })
        .boxed()
}

fn string_map(hints: &Hints) -> BoxedStrategy<Map<String, Value>> {
    let keys = proptest::sample::select(hints.map_keys.clone());
    let values = proptest::sample::select(hints.strings.clone());
    proptest::collection::btree_map(keys, values, 0..4)
        .prop_map(|map| {
            map.into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect()
        })
        .boxed()
}

fn object_from_parts(
    parts: Vec<(String, bool, BoxedStrategy<Value>)>,
) -> BoxedStrategy<Map<String, Value>> {
    parts.into_iter().fold(
        Just(Map::new()).boxed(),
        |acc, (name, required, strategy)| {
            let field = if required {
                strategy.prop_map(Some).boxed()
            } else {
                proptest::option::weighted(0.5, strategy).boxed()
            };
            (acc, field)
                .prop_map(move |(mut map, field)| {
                    if let Some(field) = field {
                        map.insert(name.clone(), field);
                    }
                    map
                })
                .boxed()
        },
    )
}

/// A value conforming to `schema`.
pub fn value(schema: &Value, hints: &Hints, depth: usize) -> BoxedStrategy<Value> {
    let typed_fields = schema
        .get("properties")
        .is_some_and(|properties| properties.as_object().is_some_and(|p| !p.is_empty()));
    if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
        && !typed_fields
    {
        return prop_oneof![
            Just(json!({})),
            Just(json!({"metadata": {"labels": {"app": "sample"}}})),
            Just(json!({"metadata": {"name": "data"}, "spec": {}})),
        ]
        .boxed();
    }
    if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        let is_quantity = schema
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|description| description.starts_with("Quantity"));
        return if is_quantity {
            proptest::sample::select(vec!["1", "100m", "1Gi", "0.5"])
                .prop_map(|q| json!(q))
                .boxed()
        } else {
            prop_oneof![
                (0..40_i64).prop_map(|n| json!(n)),
                proptest::sample::select(vec!["0", "3", "0%", "30%", "100%", "12.5%", "x"])
                    .prop_map(|s| json!(s)),
            ]
            .boxed()
        };
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        return proptest::sample::select(values.clone()).boxed();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => string(schema, hints),
        Some("integer") => {
            if schema.get("format").and_then(Value::as_str) == Some("int64") {
                (-3_i64..5_000_000_000).prop_map(|n| json!(n)).boxed()
            } else {
                (-3_i64..200).prop_map(|n| json!(n)).boxed()
            }
        }
        Some("number") => (-10.0_f64..10.0).prop_map(|n| json!(n)).boxed(),
        Some("boolean") => any::<bool>().prop_map(Value::Bool).boxed(),
        Some("array") => {
            if depth >= MAX_DEPTH {
                return Just(json!([])).boxed();
            }
            let items = schema
                .get("items")
                .cloned()
                .unwrap_or(json!({"type": "string"}));
            proptest::collection::vec(value(&items, hints, depth + 1), 0..3)
                .prop_map(Value::Array)
                .boxed()
        }
        Some("object") | None => object_value(schema, hints, depth),
        Some(other) => panic!("schema type {other} is not handled"),
    }
}

fn string(schema: &Value, hints: &Hints) -> BoxedStrategy<Value> {
    match schema.get("format").and_then(Value::as_str) {
        Some("date-time") => {
            proptest::sample::select(vec!["2024-05-01T10:00:00Z", "2021-01-31T23:59:59Z"])
                .prop_map(|t| json!(t))
                .boxed()
        }
        Some("byte") => Just(json!("aGVsbG8=")).boxed(),
        _ => proptest::sample::select(hints.strings.clone())
            .prop_map(Value::String)
            .boxed(),
    }
}

fn object_value(schema: &Value, hints: &Hints, depth: usize) -> BoxedStrategy<Value> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // Past the depth limit, objects get only their required properties (still schema-valid).
    let past_limit = depth >= MAX_DEPTH;
    if past_limit && required.is_empty() {
        return Just(json!({})).boxed();
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        let parts = properties
            .iter()
            .filter(|(name, _)| !past_limit || required.contains(&name.as_str()))
            .map(|(name, property)| {
                (
                    name.clone(),
                    required.contains(&name.as_str()),
                    value(property, hints, depth + 1),
                )
            })
            .collect();
        return object_from_parts(parts).prop_map(Value::Object).boxed();
    }
    if let Some(additional) = schema
        .get("additionalProperties")
        .filter(|additional| additional.is_object() && !past_limit)
    {
        let keys = proptest::sample::select(hints.map_keys.clone());
        return proptest::collection::btree_map(keys, value(additional, hints, depth + 1), 0..3)
            .prop_map(|map| Value::Object(map.into_iter().collect()))
            .boxed();
    }
    Just(json!({})).boxed()
}
