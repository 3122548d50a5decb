//! The guarded stash that makes v1alpha1 → v1beta1 → v1alpha1 lossless.

use std::collections::BTreeMap;

use kube::Resource;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::HubConversion;

/// Annotation on a v1beta1 object that remembers the parts of the v1alpha1 object it was converted from
/// which the v1beta1 shape cannot hold. Present only when needed; never present on v1alpha1 objects.
pub const STASH_ANNOTATION: &str = "conversion.kruise-rs.io/v1alpha1-stash";

#[derive(Serialize, Deserialize, Default)]
struct Stash {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    spec: Option<GuardedPatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<GuardedPatch>,
}

/// A JSON merge patch that applies only while the hub part it was made for is unchanged.
#[derive(Serialize, Deserialize)]
struct GuardedPatch {
    fingerprint: String,
    patch: Value,
}

pub(super) fn to_hub<S: HubConversion>(spoke: &S) -> S::Hub {
    let mut hub = spoke.to_hub_fields();
    remove_stash(hub.meta_mut());
    if S::from_hub_fields(&hub) == *spoke {
        return hub;
    }
    // What `from_hub` will see once the stash is added and taken out again: an annotation map that held only
    // the stash disappears, so the patch is computed against exactly that.
    let mut seen_by_from_hub = hub.clone();
    seen_by_from_hub
        .meta_mut()
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(STASH_ANNOTATION.to_owned(), String::new());
    remove_stash(seen_by_from_hub.meta_mut());
    let back = S::from_hub_fields(&seen_by_from_hub);
    let (Ok(wanted), Ok(got), Ok(hub_json)) = (
        serde_json::to_value(spoke),
        serde_json::to_value(&back),
        serde_json::to_value(&seen_by_from_hub),
    ) else {
        return hub;
    };
    let Some(Value::Object(mut patch)) = merge_diff(&got, &wanted) else {
        return hub;
    };
    // Only spec and status are stashed (and applied back): a conversion may not change the rest.
    let spec_patch = patch.remove("spec");
    let status_patch = patch.remove("status");
    let stash = Stash {
        spec: spec_patch.map(|spec| {
            let mut patch = Map::new();
            patch.insert("spec".to_owned(), spec);
            GuardedPatch {
                fingerprint: fingerprint(&spec_part(&hub_json)),
                patch: Value::Object(patch),
            }
        }),
        status: status_patch.map(|patch| GuardedPatch {
            fingerprint: fingerprint(&status_part(&hub_json)),
            patch,
        }),
    };
    if let Ok(encoded) = serde_json::to_string(&stash) {
        hub.meta_mut()
            .annotations
            .get_or_insert_with(BTreeMap::new)
            .insert(STASH_ANNOTATION.to_owned(), encoded);
    }
    hub
}

pub(super) fn from_hub<S: HubConversion>(hub: &S::Hub) -> S {
    let stash = hub
        .meta()
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(STASH_ANNOTATION))
        .and_then(|raw| serde_json::from_str::<Stash>(raw).ok());
    let mut clean = hub.clone();
    remove_stash(clean.meta_mut());
    let spoke = S::from_hub_fields(&clean);
    let Some(stash) = stash else {
        return spoke;
    };
    let (Ok(mut spoke_json), Ok(hub_json)) =
        (serde_json::to_value(&spoke), serde_json::to_value(&clean))
    else {
        return spoke;
    };
    let mut patched = false;
    // The annotation is written by whoever writes the object: only its `spec` part is applied, so a
    // hand-written stash cannot change metadata (which the API server refuses in a conversion response,
    // failing every read of the object in v1alpha1) or anything else outside spec and status.
    if let Some(spec) = stash
        .spec
        .filter(|guarded| guarded.fingerprint == fingerprint(&spec_part(&hub_json)))
        .and_then(|guarded| guarded.patch.get("spec").cloned())
    {
        let mut spec_patch = Map::new();
        spec_patch.insert("spec".to_owned(), spec);
        json_patch::merge(&mut spoke_json, &Value::Object(spec_patch));
        patched = true;
    }
    if let Some(guarded) = stash
        .status
        .filter(|guarded| guarded.fingerprint == fingerprint(&status_part(&hub_json)))
    {
        let mut status_patch = Map::new();
        status_patch.insert("status".to_owned(), guarded.patch);
        json_patch::merge(&mut spoke_json, &Value::Object(status_patch));
        patched = true;
    }
    if !patched {
        return spoke;
    }
    serde_json::from_value(spoke_json).unwrap_or(spoke)
}

