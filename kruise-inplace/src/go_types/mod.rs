//! Which fields Go's `encoding/json` writes for the Kubernetes types inside a pod template, and in which order.
//!
//! `k8s-openapi` leaves out every unset field; Go does not:
//!
//! * a struct-typed field is always written, even with `omitempty` (`"metadata":{"creationTimestamp":null}`, a
//!   container's `"resources":{}`, a resource field selector's `"divisor":"0"`);
//! * a field without `omitempty` is always written, as its zero value when unset (`"name":""`,
//!   `"containerPort":0`, `"containers":null`, a gRPC probe's `"service":null`);
//! * a value field with `omitempty` is left out when zero (`false`, `0`, `""`, an empty list or map), even when
//!   `k8s-openapi` holds it as `Some(false)`;
//! * a pointer field is written whenever it is set, zero or not;
//! * quantities are written in canonical form ([`crate::quantity`]).
//!
//! `normalize` rewrites a `serde_json` value of a type into the fields Go would write; `write_in_go_order`
//! writes a normalized value in Go's struct field order (what `json.Marshal` of a typed struct produces, used by
//! kubelet's pre-1.31 container hash). The tables cover `PodTemplateSpec` down to every field of `Container`;
//! fields a table does not list (newer Kubernetes fields, rare volume sources) are treated like pointers: kept
//! when set, written after the listed ones in sorted order.

use serde_json::{Map, Value};

use crate::go_json;
use crate::quantity;

/// How Go decides whether to write a field.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Presence {
    /// A value field with `omitempty`: left out when zero.
    OmitEmpty,
    /// A pointer with `omitempty`: written whenever set.
    Pointer,
    /// No `omitempty`, or a struct: always written, as the given zero when unset.
    Always(Zero),
}

/// The zero value Go writes for an unset field that is always written.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Zero {
    Str,
    Int,
    Null,
    Struct,
    Quantity,
}

/// What a field holds, for recursion.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Kind {
    /// A scalar, or a list or map of scalars.
    Plain,
    /// A nested struct.
    Struct(&'static GoStruct),
    /// A list of structs.
    List(&'static GoStruct),
    /// A `resource.Quantity`.
    Quantity,
    /// A `ResourceList` (map of quantities).
    QuantityMap,
}

/// One field of a Go struct.
#[derive(Debug)]
pub(crate) struct Field {
    pub(crate) name: &'static str,
    pub(crate) presence: Presence,
    pub(crate) kind: Kind,
}

/// A Go struct: its JSON fields in declaration order.
#[derive(Debug)]
pub(crate) struct GoStruct {
    pub(crate) fields: &'static [Field],
}

impl GoStruct {
    fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|field| field.name == name)
    }
}

/// A value that cannot be written the way Go would.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {source}")]
pub struct GoJsonError {
    /// JSON pointer of the offending value.
    pub path: String,
    /// What is wrong with it.
    #[source]
    pub source: quantity::QuantityError,
}

/// Rewrites `value` (a `serde_json` rendering of a value of type `ty`) into exactly the fields Go writes.
///
/// # Errors
/// A quantity does not parse.
pub(crate) fn normalize(value: &mut Value, ty: &'static GoStruct) -> Result<(), GoJsonError> {
    let mut path = String::new();
    normalize_struct(value, ty, &mut path)
}

fn normalize_struct(
    value: &mut Value,
    ty: &'static GoStruct,
    path: &mut String,
) -> Result<(), GoJsonError> {
    if value.is_null() {
        *value = Value::Object(Map::new());
    }
    let Value::Object(map) = value else {
        return Ok(());
    };
    map.retain(|name, field_value| match ty.field(name) {
        Some(field) => match field.presence {
            Presence::OmitEmpty => !is_empty(field_value),
            Presence::Pointer => !field_value.is_null(),
            Presence::Always(_) => true,
        },
        None => !field_value.is_null(),
    });
    for field in ty.fields {
        if let Presence::Always(zero) = field.presence {
            let entry = map
                .entry(field.name.to_owned())
                .or_insert_with(|| zero_value(zero));
            if entry.is_null() && !matches!(zero, Zero::Null) {
                *entry = zero_value(zero);
            }
        }
    }
    for (name, field_value) in map.iter_mut() {
        let Some(field) = ty.field(name) else {
            continue;
        };
        let len = path.len();
        path.push('/');
        path.push_str(name);
        normalize_kind(field_value, field.kind, path)?;
        path.truncate(len);
    }
    Ok(())
}

