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

// --- metadata ---------------------------------------------------------------------------------------------

go_struct!(POD_TEMPLATE_SPEC {
    "metadata": Always(Struct) => Struct(OBJECT_META),
    "spec": Always(Struct) => Struct(POD_SPEC),
});

go_struct!(OBJECT_META {
    "name": OmitEmpty, "generateName": OmitEmpty, "namespace": OmitEmpty, "selfLink": OmitEmpty,
    "uid": OmitEmpty, "resourceVersion": OmitEmpty, "generation": OmitEmpty,
    "creationTimestamp": Always(Null), "deletionTimestamp": Pointer, "deletionGracePeriodSeconds": Pointer,
    "labels": OmitEmpty, "annotations": OmitEmpty,
    "ownerReferences": OmitEmpty => List(OWNER_REFERENCE),
    "finalizers": OmitEmpty,
    "managedFields": OmitEmpty => List(MANAGED_FIELDS_ENTRY),
});

go_struct!(OWNER_REFERENCE {
    "apiVersion": Always(Str), "kind": Always(Str), "name": Always(Str), "uid": Always(Str),
    "controller": Pointer, "blockOwnerDeletion": Pointer,
});

go_struct!(MANAGED_FIELDS_ENTRY {
    "manager": OmitEmpty, "operation": OmitEmpty, "apiVersion": OmitEmpty, "time": Pointer,
    "fieldsType": OmitEmpty, "fieldsV1": Pointer, "subresource": OmitEmpty,
});

go_struct!(LABEL_SELECTOR {
    "matchLabels": OmitEmpty,
    "matchExpressions": OmitEmpty => List(LABEL_SELECTOR_REQUIREMENT),
});

go_struct!(LABEL_SELECTOR_REQUIREMENT {
    "key": Always(Str), "operator": Always(Str), "values": OmitEmpty,
});

// --- pod spec ---------------------------------------------------------------------------------------------

go_struct!(POD_SPEC {
    "volumes": OmitEmpty => List(VOLUME),
    "initContainers": OmitEmpty => List(CONTAINER),
    "containers": Always(Null) => List(CONTAINER),
    "ephemeralContainers": OmitEmpty => List(EPHEMERAL_CONTAINER),
    "restartPolicy": OmitEmpty, "terminationGracePeriodSeconds": Pointer, "activeDeadlineSeconds": Pointer,
    "dnsPolicy": OmitEmpty, "nodeSelector": OmitEmpty, "serviceAccountName": OmitEmpty,
    "serviceAccount": OmitEmpty, "automountServiceAccountToken": Pointer, "nodeName": OmitEmpty,
    "hostNetwork": OmitEmpty, "hostPID": OmitEmpty, "hostIPC": OmitEmpty, "shareProcessNamespace": Pointer,
    "securityContext": Pointer => Struct(POD_SECURITY_CONTEXT),
    "imagePullSecrets": OmitEmpty => List(LOCAL_OBJECT_REFERENCE),
    "hostname": OmitEmpty, "subdomain": OmitEmpty,
    "affinity": Pointer => Struct(AFFINITY),
    "schedulerName": OmitEmpty,
    "tolerations": OmitEmpty => List(TOLERATION),
    "hostAliases": OmitEmpty => List(HOST_ALIAS),
    "priorityClassName": OmitEmpty, "priority": Pointer,
    "dnsConfig": Pointer => Struct(POD_DNS_CONFIG),
    "readinessGates": OmitEmpty => List(POD_READINESS_GATE),
    "runtimeClassName": Pointer, "enableServiceLinks": Pointer, "preemptionPolicy": Pointer,
    "overhead": OmitEmpty => QuantityMap,
    "topologySpreadConstraints": OmitEmpty => List(TOPOLOGY_SPREAD_CONSTRAINT),
    "setHostnameAsFQDN": Pointer,
    "os": Pointer => Struct(POD_OS),
    "hostUsers": Pointer,
    "schedulingGates": OmitEmpty => List(NAME_ONLY),
    "resourceClaims": OmitEmpty => List(POD_RESOURCE_CLAIM),
    "resources": Pointer => Struct(RESOURCE_REQUIREMENTS),
    "hostnameOverride": Pointer,
});

