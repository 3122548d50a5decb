//! Reading and writing the in-place annotations of a pod with Go's semantics: `apps.kruise.io/inplace-update-state`
//! (and its legacy key), `apps.kruise.io/inplace-update-grace` (and its legacy key) and
//! `apps.kruise.io/runtime-containers-meta`.
//!
//! Go is lenient where serde is strict: a missing or `null` field is the zero value (`""`, an empty list, Go's
//! zero time, which Go writes back as `null`), and a `null` map entry is the zero value of the entry type.
//! [`parse_state`] accepts the same inputs (holding the zero time as [`go_zero_time`]) and [`format_state`]
//! writes them back as Go does; [`format_state`] also applies Go's escaping of `<`, `>` and `&`.
//!
//! ```
//! use kruise_inplace::state;
//!
//! let state = state::parse_state(r#"{"revision":"new-revision","lastContainerStatuses":{"c1":{"imageID":"img01"}}}"#).unwrap();
//! assert_eq!(state.revision, "new-revision");
//! assert_eq!(
//!     state::format_state(&state),
//!     r#"{"revision":"new-revision","updateTimestamp":null,"lastContainerStatuses":{"c1":{"imageID":"img01"}}}"#
//! );
//! ```

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::inplace::{InPlaceUpdateState, RuntimeContainerMetaSet};
use kruise_api::keys::inplace::{
    GRACE_ANNOTATION, LEGACY_GRACE_ANNOTATION, LEGACY_STATE_ANNOTATION,
    RUNTIME_CONTAINERS_META_ANNOTATION, STATE_ANNOTATION,
};
use serde_json::Value;

use crate::go_json;

/// An in-place annotation whose value does not parse.
#[derive(Debug, thiserror::Error)]
#[error("annotation {key}: invalid value {value:?}: {source}")]
pub struct AnnotationError {
    /// The annotation key.
    pub key: &'static str,
    /// The value found, cut to 200 characters.
    pub value: String,
    /// What the parser said.
    #[source]
    pub source: serde_json::Error,
}

/// Go's zero `time.Time` (`0001-01-01T00:00:00Z`), which Go writes as `null`.
#[must_use]
pub fn go_zero_time() -> Time {
    Time(Timestamp::from_second(-62_135_596_800).unwrap_or(Timestamp::UNIX_EPOCH))
}

const ZERO_TIME_TEXT: &str = "\"0001-01-01T00:00:00Z\"";

/// Parses an `InPlaceUpdateState` value as Go's `json.Unmarshal` does (unknown fields ignored, `null` or missing
/// timestamps are the zero time).
///
/// # Errors
/// [`AnnotationError`] when the value is not such JSON.
pub fn parse_state(value: &str) -> Result<InPlaceUpdateState, AnnotationError> {
    let error = |source| AnnotationError {
        key: STATE_ANNOTATION,
        value: value.chars().take(200).collect(),
        source,
    };
    let mut json: Value = serde_json::from_str(value).map_err(error)?;
    go_lenient_state(&mut json);
    serde_json::from_value(json).map_err(error)
}

/// Rewrites what Go reads as zero values (missing or `null` fields, `null` entries) into what serde accepts.
fn go_lenient_state(json: &mut Value) {
    let Value::Object(fields) = json else {
        return;
    };
    strip_null_fields(fields);
    fill(fields, "revision", || Value::String(String::new()));
    fill(fields, "updateTimestamp", zero_time_value);
    for key in [
        "lastContainerStatuses",
        "nextContainerRefMetadata",
        "nextContainerResources",
    ] {
        if let Some(Value::Object(entries)) = fields.get_mut(key) {
            entries.values_mut().for_each(struct_entry);
            for entry in entries.values_mut() {
                if let Value::Object(entry) = entry {
                    for map in ["labels", "annotations"] {
                        if let Some(Value::Object(map)) = entry.get_mut(map) {
                            map.values_mut().for_each(string_entry);
                        }
                    }
                }
            }
        }
    }
    if let Some(Value::Object(images)) = fields.get_mut("nextContainerImages") {
        images.values_mut().for_each(string_entry);
    }
    if let Some(Value::Object(pre_check)) = fields.get_mut("preCheckBeforeNext") {
        strip_null_fields(pre_check);
        if let Some(Value::Array(names)) = pre_check.get_mut("containersRequiredReady") {
            names.iter_mut().for_each(string_entry);
        }
    }
    if let Some(Value::Array(batches)) = fields.get_mut("containerBatchesRecord") {
        for batch in batches {
            struct_entry(batch);
            if let Value::Object(batch) = batch {
                fill(batch, "timestamp", zero_time_value);
                fill(batch, "containers", || Value::Array(Vec::new()));
                if let Some(Value::Array(names)) = batch.get_mut("containers") {
                    names.iter_mut().for_each(string_entry);
                }
            }
        }
    }
}

fn zero_time_value() -> Value {
    Value::String(ZERO_TIME_TEXT.trim_matches('"').to_owned())
}

fn fill(fields: &mut serde_json::Map<String, Value>, key: &str, zero: impl FnOnce() -> Value) {
    if !fields.contains_key(key) {
        fields.insert(key.to_owned(), zero());
    }
}

fn strip_null_fields(fields: &mut serde_json::Map<String, Value>) {
    fields.retain(|_, value| !value.is_null());
}

/// A `null` entry of a map or list of structs is the zero struct; `null` fields inside are unset.
fn struct_entry(value: &mut Value) {
    if value.is_null() {
        *value = Value::Object(serde_json::Map::new());
    }
    if let Value::Object(fields) = value {
        strip_null_fields(fields);
    }
}

