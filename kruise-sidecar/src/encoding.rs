//! Sidecar containers, volumes and the other recorded spec fields as Go's `encoding/json` writes them: the
//! bytes the SidecarSet hash and the ControllerRevision data are computed from.
//!
//! A `SidecarContainer` is a `corev1.Container` (inlined) followed by Kruise's fields. The container part comes
//! from [`kruise_inplace::go_json`] (Go's omission rules and field order for every container field); the
//! Kruise part is written here in upstream's field order: `podInjectPolicy`, `upgradeStrategy` (a struct,
//! always written), `shareVolumePolicy` (always written), `shareVolumeDevicePolicy`, `transferEnv`,
//! `resourcesPolicy`.

use k8s_openapi::api::core::v1::ObjectFieldSelector;
use kruise_api::apps::v1beta1::{
    ResourceExpressions, ResourcesPolicy, ShareVolumePolicy, SidecarContainer,
    SidecarContainerUpgradeStrategy, TransferEnvVar,
};
use kruise_inplace::go_json::{self, GoJsonError};
use serde_json::Value;

/// Writes `sidecar` as Go writes a `SidecarContainer` (fields in struct order). With `blank_image` the
/// container's image is left out, as Go does for an empty image.
///
/// # Errors
/// A quantity of the container does not parse; the error path starts at the container.
pub fn write_sidecar_container(
    out: &mut String,
    sidecar: &SidecarContainer,
    blank_image: bool,
) -> Result<(), GoJsonError> {
    let mut value = go_json::container_value(&sidecar.container)?;
    if blank_image && let Value::Object(fields) = &mut value {
        fields.remove("image");
    }
    let mut container = String::with_capacity(256);
    go_json::write_container(&mut container, &value);
    // The container always has `name` and `resources`, so it is `{...}` with at least one field.
    container.pop();
    out.push_str(&container);
    let mut object = ObjectWriter::continuing(out);
    if let Some(policy) = sidecar.pod_inject_policy.as_ref() {
        object.string_omitempty("podInjectPolicy", policy.as_str());
    }
    object.key("upgradeStrategy");
    write_upgrade_strategy(object.out, &sidecar.upgrade_strategy);
    object.key("shareVolumePolicy");
    write_share_policy(object.out, &sidecar.share_volume_policy);
    if let Some(policy) = &sidecar.share_volume_device_policy {
        object.key("shareVolumeDevicePolicy");
        write_share_policy(object.out, policy);
    }
    if !sidecar.transfer_env.is_empty() {
        object.key("transferEnv");
        object.out.push('[');
        for (index, transfer) in sidecar.transfer_env.iter().enumerate() {
            if index > 0 {
                object.out.push(',');
            }
            write_transfer_env(object.out, transfer);
        }
        object.out.push(']');
    }
    if let Some(policy) = &sidecar.resources_policy {
        object.key("resourcesPolicy");
        write_resources_policy(object.out, policy);
    }
    out.push('}');
    Ok(())
}

/// A list of sidecar containers as Go writes a `[]SidecarContainer` (`null` when empty: upstream's lists
/// are nil when absent).
///
/// # Errors
/// A quantity does not parse; the error path names the list index.
pub fn write_sidecar_list(
    out: &mut String,
    list: &[SidecarContainer],
    blank_image: bool,
) -> Result<(), GoJsonError> {
    if list.is_empty() {
        out.push_str("null");
        return Ok(());
    }
    out.push('[');
    for (index, sidecar) in list.iter().enumerate() {
        if index > 0 {
            out.push(',');
        }
        write_sidecar_container(out, sidecar, blank_image).map_err(|error| GoJsonError {
            path: format!("/{index}{}", error.path),
            source: error.source,
        })?;
    }
    out.push(']');
    Ok(())
}

/// A sidecar container as the generic JSON value Go's decoder makes of its encoding (what a ControllerRevision
/// records; write it with sorted keys).
///
/// # Errors
/// A quantity of the container does not parse.
pub fn sidecar_container_value(sidecar: &SidecarContainer) -> Result<Value, GoJsonError> {
    let mut text = String::with_capacity(512);
    write_sidecar_container(&mut text, sidecar, false)?;
    Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Writes JSON object fields one after the other, with commas.
struct ObjectWriter<'a> {
    out: &'a mut String,
    first: bool,
}

impl<'a> ObjectWriter<'a> {
    /// Fields of an object whose `{` is already written, after at least one field.
    fn continuing(out: &'a mut String) -> Self {
        Self { out, first: false }
    }

    /// Fields of a new object: writes `{`.
    fn open(out: &'a mut String) -> Self {
        out.push('{');
        Self { out, first: true }
    }

    fn key(&mut self, name: &str) {
        if !self.first {
            self.out.push(',');
        }
        self.first = false;
        go_json::write_str(self.out, name);
        self.out.push(':');
    }

    fn string(&mut self, name: &str, value: &str) {
        self.key(name);
        go_json::write_str(self.out, value);
    }

    fn string_omitempty(&mut self, name: &str, value: &str) {
        if !value.is_empty() {
            self.string(name, value);
        }
    }

    fn close(self) {
        self.out.push('}');
    }
}

fn write_upgrade_strategy(out: &mut String, strategy: &SidecarContainerUpgradeStrategy) {
    let mut object = ObjectWriter::open(out);
    if let Some(kind) = &strategy.upgrade_type {
        object.string_omitempty("upgradeType", kind.as_str());
    }
    object.string_omitempty("hotUpgradeEmptyImage", &strategy.hot_upgrade_empty_image);
    object.close();
}