go_struct!(POD_SECURITY_CONTEXT {
    "seLinuxOptions": Pointer => Struct(SE_LINUX_OPTIONS),
    "windowsOptions": Pointer => Struct(WINDOWS_OPTIONS),
    "runAsUser": Pointer, "runAsGroup": Pointer, "runAsNonRoot": Pointer,
    "supplementalGroups": OmitEmpty, "supplementalGroupsPolicy": Pointer, "fsGroup": Pointer,
    "sysctls": OmitEmpty => List(SYSCTL),
    "fsGroupChangePolicy": Pointer,
    "seccompProfile": Pointer => Struct(SECCOMP_PROFILE),
    "appArmorProfile": Pointer => Struct(SECCOMP_PROFILE),
    "seLinuxChangePolicy": Pointer,
});

go_struct!(SYSCTL { "name": Always(Str), "value": Always(Str) });

go_struct!(LOCAL_OBJECT_REFERENCE { "name": OmitEmpty });

go_struct!(NAME_ONLY { "name": Always(Str) });

go_struct!(AFFINITY {
    "nodeAffinity": Pointer => Struct(NODE_AFFINITY),
    "podAffinity": Pointer => Struct(POD_AFFINITY),
    "podAntiAffinity": Pointer => Struct(POD_AFFINITY),
});

go_struct!(NODE_AFFINITY {
    "requiredDuringSchedulingIgnoredDuringExecution": Pointer => Struct(NODE_SELECTOR),
    "preferredDuringSchedulingIgnoredDuringExecution": OmitEmpty => List(PREFERRED_SCHEDULING_TERM),
});

go_struct!(NODE_SELECTOR { "nodeSelectorTerms": Always(Null) => List(NODE_SELECTOR_TERM) });

go_struct!(NODE_SELECTOR_TERM {
    "matchExpressions": OmitEmpty => List(LABEL_SELECTOR_REQUIREMENT),
    "matchFields": OmitEmpty => List(LABEL_SELECTOR_REQUIREMENT),
});

go_struct!(PREFERRED_SCHEDULING_TERM {
    "weight": Always(Int), "preference": Always(Struct) => Struct(NODE_SELECTOR_TERM),
});

go_struct!(POD_AFFINITY {
    "requiredDuringSchedulingIgnoredDuringExecution": OmitEmpty => List(POD_AFFINITY_TERM),
    "preferredDuringSchedulingIgnoredDuringExecution": OmitEmpty => List(WEIGHTED_POD_AFFINITY_TERM),
});

go_struct!(POD_AFFINITY_TERM {
    "labelSelector": Pointer => Struct(LABEL_SELECTOR),
    "namespaces": OmitEmpty, "topologyKey": Always(Str),
    "namespaceSelector": Pointer => Struct(LABEL_SELECTOR),
    "matchLabelKeys": OmitEmpty, "mismatchLabelKeys": OmitEmpty,
});

go_struct!(WEIGHTED_POD_AFFINITY_TERM {
    "weight": Always(Int), "podAffinityTerm": Always(Struct) => Struct(POD_AFFINITY_TERM),
});

go_struct!(TOLERATION {
    "key": OmitEmpty, "operator": OmitEmpty, "value": OmitEmpty, "effect": OmitEmpty,
    "tolerationSeconds": Pointer,
});

go_struct!(HOST_ALIAS { "ip": Always(Str), "hostnames": OmitEmpty });

go_struct!(POD_DNS_CONFIG {
    "nameservers": OmitEmpty, "searches": OmitEmpty, "options": OmitEmpty => List(POD_DNS_CONFIG_OPTION),
});

