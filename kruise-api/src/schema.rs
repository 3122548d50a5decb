//! JSON-schema pieces shared by the CRD types.

use schemars::{Schema, SchemaGenerator, json_schema};

/// Schema of an object the API server stores without looking inside: upstream marks pod templates and
/// volume claim templates `x-kubernetes-preserve-unknown-fields` (schemaless), so the server neither
/// validates nor defaults nor prunes them.
#[must_use]
pub fn preserve_unknown_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
    })
}

/// Schema of a list of schemaless objects (volume claim templates).
#[must_use]
pub fn preserve_unknown_object_list(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "array",
        "items": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
        },
    })
}

/// Schema of an embedded raw object (`runtime.RawExtension`), such as a ResourceDistribution resource or a
/// UnitedDeployment subset patch.
#[must_use]
pub fn raw_extension(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
    })
}

/// Schema of an object with a required `name` whose other fields the API server keeps as written: a sidecar
/// container (upstream types only the Kruise fields around it).
#[must_use]
pub fn named_preserve_unknown_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
        "x-kubernetes-preserve-unknown-fields": true,
    })
}
