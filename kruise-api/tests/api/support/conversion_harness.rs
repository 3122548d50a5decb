//! The fuzz harness of the conversion of untyped objects (what the CRD conversion webhook does with each
//! object of a ConversionReview), shared by `fuzz/fuzz_targets/convert_object.rs` and the property and corpus
//! tests (`tests/api/untrusted_input.rs`).
//!
//! Input: an object as JSON, optionally followed by a NUL and a value for its
//! `conversion.kruise-rs.io/v1alpha1-stash` annotation. The object is converted to both versions of its API
//! group: a conversion answers (never panics), an error renders, and what converts has the version asked
//! for and converts back to the version it came from.

use kruise_api::convert::{STASH_ANNOTATION, convert_object};
use serde_json::{Map, Value};

pub fn run(data: &[u8]) {
    let (object, stash) = match data.iter().position(|&byte| byte == 0) {
        Some(at) => {
            let (object, rest) = data.split_at(at);
            (object, rest.get(1..))
        }
        None => (data, None),
    };
    let Ok(mut object) = serde_json::from_slice::<Value>(object) else {
        return;
    };
    if let (Some(stash), Some(fields)) = (stash, object.as_object_mut()) {
        let stash = Value::String(String::from_utf8_lossy(stash).into_owned());
        let metadata = fields
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(metadata) = metadata.as_object_mut() {
            let annotations = metadata
                .entry("annotations")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(annotations) = annotations.as_object_mut() {
                annotations.insert(STASH_ANNOTATION.to_owned(), stash);
            }
        }
    }
    let from = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let group = from.split('/').next().unwrap_or_default();
    for version in ["v1alpha1", "v1beta1"] {
        let desired = format!("{group}/{version}");
        match convert_object(object.clone(), &desired) {
            Ok(converted) => {
                let version_of = |value: &Value| {
                    value
                        .get("apiVersion")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                };
                assert_eq!(version_of(&converted).as_deref(), Some(desired.as_str()));
                let back = convert_object(converted, &from)
                    .unwrap_or_else(|error| panic!("back to {from}: {error}"));
                assert_eq!(version_of(&back).as_deref(), Some(from.as_str()));
            }
            Err(error) => assert!(!error.to_string().is_empty()),
        }
    }
}