go_struct!(POD_DNS_CONFIG_OPTION { "name": OmitEmpty, "value": Pointer });

go_struct!(POD_READINESS_GATE { "conditionType": Always(Str) });

go_struct!(TOPOLOGY_SPREAD_CONSTRAINT {
    "maxSkew": Always(Int), "topologyKey": Always(Str), "whenUnsatisfiable": Always(Str),
    "labelSelector": Pointer => Struct(LABEL_SELECTOR),
    "minDomains": Pointer, "nodeAffinityPolicy": Pointer, "nodeTaintsPolicy": Pointer,
    "matchLabelKeys": OmitEmpty,
});

go_struct!(POD_OS { "name": Always(Str) });

go_struct!(POD_RESOURCE_CLAIM {
    "name": Always(Str), "resourceClaimName": Pointer, "resourceClaimTemplateName": Pointer,
});

// --- volumes ----------------------------------------------------------------------------------------------

go_struct!(VOLUME {
    "name": Always(Str),
    "hostPath": Pointer => Struct(HOST_PATH),
    "emptyDir": Pointer => Struct(EMPTY_DIR),
    "gcePersistentDisk": Pointer, "awsElasticBlockStore": Pointer, "gitRepo": Pointer,
    "secret": Pointer => Struct(SECRET_VOLUME),
    "nfs": Pointer => Struct(NFS),
    "iscsi": Pointer, "glusterfs": Pointer,
    "persistentVolumeClaim": Pointer => Struct(PVC_VOLUME),
    "rbd": Pointer, "flexVolume": Pointer, "cinder": Pointer, "cephfs": Pointer, "flocker": Pointer,
    "downwardAPI": Pointer => Struct(DOWNWARD_API_VOLUME),
    "fc": Pointer, "azureFile": Pointer,
    "configMap": Pointer => Struct(CONFIG_MAP_VOLUME),
    "vsphereVolume": Pointer, "quobyte": Pointer, "azureDisk": Pointer, "photonPersistentDisk": Pointer,
    "projected": Pointer => Struct(PROJECTED),
    "portworxVolume": Pointer, "scaleIO": Pointer, "storageos": Pointer,
    "csi": Pointer => Struct(CSI),
    "ephemeral": Pointer => Struct(EPHEMERAL),
    "image": Pointer => Struct(IMAGE_VOLUME),
});

go_struct!(HOST_PATH { "path": Always(Str), "type": Pointer });

go_struct!(EMPTY_DIR { "medium": OmitEmpty, "sizeLimit": Pointer => Quantity });

go_struct!(SECRET_VOLUME {
    "secretName": OmitEmpty, "items": OmitEmpty => List(KEY_TO_PATH), "defaultMode": Pointer,
    "optional": Pointer,
});

go_struct!(KEY_TO_PATH { "key": Always(Str), "path": Always(Str), "mode": Pointer });

go_struct!(NFS { "server": Always(Str), "path": Always(Str), "readOnly": OmitEmpty });

go_struct!(PVC_VOLUME { "claimName": Always(Str), "readOnly": OmitEmpty });

go_struct!(DOWNWARD_API_VOLUME {
    "items": OmitEmpty => List(DOWNWARD_API_FILE), "defaultMode": Pointer,
});

go_struct!(DOWNWARD_API_FILE {
    "path": Always(Str),
    "fieldRef": Pointer => Struct(OBJECT_FIELD_SELECTOR),
    "resourceFieldRef": Pointer => Struct(RESOURCE_FIELD_SELECTOR),
    "mode": Pointer,
});

go_struct!(CONFIG_MAP_VOLUME {
    "name": OmitEmpty, "items": OmitEmpty => List(KEY_TO_PATH), "defaultMode": Pointer,
    "optional": Pointer,
});

go_struct!(PROJECTED {
    "sources": Always(Null) => List(VOLUME_PROJECTION), "defaultMode": Pointer,
});

