//! Reviews of workloads: defaults as a JSON patch in both versions, unknown fields kept, refusals naming
//! field and value, UPDATEs judged on what they change, other requests let through.

use base64::Engine;
use serde_json::{Value, json};

use super::*;

fn cloneset() -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "demo", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "demo"}},
            "template": {"metadata": {"labels": {"app": "demo"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.25", "futureField": {"on": true}}]}}}})
}

fn review(kind: WorkloadKind, operation: &str, object: &Value, old: Option<&Value>) -> Vec<u8> {
    let version = object["apiVersion"]
        .as_str()
        .and_then(|v| v.strip_prefix("apps.kruise.io/"))
        .unwrap_or("v1alpha1");
    let mut request = json!({
        "uid": "uid-1", "operation": operation, "name": object["metadata"]["name"],
        "namespace": "default",
        "kind": {"group": "apps.kruise.io", "version": version, "kind": kind.kind()},
        "resource": {"group": "apps.kruise.io", "version": version, "resource": kind.resource()},
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

fn response(answer: &Answer) -> Value {
    assert_eq!(answer.http_status, 200);
    let value: Value = serde_json::from_slice(&answer.body).unwrap();
    value["response"].clone()
}

/// The object with the answer's patch applied (the object itself when there is none).
fn patched(object: &Value, answer: &Answer) -> Value {
    let response = response(answer);
    assert_eq!(response["allowed"], true, "{response}");
    let mut object = object.clone();
    if let Some(patch) = response["patch"].as_str() {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(patch)
            .unwrap();
        let patch: json_patch::Patch = serde_json::from_slice(&bytes).unwrap();
        json_patch::patch(&mut object, &patch).unwrap();
    }
    object
}

#[test]
fn a_v1alpha1_cloneset_gets_its_defaults_and_keeps_unknown_fields() {
    let object = cloneset();
    let answer = mutate(
        WorkloadKind::CloneSet,
        &review(WorkloadKind::CloneSet, "CREATE", &object, None),
    );
    let stored = patched(&object, &answer);
    assert_eq!(stored["spec"]["replicas"], 1);
    assert_eq!(stored["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(stored["spec"]["updateStrategy"]["type"], "ReCreate");
    assert_eq!(stored["spec"]["updateStrategy"]["maxUnavailable"], "20%");
    let main = &stored["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(main["imagePullPolicy"], "Always");
    assert_eq!(main["futureField"], json!({"on": true}));
    // Defaulted already: nothing more to add.
    let again = mutate(
        WorkloadKind::CloneSet,
        &review(WorkloadKind::CloneSet, "UPDATE", &stored, Some(&stored)),
    );
    assert!(
        response(&again).get("patch").is_none(),
        "{}",
        response(&again)
    );
}

#[test]
fn a_v1beta1_statefulset_gets_the_v1beta1_defaults() {
    let object = json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]}}}});
    let answer = mutate(
        WorkloadKind::StatefulSet,
        &review(WorkloadKind::StatefulSet, "CREATE", &object, None),
    );
    let stored = patched(&object, &answer);
    assert_eq!(stored["spec"]["podManagementPolicy"], "OrderedReady");
    let rolling = &stored["spec"]["updateStrategy"]["rollingUpdate"];
    assert_eq!(rolling["podUpdatePolicy"], "ReCreate");
    assert_eq!(rolling["maxUnavailable"], 1);
    assert_eq!(
        stored["spec"]["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
}

#[test]
fn every_kind_and_version_defaults() {
    let objects = [
        (
            WorkloadKind::DaemonSet,
            json!({"spec": {"selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
        ),
        (
            WorkloadKind::BroadcastJob,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
        ),
        (
            WorkloadKind::AdvancedCronJob,
            json!({"spec": {"schedule": "* * * * *",
            "template": {"broadcastJobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}}}}}),
        ),
        (
            WorkloadKind::ImagePullJob,
            json!({"spec": {"image": "nginx", "completionPolicy": {}}}),
        ),
        (WorkloadKind::CloneSet, cloneset()),
        (
            WorkloadKind::StatefulSet,
            json!({"spec": {"selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
        ),
    ];
    for (kind, spec) in objects {
        for version in ["v1alpha1", "v1beta1"] {
            let mut object = spec.clone();
            object["apiVersion"] = json!(format!("apps.kruise.io/{version}"));
            object["kind"] = json!(kind.kind());
            object["metadata"] = json!({"name": "x", "namespace": "default"});
            let answer = mutate(kind, &review(kind, "CREATE", &object, None));
            let response = response(&answer);
            assert_eq!(response["allowed"], true, "{kind:?} {version}: {response}");
            assert!(
                response["patch"].is_string(),
                "{kind:?} {version}: no defaults"
            );
        }
    }
}

/// (allowed, status code, message) of a validation.
fn verdict(
    kind: WorkloadKind,
    operation: &str,
    object: &Value,
    old: Option<&Value>,
) -> (bool, u64, String) {
    let answer = validate(kind, &review(kind, operation, object, old));
    let response = response(&answer);
    (
        response["allowed"].as_bool().unwrap(),
        response["status"]["code"].as_u64().unwrap_or_default(),
        response["status"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

#[test]
fn refusals_name_the_field_and_the_value() {
    assert_eq!(
        verdict(WorkloadKind::CloneSet, "CREATE", &cloneset(), None),
        (true, 0, String::new())
    );
    let mut bad = cloneset();
    bad["spec"]["updateStrategy"] = json!({"partition": "half"});
    let (allowed, code, message) = verdict(WorkloadKind::CloneSet, "CREATE", &bad, None);
    assert!(!allowed);
    assert_eq!(code, 422);
    assert!(
        message.starts_with("CloneSet.apps.kruise.io \"demo\" is invalid: spec.updateStrategy.partition: Invalid value: \"half\""),
        "{message}"
    );
}

#[test]
fn a_v1beta1_cloneset_is_validated_as_v1alpha1() {
    let mut beta =
        kruise_api::convert::convert_object(cloneset(), "apps.kruise.io/v1beta1").unwrap();
    beta["spec"]["replicas"] = json!(-1);
    let (allowed, _, message) = verdict(WorkloadKind::CloneSet, "CREATE", &beta, None);
    assert!(!allowed);
    assert!(
        message.contains("spec.replicas: Invalid value: -1"),
        "{message}"
    );
}

#[test]
fn updates_are_judged_on_what_they_change() {
    let stored = cloneset();
    let mut moved = cloneset();
    moved["spec"]["selector"] = json!({"matchLabels": {"app": "demo", "v": "2"}});
    moved["spec"]["template"]["metadata"]["labels"] = json!({"app": "demo", "v": "2"});
    let (allowed, _, message) = verdict(WorkloadKind::CloneSet, "UPDATE", &moved, Some(&stored));
    assert!(!allowed);
    assert!(message.contains("spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"demo\",\"v\":\"2\"}}: field is immutable"), "{message}");

    // Stored while the webhook was away with a problem: a label change still goes through.
    let mut broken = cloneset();
    broken["spec"]["replicas"] = json!(-1);
    let mut labelled = broken.clone();
    labelled["metadata"]["labels"] = json!({"team": "a"});
    assert!(verdict(WorkloadKind::CloneSet, "UPDATE", &labelled, Some(&broken)).0);
}

#[test]
fn other_requests_pass_and_bad_objects_are_named() {
    // A SidecarSet sent to the CloneSet path is not judged.
    let body = review(WorkloadKind::CloneSet, "CREATE", &cloneset(), None);
    let mut value: Value = serde_json::from_slice(&body).unwrap();
    value["request"]["resource"]["resource"] = json!("sidecarsets");
    let answer = validate(WorkloadKind::CloneSet, &serde_json::to_vec(&value).unwrap());
    assert_eq!(response(&answer)["allowed"], true);
    // DELETE is not handled.
    let (allowed, _, _) = verdict(
        WorkloadKind::CloneSet,
        "DELETE",
        &json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": {"name": "demo"}, "spec": {"replicas": -1}}),
        None,
    );
    assert!(allowed);
    let mut bad = cloneset();
    bad["spec"]["replicas"] = json!("three");
    let (allowed, code, message) = verdict(WorkloadKind::CloneSet, "CREATE", &bad, None);
    assert!(!allowed);
    assert_eq!(code, 400);
    assert!(message.contains("decoding the new CloneSet"), "{message}");
    let answer = mutate(WorkloadKind::CloneSet, b"not json");
    assert_eq!(answer.http_status, 400);
}