/// A `null` entry of a map or list of strings is `""`.
fn string_entry(value: &mut Value) {
    if value.is_null() {
        *value = Value::String(String::new());
    }
}

/// The JSON upstream writes for a state: Go's field order and omission rules, zero times as `null`, Go
/// escaping.
#[must_use]
pub fn format_state(state: &InPlaceUpdateState) -> String {
    let json = go_json::to_string_like_go(state);
    if json.contains(ZERO_TIME_TEXT) {
        json.replace(
            &format!("\"updateTimestamp\":{ZERO_TIME_TEXT}"),
            "\"updateTimestamp\":null",
        )
        .replace(
            &format!("\"timestamp\":{ZERO_TIME_TEXT}"),
            "\"timestamp\":null",
        )
    } else {
        json
    }
}

fn annotation<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

/// The raw state annotation: the current key, else the legacy one (upstream's `GetInPlaceUpdateState`).
#[must_use]
pub fn state_value(pod: &Pod) -> Option<&str> {
    annotation(pod, STATE_ANNOTATION).or_else(|| annotation(pod, LEGACY_STATE_ANNOTATION))
}

/// The pod's in-place update state, if it has one.
///
/// # Errors
/// [`AnnotationError`] when the annotation does not parse.
pub fn read_state(pod: &Pod) -> Result<Option<InPlaceUpdateState>, AnnotationError> {
    state_value(pod).map(parse_state).transpose()
}

/// Writes the state annotation and removes the legacy key.
pub fn write_state(pod: &mut Pod, state: &InPlaceUpdateState) {
    let annotations = pod
        .metadata
        .annotations
        .get_or_insert_with(Default::default);
    annotations.insert(STATE_ANNOTATION.to_owned(), format_state(state));
    annotations.remove(LEGACY_STATE_ANNOTATION);
}

/// The raw grace annotation: the current key, else the legacy one (upstream's `GetInPlaceUpdateGrace`).
#[must_use]
pub fn grace_value(pod: &Pod) -> Option<&str> {
    annotation(pod, GRACE_ANNOTATION).or_else(|| annotation(pod, LEGACY_GRACE_ANNOTATION))
}

/// Removes both grace annotation keys.
pub fn remove_grace(pod: &mut Pod) {
    if let Some(annotations) = pod.metadata.annotations.as_mut() {
        annotations.remove(GRACE_ANNOTATION);
        annotations.remove(LEGACY_GRACE_ANNOTATION);
    }
}

/// The runtime container metadata written by kruise-daemon, if any.
///
/// # Errors
/// [`AnnotationError`] when the annotation does not parse.
pub fn read_runtime_meta(pod: &Pod) -> Result<Option<RuntimeContainerMetaSet>, AnnotationError> {
    annotation(pod, RUNTIME_CONTAINERS_META_ANNOTATION)
        .map(|value| {
            let error = |source| AnnotationError {
                key: RUNTIME_CONTAINERS_META_ANNOTATION,
                value: value.chars().take(200).collect(),
                source,
            };
            let mut json: Value = serde_json::from_str(value).map_err(error)?;
            if let Value::Object(fields) = &mut json {
                strip_null_fields(fields);
                if let Some(Value::Array(containers)) = fields.get_mut("containers") {
                    for container in containers {
                        struct_entry(container);
                        if let Some(hashes) = container.get_mut("hashes") {
                            struct_entry(hashes);
                        }
                    }
                }
            }
            serde_json::from_value(json).map_err(error)
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_time_round_trip() {
        let written = r#"{"revision":"r","updateTimestamp":null,"lastContainerStatuses":null,"containerBatchesRecord":[{"timestamp":null,"containers":["a"]}]}"#;
        let state = parse_state(written).unwrap();
        assert_eq!(state.update_timestamp, go_zero_time());
        assert_eq!(format_state(&state), written);
    }

    #[test]
    fn real_timestamps_and_escaping() {
        let written = r#"{"revision":"r","updateTimestamp":"2024-05-01T10:00:00Z","lastContainerStatuses":null,"nextContainerRefMetadata":{"c":{"creationTimestamp":null,"labels":{"k":"\u003cv\u003e"}}}}"#;
        let state = parse_state(written).unwrap();
        assert_eq!(state.next_container_ref_metadata["c"].labels["k"], "<v>");
        assert_eq!(format_state(&state), written);
    }

    #[test]
    fn nulls_and_missing_fields_are_zero_values() {
        let state = parse_state(
            r#"{"lastContainerStatuses":{"c1":null,"c2":{"imageID":null}},"nextContainerImages":{"c3":null},"preCheckBeforeNext":{"containersRequiredReady":null},"containerBatchesRecord":[null,{"containers":[null]}],"updateImages":null}"#,
        )
        .unwrap();
        assert_eq!(state.revision, "");
        assert_eq!(
            state.last_container_statuses.as_ref().unwrap()["c1"].image_id,
            ""
        );
        assert_eq!(state.next_container_images["c3"], "");
        assert_eq!(state.container_batches_record.len(), 2);
        assert_eq!(state.container_batches_record[1].containers, [""]);
        assert_eq!(
            format_state(&state),
            r#"{"revision":"","updateTimestamp":null,"lastContainerStatuses":{"c1":{},"c2":{}},"nextContainerImages":{"c3":""},"preCheckBeforeNext":{},"containerBatchesRecord":[{"timestamp":null,"containers":[]},{"timestamp":null,"containers":[""]}]}"#
        );
    }

    #[test]
    fn invalid_values_name_the_key() {
        let error = parse_state("{").unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("annotation apps.kruise.io/inplace-update-state: invalid value \"{\"")
        );
        assert!(parse_state(r#"{"revision":1}"#).is_err());
    }
}