go_struct!(VOLUME_PROJECTION {
    "secret": Pointer => Struct(KEYS_PROJECTION),
    "downwardAPI": Pointer => Struct(DOWNWARD_API_PROJECTION),
    "configMap": Pointer => Struct(KEYS_PROJECTION),
    "serviceAccountToken": Pointer => Struct(SERVICE_ACCOUNT_TOKEN_PROJECTION),
    "clusterTrustBundle": Pointer => Struct(CLUSTER_TRUST_BUNDLE_PROJECTION),
    "podCertificate": Pointer,
});

go_struct!(KEYS_PROJECTION {
    "name": OmitEmpty, "items": OmitEmpty => List(KEY_TO_PATH), "optional": Pointer,
});

go_struct!(DOWNWARD_API_PROJECTION { "items": OmitEmpty => List(DOWNWARD_API_FILE) });

go_struct!(SERVICE_ACCOUNT_TOKEN_PROJECTION {
    "audience": OmitEmpty, "expirationSeconds": Pointer, "path": Always(Str),
});

go_struct!(CLUSTER_TRUST_BUNDLE_PROJECTION {
    "name": Pointer, "signerName": Pointer, "labelSelector": Pointer => Struct(LABEL_SELECTOR),
    "optional": Pointer, "path": Always(Str),
});

go_struct!(CSI {
    "driver": Always(Str), "readOnly": Pointer, "fsType": Pointer, "volumeAttributes": OmitEmpty,
    "nodePublishSecretRef": Pointer => Struct(LOCAL_OBJECT_REFERENCE),
});

go_struct!(EPHEMERAL { "volumeClaimTemplate": Pointer => Struct(PVC_TEMPLATE) });

go_struct!(PVC_TEMPLATE {
    "metadata": Always(Struct) => Struct(OBJECT_META),
    "spec": Always(Struct) => Struct(PVC_SPEC),
});

go_struct!(PVC_SPEC {
    "accessModes": OmitEmpty, "selector": Pointer => Struct(LABEL_SELECTOR),
    "resources": Always(Struct) => Struct(VOLUME_RESOURCE_REQUIREMENTS),
    "volumeName": OmitEmpty, "storageClassName": Pointer, "volumeMode": Pointer,
    "dataSource": Pointer => Struct(TYPED_LOCAL_OBJECT_REFERENCE),
    "dataSourceRef": Pointer => Struct(TYPED_OBJECT_REFERENCE),
    "volumeAttributesClassName": Pointer,
});

go_struct!(VOLUME_RESOURCE_REQUIREMENTS {
    "limits": OmitEmpty => QuantityMap, "requests": OmitEmpty => QuantityMap,
});

go_struct!(TYPED_LOCAL_OBJECT_REFERENCE {
    "apiGroup": Pointer, "kind": Always(Str), "name": Always(Str),
});

go_struct!(TYPED_OBJECT_REFERENCE {
    "apiGroup": Pointer, "kind": Always(Str), "name": Always(Str), "namespace": Pointer,
});

go_struct!(IMAGE_VOLUME { "reference": OmitEmpty, "pullPolicy": OmitEmpty });

// --- containers -------------------------------------------------------------------------------------------

go_struct!(CONTAINER {
    "name": Always(Str), "image": OmitEmpty, "command": OmitEmpty, "args": OmitEmpty,
    "workingDir": OmitEmpty,
    "ports": OmitEmpty => List(CONTAINER_PORT),
    "envFrom": OmitEmpty => List(ENV_FROM_SOURCE),
    "env": OmitEmpty => List(ENV_VAR),
    "resources": Always(Struct) => Struct(RESOURCE_REQUIREMENTS),
    "resizePolicy": OmitEmpty => List(CONTAINER_RESIZE_POLICY),
    "restartPolicy": Pointer, "restartPolicyRules": OmitEmpty,
    "volumeMounts": OmitEmpty => List(VOLUME_MOUNT),
    "volumeDevices": OmitEmpty => List(VOLUME_DEVICE),
    "livenessProbe": Pointer => Struct(PROBE),
    "readinessProbe": Pointer => Struct(PROBE),
    "startupProbe": Pointer => Struct(PROBE),
    "lifecycle": Pointer => Struct(LIFECYCLE),
    "terminationMessagePath": OmitEmpty, "terminationMessagePolicy": OmitEmpty,
    "imagePullPolicy": OmitEmpty,
    "securityContext": Pointer => Struct(SECURITY_CONTEXT),
    "stdin": OmitEmpty, "stdinOnce": OmitEmpty, "tty": OmitEmpty,
});