fn write_share_policy(out: &mut String, policy: &ShareVolumePolicy) {
    let mut object = ObjectWriter::open(out);
    if let Some(kind) = &policy.type_ {
        object.string_omitempty("type", kind.as_str());
    }
    object.close();
}

fn write_transfer_env(out: &mut String, transfer: &TransferEnvVar) {
    let mut object = ObjectWriter::open(out);
    object.string_omitempty("sourceContainerName", &transfer.source_container_name);
    if let Some(source) = &transfer.source_container_name_from {
        object.key("sourceContainerNameFrom");
        let mut inner = ObjectWriter::open(object.out);
        if let Some(field_ref) = &source.field_ref {
            inner.key("fieldRef");
            write_field_selector(inner.out, field_ref);
        }
        inner.close();
    }
    object.string_omitempty("envName", &transfer.env_name);
    if !transfer.env_names.is_empty() {
        object.key("envNames");
        object.out.push('[');
        for (index, name) in transfer.env_names.iter().enumerate() {
            if index > 0 {
                object.out.push(',');
            }
            go_json::write_str(object.out, name);
        }
        object.out.push(']');
    }
    object.close();
}

fn write_field_selector(out: &mut String, selector: &ObjectFieldSelector) {
    let mut object = ObjectWriter::open(out);
    object.string_omitempty("apiVersion", selector.api_version.as_deref().unwrap_or(""));
    object.string("fieldPath", &selector.field_path);
    object.close();
}

fn write_resources_policy(out: &mut String, policy: &ResourcesPolicy) {
    let mut object = ObjectWriter::open(out);
    object.string(
        "targetContainersMode",
        policy.target_containers_mode.as_str(),
    );
    object.string_omitempty(
        "targetContainersNameRegex",
        &policy.target_containers_name_regex,
    );
    object.key("resourcesExpr");
    let mut expr = ObjectWriter::open(object.out);
    for (name, expressions) in [
        ("limits", &policy.resources_expr.limits),
        ("requests", &policy.resources_expr.requests),
    ] {
        if let Some(expressions) = expressions {
            expr.key(name);
            write_expressions(expr.out, expressions);
        }
    }
    expr.close();
    object.close();
}

fn write_expressions(out: &mut String, expressions: &ResourceExpressions) {
    let mut object = ObjectWriter::open(out);
    object.string_omitempty("cpu", &expressions.cpu);
    object.string_omitempty("memory", &expressions.memory);
    object.close();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sidecar(json: serde_json::Value) -> SidecarContainer {
        serde_json::from_value(json).unwrap()
    }

    fn encode(sidecar: &SidecarContainer) -> String {
        let mut out = String::new();
        write_sidecar_container(&mut out, sidecar, false).unwrap();
        out
    }

    #[test]
    fn structs_are_always_written_and_kruise_fields_follow_the_container() {
        let plain = sidecar(serde_json::json!({"name": "container1", "image": "test-image"}));
        assert_eq!(
            encode(&plain),
            r#"{"name":"container1","image":"test-image","resources":{},"upgradeStrategy":{},"shareVolumePolicy":{}}"#
        );
    }

    #[test]
    fn every_kruise_field_in_go_order() {
        let full = sidecar(serde_json::json!({
            "name": "envoy", "image": "envoy:1", "restartPolicy": "Always",
            "podInjectPolicy": "AfterAppContainer",
            "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"},
            "shareVolumePolicy": {"type": "enabled"},
            "shareVolumeDevicePolicy": {"type": "disabled"},
            "transferEnv": [{"sourceContainerNameFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['c']"}}, "envName": "A", "envNames": ["B", "C"]}],
            "resourcesPolicy": {"targetContainersMode": "sum", "targetContainersNameRegex": ".*", "resourcesExpr": {"limits": {"cpu": "cpu*50%"}}}
        }));
        assert_eq!(
            encode(&full),
            concat!(
                r#"{"name":"envoy","image":"envoy:1","resources":{},"restartPolicy":"Always","#,
                r#""podInjectPolicy":"AfterAppContainer","upgradeStrategy":{"upgradeType":"HotUpgrade","hotUpgradeEmptyImage":"empty:1"},"#,
                r#""shareVolumePolicy":{"type":"enabled"},"shareVolumeDevicePolicy":{"type":"disabled"},"#,
                r#""transferEnv":[{"sourceContainerNameFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.labels['c']"}},"envName":"A","envNames":["B","C"]}],"#,
                r#""resourcesPolicy":{"targetContainersMode":"sum","targetContainersNameRegex":".*","resourcesExpr":{"limits":{"cpu":"cpu*50%"}}}}"#
            )
        );
    }

    #[test]
    fn blank_image_and_list_errors_name_the_index() {
        let plain = sidecar(serde_json::json!({"name": "c", "image": "i"}));
        let mut out = String::new();
        write_sidecar_container(&mut out, &plain, true).unwrap();
        assert!(!out.contains("image"));
        let bad = sidecar(serde_json::json!({"name": "c", "resources": {"limits": {"cpu": "x"}}}));
        let mut out = String::new();
        let error = write_sidecar_list(&mut out, &[plain, bad], false).unwrap_err();
        assert_eq!(error.path, "/1/resources/limits/cpu");
        let mut out = String::new();
        write_sidecar_list(&mut out, &[], false).unwrap();
        assert_eq!(out, "null");
    }
}