/// Removes the stash annotation; an annotation map that held nothing else goes too.
fn remove_stash(meta: &mut k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) {
    let Some(annotations) = meta.annotations.as_mut() else {
        return;
    };
    if annotations.remove(STASH_ANNOTATION).is_some() && annotations.is_empty() {
        meta.annotations = None;
    }
}

/// What the spec guard covers: the spec and the labels and annotations (which some mappings use); not the
/// metadata the API server fills in after conversion.
fn spec_part(hub: &Value) -> Value {
    let metadata = &hub["metadata"];
    serde_json::json!({
        "spec": hub.get("spec"),
        "labels": metadata.get("labels"),
        "annotations": metadata.get("annotations"),
    })
}

fn status_part(hub: &Value) -> Value {
    hub.get("status").cloned().unwrap_or(Value::Null)
}

/// FNV-1a (64 bit) of the canonical JSON text, as hex.
fn fingerprint(value: &Value) -> String {
    let text = value.to_string();
    let hash = text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    format!("{hash:016x}")
}

/// The RFC 7386 merge patch that turns `from` into `to`, or `None` when they are equal. Exact for documents
/// without `null` values (the serialised kruise types never contain one).
pub(crate) fn merge_diff(from: &Value, to: &Value) -> Option<Value> {
    if from == to {
        return None;
    }
    match (from, to) {
        (Value::Object(from), Value::Object(to)) => {
            let mut patch = Map::new();
            for (key, to_value) in to {
                match from.get(key) {
                    Some(from_value) => {
                        if let Some(diff) = merge_diff(from_value, to_value) {
                            patch.insert(key.clone(), diff);
                        }
                    }
                    None => {
                        patch.insert(key.clone(), to_value.clone());
                    }
                }
            }
            for key in from.keys().filter(|key| !to.contains_key(*key)) {
                patch.insert(key.clone(), Value::Null);
            }
            Some(Value::Object(patch))
        }
        _ => Some(to.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::merge_diff;
    use serde_json::json;

    #[test]
    fn a_hand_written_stash_cannot_change_metadata() {
        use crate::apps::{v1alpha1, v1beta1};
        use crate::convert::convert_object;

        let hub: v1beta1::CloneSet = serde_json::from_value(json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet",
            "metadata": {"name": "web", "namespace": "ns", "uid": "u-1"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "a"}]}}},
        }))
        .unwrap();
        let hub_json = serde_json::to_value(&hub).unwrap();
        // A stash whose guard matches the object, as anyone who can write the object can compute it.
        let forged = json!({"spec": {
            "fingerprint": super::fingerprint(&super::spec_part(&hub_json)),
            "patch": {"metadata": {"name": "other", "uid": "u-2", "labels": {"forged": "yes"}},
                      "spec": {"replicas": 7}},
        }});
        let mut tampered = hub.clone();
        tampered.metadata.annotations =
            Some([(super::STASH_ANNOTATION.to_owned(), forged.to_string())].into());
        // The guard is computed without the stash itself, so it still matches.
        let alpha = v1alpha1::CloneSet::from(&tampered);
        assert_eq!(alpha.metadata.name.as_deref(), Some("web"));
        assert_eq!(alpha.metadata.uid.as_deref(), Some("u-1"));
        assert!(
            alpha.metadata.labels.is_none(),
            "{:?}",
            alpha.metadata.labels
        );
        assert_eq!(
            alpha.spec.replicas,
            Some(7),
            "the spec part of a matching stash still applies"
        );
        // The same through the untyped conversion the webhook uses.
        let converted = convert_object(
            serde_json::to_value(&tampered).unwrap(),
            "apps.kruise.io/v1alpha1",
        )
        .unwrap();
        assert_eq!(converted["metadata"]["name"], "web");
        assert_eq!(converted["metadata"]["uid"], "u-1");
    }

    #[test]
    fn merge_diff_round_trips() {
        let cases = [
            (
                json!({"a": 1, "b": {"c": [1, 2], "d": "x"}}),
                json!({"a": 1, "b": {"c": [2], "e": true}}),
            ),
            (json!({"a": {"b": 1}}), json!({})),
            (json!({}), json!({"a": {"b": {}}})),
            (json!({"a": [1]}), json!({"a": {"b": 1}})),
        ];
        for (from, to) in cases {
            let mut patched = from.clone();
            json_patch::merge(&mut patched, &merge_diff(&from, &to).unwrap());
            assert_eq!(patched, to);
        }
        assert_eq!(merge_diff(&json!({"a": 1}), &json!({"a": 1})), None);
    }
}