go_struct!(EPHEMERAL_CONTAINER {
    "name": Always(Str), "image": OmitEmpty, "command": OmitEmpty, "args": OmitEmpty,
    "workingDir": OmitEmpty,
    "ports": OmitEmpty => List(CONTAINER_PORT),
    "envFrom": OmitEmpty => List(ENV_FROM_SOURCE),
    "env": OmitEmpty => List(ENV_VAR),
    "resources": Always(Struct) => Struct(RESOURCE_REQUIREMENTS),
    "resizePolicy": OmitEmpty => List(CONTAINER_RESIZE_POLICY),
    "restartPolicy": Pointer, "restartPolicyRules": OmitEmpty,
    "volumeMounts": OmitEmpty => List(VOLUME_MOUNT),
    "volumeDevices": OmitEmpty => List(VOLUME_DEVICE),
    "livenessProbe": Pointer => Struct(PROBE),
    "readinessProbe": Pointer => Struct(PROBE),
    "startupProbe": Pointer => Struct(PROBE),
    "lifecycle": Pointer => Struct(LIFECYCLE),
    "terminationMessagePath": OmitEmpty, "terminationMessagePolicy": OmitEmpty,
    "imagePullPolicy": OmitEmpty,
    "securityContext": Pointer => Struct(SECURITY_CONTEXT),
    "stdin": OmitEmpty, "stdinOnce": OmitEmpty, "tty": OmitEmpty,
    "targetContainerName": OmitEmpty,
});

go_struct!(CONTAINER_PORT {
    "name": OmitEmpty, "hostPort": OmitEmpty, "containerPort": Always(Int), "protocol": OmitEmpty,
    "hostIP": OmitEmpty,
});

go_struct!(ENV_FROM_SOURCE {
    "prefix": OmitEmpty,
    "configMapRef": Pointer => Struct(OPTIONAL_REFERENCE),
    "secretRef": Pointer => Struct(OPTIONAL_REFERENCE),
});

go_struct!(OPTIONAL_REFERENCE { "name": OmitEmpty, "optional": Pointer });

go_struct!(ENV_VAR {
    "name": Always(Str), "value": OmitEmpty, "valueFrom": Pointer => Struct(ENV_VAR_SOURCE),
});

go_struct!(ENV_VAR_SOURCE {
    "fieldRef": Pointer => Struct(OBJECT_FIELD_SELECTOR),
    "resourceFieldRef": Pointer => Struct(RESOURCE_FIELD_SELECTOR),
    "configMapKeyRef": Pointer => Struct(KEY_SELECTOR),
    "secretKeyRef": Pointer => Struct(KEY_SELECTOR),
    "fileKeyRef": Pointer,
});

go_struct!(OBJECT_FIELD_SELECTOR { "apiVersion": OmitEmpty, "fieldPath": Always(Str) });

go_struct!(RESOURCE_FIELD_SELECTOR {
    "containerName": OmitEmpty, "resource": Always(Str), "divisor": Always(Quantity) => Quantity,
});

go_struct!(KEY_SELECTOR { "name": OmitEmpty, "key": Always(Str), "optional": Pointer });

go_struct!(RESOURCE_REQUIREMENTS {
    "limits": OmitEmpty => QuantityMap, "requests": OmitEmpty => QuantityMap,
    "claims": OmitEmpty => List(RESOURCE_CLAIM),
});

