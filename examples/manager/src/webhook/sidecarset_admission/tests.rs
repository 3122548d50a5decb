//! Reviews of SidecarSets: allowed, rejected with the field named, converted from v1alpha1, UPDATEs judged
//! on what they change, the whitelist read from the ConfigMap store.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::watcher::Event;
use serde_json::{Value, json};

use super::*;

fn sidecarset(name: &str, container: &str) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "SidecarSet", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "nginx"}},
            "containers": [{"name": container, "image": "busybox"}]}})
}

fn request(operation: &str, object: &Value, old: Option<&Value>) -> Vec<u8> {
    let mut request = json!({
        "uid": "uid-1", "operation": operation, "name": object["metadata"]["name"],
        "kind": {"group": "apps.kruise.io", "version": "v1beta1", "kind": "SidecarSet"},
        "resource": {"group": "apps.kruise.io", "version": "v1beta1", "resource": "sidecarsets"},
        "userInfo": {"username": "admin"}, "object": object,
    });
    if let Some(old) = old {
        request["oldObject"] = old.clone();
    }
    serde_json::to_vec(
        &json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": request}),
    )
    .unwrap()
}

fn validator(
    stored: &[Value],
    whitelist: Option<&str>,
    defaults_allowed: bool,
) -> SidecarSetValidator {
    let (sets, mut writer) = reflector::store::<SidecarSet>();
    for value in stored {
        writer.apply_watcher_event(&Event::Apply(
            serde_json::from_value(value.clone()).unwrap(),
        ));
    }
    let (configs, mut config_writer) = reflector::store::<ConfigMap>();
    if let Some(whitelist) = whitelist {
        config_writer.apply_watcher_event(&Event::Apply(
            serde_json::from_value(json!({"metadata": {"name": "kruise-configuration",
                "namespace": "kruise-system"},
                "data": {"SidecarSet_PatchPodMetadata_WhiteList": whitelist}}))
            .unwrap(),
        ));
    }
    SidecarSetValidator::from_stores(sets, configs, "kruise-system", defaults_allowed)
}