fn normalize_kind(value: &mut Value, kind: Kind, path: &mut String) -> Result<(), GoJsonError> {
    match kind {
        Kind::Plain => Ok(()),
        Kind::Struct(ty) => normalize_struct(value, ty, path),
        Kind::List(ty) => {
            if let Value::Array(items) = value {
                for (index, item) in items.iter_mut().enumerate() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(&index.to_string());
                    normalize_struct(item, ty, path)?;
                    path.truncate(len);
                }
            }
            Ok(())
        }
        Kind::Quantity => canonical_quantity(value, path),
        Kind::QuantityMap => {
            if let Value::Object(map) = value {
                for (name, quantity) in map.iter_mut() {
                    let len = path.len();
                    path.push('/');
                    path.push_str(name);
                    canonical_quantity(quantity, path)?;
                    path.truncate(len);
                }
            }
            Ok(())
        }
    }
}

fn canonical_quantity(value: &mut Value, path: &str) -> Result<(), GoJsonError> {
    if let Value::String(text) = value {
        let canonical = quantity::canonical(text).map_err(|source| GoJsonError {
            path: path.to_owned(),
            source,
        })?;
        *text = canonical;
    }
    Ok(())
}

fn zero_value(zero: Zero) -> Value {
    match zero {
        Zero::Str => Value::String(String::new()),
        Zero::Int => Value::from(0),
        Zero::Null => Value::Null,
        Zero::Struct => Value::Object(Map::new()),
        Zero::Quantity => Value::String("0".to_owned()),
    }
}

/// Go's `omitempty` zero test on a JSON value.
pub(crate) fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(flag) => !flag,
        Value::Number(number) => number.as_f64() == Some(0.0),
        Value::String(text) => text.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
    }
}

/// Writes a [`normalize`]d value of type `ty` with struct fields in Go declaration order (maps sorted).
pub(crate) fn write_in_go_order(out: &mut String, value: &Value, ty: &'static GoStruct) {
    let Value::Object(map) = value else {
        go_json::write_sorted(out, value);
        return;
    };
    out.push('{');
    let mut first = true;
    let mut separator = |out: &mut String| {
        if !first {
            out.push(',');
        }
        first = false;
    };
    for field in ty.fields {
        if let Some(field_value) = map.get(field.name) {
            separator(out);
            go_json::write_str(out, field.name);
            out.push(':');
            match (field.kind, field_value) {
                (Kind::Struct(inner), _) => write_in_go_order(out, field_value, inner),
                (Kind::List(inner), Value::Array(items)) => {
                    out.push('[');
                    for (index, item) in items.iter().enumerate() {
                        if index > 0 {
                            out.push(',');
                        }
                        write_in_go_order(out, item, inner);
                    }
                    out.push(']');
                }
                _ => go_json::write_sorted(out, field_value),
            }
        }
    }
    let mut unknown: Vec<&String> = map.keys().filter(|key| ty.field(key).is_none()).collect();
    unknown.sort_unstable();
    for key in unknown {
        if let Some(field_value) = map.get(key) {
            separator(out);
            go_json::write_str(out, key);
            out.push(':');
            go_json::write_sorted(out, field_value);
        }
    }
    out.push('}');
}

/// A container as Go's `encoding/json` sees it: exactly the fields Go writes (its omission rules, structs that
/// are never omitted, canonical quantities), ready for [`write_container`] or a key-sorted writer.
///
/// # Errors
/// A quantity of the container does not parse.
pub fn container_value(
    container: &k8s_openapi::api::core::v1::Container,
) -> Result<Value, GoJsonError> {
    let mut value = serde_json::to_value(container).unwrap_or(Value::Null);
    normalize(&mut value, &CONTAINER)?;
    Ok(value)
}

/// Writes a [`container_value`] with its fields in Go's struct order (what `json.Marshal` of a typed
/// `corev1.Container` produces).
pub fn write_container(out: &mut String, value: &Value) {
    write_in_go_order(out, value, &CONTAINER);
}