go_struct!(RESOURCE_CLAIM { "name": Always(Str), "request": OmitEmpty });

go_struct!(CONTAINER_RESIZE_POLICY { "resourceName": Always(Str), "restartPolicy": Always(Str) });

go_struct!(VOLUME_MOUNT {
    "name": Always(Str), "readOnly": OmitEmpty, "recursiveReadOnly": Pointer, "mountPath": Always(Str),
    "subPath": OmitEmpty, "mountPropagation": Pointer, "subPathExpr": OmitEmpty,
});

go_struct!(VOLUME_DEVICE { "name": Always(Str), "devicePath": Always(Str) });

go_struct!(PROBE {
    "exec": Pointer => Struct(EXEC_ACTION),
    "httpGet": Pointer => Struct(HTTP_GET_ACTION),
    "tcpSocket": Pointer => Struct(TCP_SOCKET_ACTION),
    "grpc": Pointer => Struct(GRPC_ACTION),
    "initialDelaySeconds": OmitEmpty, "timeoutSeconds": OmitEmpty, "periodSeconds": OmitEmpty,
    "successThreshold": OmitEmpty, "failureThreshold": OmitEmpty,
    "terminationGracePeriodSeconds": Pointer,
});

go_struct!(EXEC_ACTION { "command": OmitEmpty });

go_struct!(HTTP_GET_ACTION {
    "path": OmitEmpty, "port": Always(Int), "host": OmitEmpty, "scheme": OmitEmpty,
    "httpHeaders": OmitEmpty => List(HTTP_HEADER),
});

go_struct!(HTTP_HEADER { "name": Always(Str), "value": Always(Str) });

go_struct!(TCP_SOCKET_ACTION { "port": Always(Int), "host": OmitEmpty });

go_struct!(GRPC_ACTION { "port": Always(Int), "service": Always(Null) });

go_struct!(LIFECYCLE {
    "postStart": Pointer => Struct(LIFECYCLE_HANDLER),
    "preStop": Pointer => Struct(LIFECYCLE_HANDLER),
    "stopSignal": Pointer,
});

go_struct!(LIFECYCLE_HANDLER {
    "exec": Pointer => Struct(EXEC_ACTION),
    "httpGet": Pointer => Struct(HTTP_GET_ACTION),
    "tcpSocket": Pointer => Struct(TCP_SOCKET_ACTION),
    "sleep": Pointer => Struct(SLEEP_ACTION),
});

go_struct!(SLEEP_ACTION { "seconds": Always(Int) });

go_struct!(SECURITY_CONTEXT {
    "capabilities": Pointer => Struct(CAPABILITIES),
    "privileged": Pointer,
    "seLinuxOptions": Pointer => Struct(SE_LINUX_OPTIONS),
    "windowsOptions": Pointer => Struct(WINDOWS_OPTIONS),
    "runAsUser": Pointer, "runAsGroup": Pointer, "runAsNonRoot": Pointer,
    "readOnlyRootFilesystem": Pointer, "allowPrivilegeEscalation": Pointer, "procMount": Pointer,
    "seccompProfile": Pointer => Struct(SECCOMP_PROFILE),
    "appArmorProfile": Pointer => Struct(SECCOMP_PROFILE),
});

go_struct!(CAPABILITIES { "add": OmitEmpty, "drop": OmitEmpty });

go_struct!(SE_LINUX_OPTIONS {
    "user": OmitEmpty, "role": OmitEmpty, "type": OmitEmpty, "level": OmitEmpty,
});

go_struct!(WINDOWS_OPTIONS {
    "gmsaCredentialSpecName": Pointer, "gmsaCredentialSpec": Pointer, "runAsUserName": Pointer,
    "hostProcess": Pointer,
});

go_struct!(SECCOMP_PROFILE { "type": Always(Str), "localhostProfile": Pointer });

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