/// (HTTP status, allowed, status code, message).
fn verdict(validator: &SidecarSetValidator, body: &[u8]) -> (u16, bool, u64, String) {
    let answer = validator.review(body);
    let value: Value = serde_json::from_slice(&answer.body).unwrap();
    let response = &value["response"];
    (
        answer.http_status,
        response["allowed"].as_bool().unwrap(),
        response["status"]["code"].as_u64().unwrap_or(0),
        response["status"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[test]
fn a_valid_sidecarset_is_allowed_and_an_invalid_one_names_its_field() {
    let validator = validator(&[], None, false);
    let (status, allowed, ..) = verdict(
        &validator,
        &request("CREATE", &sidecarset("a", "log"), None),
    );
    assert_eq!((status, allowed), (200, true));

    let mut hot = sidecarset("a", "proxy");
    hot["spec"]["containers"][0]["upgradeStrategy"] = json!({"upgradeType": "HotUpgrade"});
    let (status, allowed, code, message) = verdict(&validator, &request("CREATE", &hot, None));
    assert_eq!((status, allowed, code), (200, false, 422));
    assert!(
        message.starts_with("SidecarSet.apps.kruise.io \"a\" is invalid: "),
        "{message}"
    );
    assert!(
        message.contains("spec.containers[0].upgradeStrategy.hotUpgradeEmptyImage"),
        "{message}"
    );
}

#[test]
fn names_collide_with_stored_sidecarsets_but_not_with_themselves() {
    let stored = sidecarset("a", "log");
    let validator = validator(std::slice::from_ref(&stored), None, false);
    let (_, allowed, _, message) = verdict(
        &validator,
        &request("CREATE", &sidecarset("b", "log"), None),
    );
    assert!(!allowed);
    assert!(
        message.contains("\"log\" is also used by SidecarSet \"a\""),
        "{message}"
    );
    let mut changed = stored.clone();
    changed["spec"]["containers"][0]["image"] = json!("busybox:2");
    let (_, allowed, ..) = verdict(&validator, &request("UPDATE", &changed, Some(&stored)));
    assert!(allowed);
}

#[test]
fn v1alpha1_objects_are_converted_then_checked() {
    let validator = validator(&[], None, false);
    let mut old_api = sidecarset("a", "log");
    old_api["apiVersion"] = json!("apps.kruise.io/v1alpha1");
    let (_, allowed, ..) = verdict(&validator, &request("CREATE", &old_api, None));
    assert!(allowed);
    old_api["spec"]["selector"] = json!({});
    let (_, allowed, _, message) = verdict(&validator, &request("CREATE", &old_api, None));
    assert!(!allowed);
    assert!(message.contains("spec.selector"), "{message}");
}

#[test]
fn updates_are_refused_only_for_the_problems_they_introduce() {
    let validator = validator(&[], None, false);
    let mut broken = sidecarset("a", "log");
    broken["spec"]["selector"] = json!({});
    // The controller writing an annotation on a SidecarSet stored before the webhook existed.
    let mut annotated = broken.clone();
    annotated["metadata"]["annotations"] = json!({"kruise.io/sidecarset-hash": "x"});
    let (_, allowed, ..) = verdict(&validator, &request("UPDATE", &annotated, Some(&broken)));
    assert!(allowed);
    // Changing the upgrade type of an existing container is new, and refused.
    let cold = sidecarset("a", "proxy");
    let mut hot = cold.clone();
    hot["spec"]["containers"][0]["upgradeStrategy"] =
        json!({"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"});
    let (_, allowed, code, message) = verdict(&validator, &request("UPDATE", &hot, Some(&cold)));
    assert_eq!((allowed, code), (false, 422));
    assert!(message.contains("is immutable"), "{message}");
}

#[test]
fn the_whitelist_comes_from_the_configmap() {
    let mut patching = sidecarset("a", "log");
    patching["spec"]["patchPodMetadata"] =
        json!([{"annotations": {"log.example.com/on": "true"}, "patchPolicy": "Overwrite"}]);
    let body = request("CREATE", &patching, None);
    let (_, allowed, _, message) = verdict(&validator(&[], None, false), &body);
    assert!(!allowed);
    assert!(message.contains("spec.patchPodMetadata"), "{message}");
    let (_, allowed, ..) = verdict(&validator(&[], None, true), &body);
    assert!(allowed, "the defaults gate allows it without a whitelist");
    let whitelist = r#"{"rules": [{"allowedAnnotationKeyExprs": ["^log\\.example\\.com/.*$"]}]}"#;
    let (_, allowed, ..) = verdict(&validator(&[], Some(whitelist), false), &body);
    assert!(allowed);
    let (_, allowed, code, message) = verdict(&validator(&[], Some("{not json"), false), &body);
    assert_eq!((allowed, code), (false, 400));
    assert!(
        message.contains(
            "kruise-system/kruise-configuration key SidecarSet_PatchPodMetadata_WhiteList"
        ),
        "{message}"
    );
}

#[test]
fn other_requests_pass_and_garbage_is_refused() {
    let validator = validator(&[], None, false);
    let mut invalid = sidecarset("a", "log");
    invalid["spec"]["selector"] = json!({});
    let (_, allowed, ..) = verdict(&validator, &request("DELETE", &invalid, Some(&invalid)));
    assert!(allowed);
    let mut body: Value = serde_json::from_slice(&request("CREATE", &invalid, None)).unwrap();
    body["request"]["resource"]["resource"] = json!("clonesets");
    let (_, allowed, ..) = verdict(&validator, &serde_json::to_vec(&body).unwrap());
    assert!(allowed);
    assert_eq!(validator.review(b"garbage").http_status, 400);
    let mut undecodable = sidecarset("a", "log");
    undecodable["spec"]["containers"] = json!("nope");
    let (status, allowed, code, message) =
        verdict(&validator, &request("CREATE", &undecodable, None));
    assert_eq!((status, allowed, code), (200, false, 400));
    assert!(message.contains("decoding the new SidecarSet"), "{message}");
}