/// A volume as Go's `encoding/json` sees it (see [`container_value`]).
///
/// # Errors
/// A quantity of the volume does not parse.
pub fn volume_value(volume: &k8s_openapi::api::core::v1::Volume) -> Result<Value, GoJsonError> {
    let mut value = serde_json::to_value(volume).unwrap_or(Value::Null);
    normalize(&mut value, &VOLUME)?;
    Ok(value)
}

macro_rules! go_struct {
    ($name:ident { $($field:literal : $presence:ident $(($zero:ident))? $(=> $kind:ident $(($inner:ident))?)?),* $(,)? }) => {
        pub(crate) static $name: GoStruct = GoStruct {
            fields: &[$(Field {
                name: $field,
                presence: go_struct!(@presence $presence $($zero)?),
                kind: go_struct!(@kind $($kind $(($inner))?)?),
            }),*],
        };
    };
    (@presence OmitEmpty) => { Presence::OmitEmpty };
    (@presence Pointer) => { Presence::Pointer };
    (@presence Always $zero:ident) => { Presence::Always(Zero::$zero) };
    (@kind) => { Kind::Plain };
    (@kind Struct($inner:ident)) => { Kind::Struct(&$inner) };
    (@kind List($inner:ident)) => { Kind::List(&$inner) };
    (@kind Quantity) => { Kind::Quantity };
    (@kind QuantityMap) => { Kind::QuantityMap };
}

mod tables;

pub(crate) use tables::*;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn structs_and_required_fields_are_filled_in() {
        let mut value = json!({
            "spec": {"containers": [{"name": "c", "image": "nginx", "stdin": false, "command": [],
                "ports": [{"containerPort": 80, "hostPort": 0}],
                "env": [{"name": "X", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}}],
                "readinessProbe": {"grpc": {"port": 9000}, "periodSeconds": 0},
                "securityContext": {"privileged": false}}],
                "hostNetwork": false, "securityContext": {}}
        });
        normalize(&mut value, &POD_TEMPLATE_SPEC).unwrap();
        assert_eq!(
            go_json::to_string_sorted(&value),
            concat!(
                r#"{"metadata":{"creationTimestamp":null},"spec":{"containers":[{"env":[{"name":"X","valueFrom":"#,
                r#"{"resourceFieldRef":{"divisor":"0","resource":"limits.cpu"}}}],"image":"nginx","name":"c","#,
                r#""ports":[{"containerPort":80}],"readinessProbe":{"grpc":{"port":9000,"service":null}},"#,
                r#""resources":{},"securityContext":{"privileged":false}}],"securityContext":{}}}"#
            )
        );
    }

    #[test]
    fn quantities_become_canonical() {
        let mut value = json!({"spec": {"containers": [{"name": "c", "resources": {
            "limits": {"cpu": "1000m", "memory": "1024Mi"}, "requests": {"cpu": "0.5"}}}],
            "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1.5Gi"}}]}});
        normalize(&mut value, &POD_TEMPLATE_SPEC).unwrap();
        assert_eq!(
            value["spec"]["containers"][0]["resources"]["limits"]["cpu"],
            "1"
        );
        assert_eq!(
            value["spec"]["containers"][0]["resources"]["limits"]["memory"],
            "1Gi"
        );
        assert_eq!(
            value["spec"]["containers"][0]["resources"]["requests"]["cpu"],
            "500m"
        );
        assert_eq!(
            value["spec"]["volumes"][0]["emptyDir"]["sizeLimit"],
            "1536Mi"
        );
        let mut bad =
            json!({"spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "x"}}}]}});
        let error = normalize(&mut bad, &POD_TEMPLATE_SPEC).unwrap_err();
        assert_eq!(error.path, "/spec/containers/0/resources/limits/cpu");
    }

    #[test]
    fn go_field_order_for_containers() {
        let mut value =
            json!({"ports": [{"containerPort": 8001}], "args": ["a"], "name": "n", "image": "i"});
        normalize(&mut value, &CONTAINER).unwrap();
        let mut out = String::new();
        write_in_go_order(&mut out, &value, &CONTAINER);
        assert_eq!(
            out,
            r#"{"name":"n","image":"i","args":["a"],"ports":[{"containerPort":8001}],"resources":{}}"#
        );
    }
}
