//! Reviews in, reviews out: happy paths, pods left alone, and every kind of malformed input.

use base64::Engine;
use serde_json::{Value, json};

use super::*;
use k8s_openapi::api::core::v1::Pod;

fn request(operation: &str, object: &Value) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": "default",
            "operation": operation,
            "userInfo": {"username": "admin"},
            "object": object.clone(),
            "dryRun": false
        }
    })
}

fn cloneset_pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "demo-abcde", "namespace": "default", "ownerReferences": [{
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "demo",
            "uid": "6e3e1b35-0000-0000-0000-000000000000", "controller": true, "blockOwnerDeletion": true}]},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}
    })
}

fn answer_of(body: &Value) -> (u16, Value) {
    let answer = review(&serde_json::to_vec(body).unwrap(), &Mutator::default());
    (
        answer.http_status,
        serde_json::from_slice(&answer.body).unwrap(),
    )
}

/// The decoded patch of a response (`null` when there is none).
fn patch_of(response: &Value) -> Value {
    match response["response"]["patch"].as_str() {
        Some(encoded) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .unwrap();
            serde_json::from_slice(&bytes).unwrap()
        }
        None => Value::Null,
    }
}

#[test]
fn cloneset_pods_get_both_gates_as_a_json_patch() {
    let (status, response) = answer_of(&request("CREATE", &cloneset_pod()));
    assert_eq!(status, 200);
    assert_eq!(response["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(response["kind"], "AdmissionReview");
    assert_eq!(
        response["response"]["uid"],
        "705ab4f5-6393-11e8-b7cc-42010a800002"
    );
    assert_eq!(response["response"]["allowed"], true);
    assert_eq!(response["response"]["patchType"], "JSONPatch");
    assert_eq!(
        patch_of(&response),
        json!([{"op": "add", "path": "/spec/readinessGates",
            "value": [{"conditionType": "InPlaceUpdateReady"}, {"conditionType": "KruisePodReady"}]}])
    );
    // The patch applies to the object it was made for.
    let mut pod = cloneset_pod();
    let patch: json_patch::Patch = serde_json::from_value(patch_of(&response)).unwrap();
    json_patch::patch(&mut pod, &patch).unwrap();
    assert_eq!(
        pod["spec"]["readinessGates"][1]["conditionType"],
        "KruisePodReady"
    );
}

#[test]
fn other_pods_and_other_operations_are_allowed_untouched() {
    let plain = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain"},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]}});
    for body in [
        request("CREATE", &plain),
        request("UPDATE", &cloneset_pod()),
        request("DELETE", &cloneset_pod()),
    ] {
        let (status, response) = answer_of(&body);
        assert_eq!(status, 200);
        assert_eq!(response["response"]["allowed"], true);
        assert_eq!(response["response"]["patch"], Value::Null);
    }
    let mut binding = request("CREATE", &cloneset_pod());
    binding["request"]["subResource"] = json!("binding");
    let (_, response) = answer_of(&binding);
    assert_eq!(
        (response["response"]["allowed"].clone(), patch_of(&response)),
        (json!(true), Value::Null)
    );
    let mut other = request(
        "CREATE",
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}),
    );
    other["request"]["resource"]["resource"] = json!("configmaps");
    let (_, response) = answer_of(&other);
    assert_eq!(response["response"]["allowed"], true);
}

#[test]
fn launch_priority_and_gates_combine() {
    let mut pod = cloneset_pod();
    pod["metadata"]["annotations"] = json!({"apps.kruise.io/container-launch-priority": "Ordered"});
    pod["spec"]["containers"] = json!([{"name": "a", "image": "x"}, {"name": "b", "image": "y", "env": [{"name": "E", "value": "1"}]}]);
    let (_, response) = answer_of(&request("CREATE", &pod));
    let ops = patch_of(&response);
    assert_eq!(ops.as_array().unwrap().len(), 3);
    assert_eq!(ops[1]["path"], "/spec/containers/0/env");
    assert_eq!(ops[2]["path"], "/spec/containers/1/env/-");
    assert_eq!(
        ops[2]["value"]["valueFrom"]["configMapKeyRef"],
        json!({"name": "demo-abcde-barrier", "key": "p_-1"})
    );
}

#[test]
fn a_pod_without_a_spec_is_left_to_the_api_servers_validation() {
    for spec in [Value::Null, Value::String("absent".into())] {
        let mut pod = cloneset_pod();
        pod["metadata"]["annotations"] =
            json!({"apps.kruise.io/container-launch-priority": "Ordered"});
        if spec.is_null() {
            pod["spec"] = Value::Null;
        } else {
            pod.as_object_mut().unwrap().remove("spec");
        }
        let (status, response) = answer_of(&request("CREATE", &pod));
        assert_eq!(status, 200);
        assert_eq!(response["response"]["allowed"], true, "{response}");
        assert_eq!(patch_of(&response), Value::Null, "{response}");
    }
}

#[test]
fn generated_names_are_deterministic_and_well_formed() {
    let name = generated_name("web-", "uid-1");
    assert_eq!(name, generated_name("web-", "uid-1"));
    assert_ne!(name, generated_name("web-", "uid-2"));
    assert_eq!(name.len(), 9);
    assert!(name[4..].bytes().all(|b| NAME_ALPHABET.contains(&b)));
    assert_eq!(generated_name(&"x".repeat(80), "u").len(), 63);
}

#[test]
fn a_bad_priority_is_a_clear_rejection() {
    let mut pod = cloneset_pod();
    pod["spec"]["containers"] = json!([
        {"name": "a", "image": "x", "env": [{"name": "KRUISE_CONTAINER_PRIORITY", "value": "high"}]},
        {"name": "b", "image": "y"}]);
    let (status, response) = answer_of(&request("CREATE", &pod));
    assert_eq!(status, 200);
    assert_eq!(response["response"]["allowed"], false);
    assert_eq!(response["response"]["status"]["code"], 400);
    let message = response["response"]["status"]["message"].as_str().unwrap();
    assert!(
        message.contains("KRUISE_CONTAINER_PRIORITY=\"high\""),
        "{message}"
    );
}

#[test]
fn a_pod_that_does_not_decode_is_rejected_with_its_uid() {
    let mut pod = cloneset_pod();
    pod["spec"]["containers"] = json!("not a list");
    let (status, response) = answer_of(&request("CREATE", &pod));
    assert_eq!(status, 200);
    assert_eq!(
        response["response"]["uid"],
        "705ab4f5-6393-11e8-b7cc-42010a800002"
    );
    assert_eq!(response["response"]["allowed"], false);
    assert!(
        response["response"]["status"]["message"]
            .as_str()
            .unwrap()
            .starts_with("decoding the pod")
    );

    let mut broken_metadata = request("CREATE", &cloneset_pod());
    broken_metadata["request"]["object"]["metadata"] = json!(42);
    let (status, response) = answer_of(&broken_metadata);
    assert_eq!(status, 200);
    assert_eq!(
        response["response"]["uid"],
        "705ab4f5-6393-11e8-b7cc-42010a800002"
    );
    assert_eq!(response["response"]["allowed"], false);

    let mut no_object = request("CREATE", &Value::Null);
    no_object["request"]
        .as_object_mut()
        .unwrap()
        .remove("object");
    let (status, response) = answer_of(&no_object);
    assert_eq!(
        (status, response["response"]["allowed"].clone()),
        (200, json!(false))
    );
}

#[test]
fn bodies_that_are_not_reviews_get_http_400() {
    let cases: [&[u8]; 6] = [
        b"",
        b"not json",
        b"[]",
        b"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}",
        b"{\"request\":{\"uid\":\"\"}}",
        b"\xff\xfe",
    ];
    for body in cases {
        let answer = review(body, &Mutator::default());
        assert_eq!(answer.http_status, 400, "{body:?}");
        let response: Value = serde_json::from_slice(&answer.body).unwrap();
        assert_eq!(response["response"]["allowed"], false);
        assert!(
            !response["response"]["status"]["message"]
                .as_str()
                .unwrap()
                .is_empty()
        );
    }
}

#[test]
fn arbitrary_bytes_never_panic() {
    // A cheap stand-in for a fuzzer: mutate a valid review byte by byte.
    let valid = serde_json::to_vec(&request("CREATE", &cloneset_pod())).unwrap();
    for index in 0..valid.len() {
        for replacement in [b'"', b'{', b'0', b'\\'] {
            let mut body = valid.clone();
            body[index] = replacement;
            let answer = review(&body, &Mutator::default());
            assert!(answer.http_status == 200 || answer.http_status == 400);
        }
    }
    for cut in 0..valid.len() {
        let _ = review(&valid[..cut], &Mutator::default());
    }
}

fn answer_with(body: &Value, mutator: &Mutator) -> Value {
    let answer = review(&serde_json::to_vec(body).unwrap(), mutator);
    assert_eq!(answer.http_status, 200);
    serde_json::from_slice(&answer.body).unwrap()
}

fn sidecar_mutator() -> Mutator {
    use crate::webhook::sidecarset_injection::tests::{log_sidecarset, stores_with};
    Mutator {
        sidecarsets: Some(stores_with(&[log_sidecarset()], json!({}))),
        ..Mutator::default()
    }
}

#[test]
fn injection_gates_and_launch_priority_compose_into_one_patch() {
    let mut pod = cloneset_pod();
    pod["metadata"]["labels"] = json!({"app": "nginx"});
    pod["metadata"]["annotations"] = json!({"apps.kruise.io/container-launch-priority": "Ordered"});
    pod["spec"]["containers"] = json!([{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]);
    let response = answer_with(&request("CREATE", &pod), &sidecar_mutator());
    assert_eq!(response["response"]["allowed"], true, "{response}");
    let patch: json_patch::Patch = serde_json::from_value(patch_of(&response)).unwrap();
    let mut patched = pod.clone();
    json_patch::patch(&mut patched, &patch).unwrap();
    let names: Vec<_> = patched["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["sidecar1", "a", "b"]);
    assert_eq!(patched["spec"]["volumes"][0]["name"], "log-volume");
    assert_eq!(
        patched["spec"]["readinessGates"].as_array().unwrap().len(),
        2
    );
    assert!(
        patched["metadata"]["annotations"]["kruise.io/sidecarset-injected-list"]
            .as_str()
            .unwrap()
            .contains("test-sidecarset")
    );
    // The same as injecting, then running the other mutations on the injected pod.
    let stores = sidecar_mutator().sidecarsets.unwrap();
    let typed: Pod = serde_json::from_value(pod.clone()).unwrap();
    let injected = stores
        .inject(&typed, "x", "2024-05-01T10:00:00Z".parse().unwrap())
        .unwrap()
        .pod;
    let mut expected = serde_json::to_value(&injected).unwrap();
    let mut later = readiness_gates::patch(&injected, &GateOptions::default());
    later.extend(launch_priority::patch(&injected, ToOwned::to_owned).unwrap());
    let later: json_patch::Patch = serde_json::from_value(Value::Array(later)).unwrap();
    json_patch::patch(&mut expected, &later).unwrap();
    // Launch priority envs land on the containers of the injected pod: sidecar1 first.
    assert_eq!(
        patched["spec"]["containers"][1]["env"],
        expected["spec"]["containers"][1]["env"]
    );
    assert_eq!(
        patched["spec"]["containers"][0]["env"],
        expected["spec"]["containers"][0]["env"]
    );
    assert!(
        patched["spec"]["containers"][2]["env"]
            .as_array()
            .unwrap()
            .iter()
            .any(|env| env["name"] == "KRUISE_CONTAINER_BARRIER")
    );
}

#[test]
fn injection_takes_the_namespace_from_the_request_and_leaves_other_pods() {
    let mut pod = cloneset_pod();
    pod["metadata"]["labels"] = json!({"app": "nginx"});
    pod["metadata"].as_object_mut().unwrap().remove("namespace");
    let response = answer_with(&request("CREATE", &pod), &sidecar_mutator());
    let ops = patch_of(&response);
    assert!(
        ops.as_array()
            .unwrap()
            .iter()
            .any(|op| op["path"] == "/spec/containers/0"),
        "{ops}"
    );
    // UPDATE is never injected; unmatched pods keep only the gates.
    let response = answer_with(&request("UPDATE", &pod), &sidecar_mutator());
    assert_eq!(response["response"]["patch"], Value::Null);
    let response = answer_with(&request("CREATE", &cloneset_pod()), &sidecar_mutator());
    assert_eq!(patch_of(&response).as_array().unwrap().len(), 1);
}

#[test]
fn an_invalid_sidecarset_selector_rejects_with_its_name() {
    use crate::webhook::sidecarset_injection::tests::{log_sidecarset, stores_with};
    let mut broken = log_sidecarset();
    broken["spec"]["selector"] =
        json!({"matchExpressions": [{"key": "app", "operator": "Bogus", "values": ["x"]}]});
    let mutator = Mutator {
        sidecarsets: Some(stores_with(&[broken], json!({}))),
        ..Mutator::default()
    };
    let mut pod = cloneset_pod();
    pod["metadata"]["labels"] = json!({"app": "nginx"});
    let response = answer_with(&request("CREATE", &pod), &mutator);
    assert_eq!(response["response"]["allowed"], false);
    let message = response["response"]["status"]["message"].as_str().unwrap();
    assert!(message.contains("test-sidecarset"), "{message}");
}

/// Before the SidecarSet stores have their first lists, a pod CREATE is not admitted without its sidecars:
/// the webhook answers with an HTTP error, so the API server applies the failure policy. Other requests are
/// answered as usual.
#[test]
fn pods_wait_for_the_sidecarset_caches() {
    let unsynced = Mutator {
        sidecarsets: Some(SidecarSetStores::empty()),
        ..Mutator::default()
    };
    let mut pod = cloneset_pod();
    pod["metadata"]["labels"] = json!({"app": "nginx"});
    let create = request("CREATE", &pod);
    let answer = review(create.to_string().as_bytes(), &unsynced);
    assert_eq!(answer.http_status, 503);
    let status: Value = serde_json::from_slice(&answer.body).unwrap();
    assert_eq!(status["reason"], "ServiceUnavailable");
    let update = request("UPDATE", &pod);
    assert_eq!(
        review(update.to_string().as_bytes(), &unsynced).http_status,
        200
    );
    assert_eq!(
        review(create.to_string().as_bytes(), &sidecar_mutator()).http_status,
        200,
        "synced stores answer"
    );
}

/// The PersistentPodState and PodUnavailableBudget caches are waited for as the SidecarSet ones: a pod
/// created before they list would miss its recorded placement or its budget annotation. The answer names
/// the caches not synced yet.
#[test]
fn pods_wait_for_the_placement_and_budget_caches() {
    use crate::unavailable_budget::BudgetStores;
    use crate::webhook::persistent_pod_state::PersistentPodStateStores;
    use kruise_runtime::Informer;
    let states = Informer::new("persistentpodstates");
    let budgets = Informer::new("podunavailablebudgets");
    let mutator = Mutator {
        sidecarsets: None,
        budgets: Some(BudgetStores::from_informer(&budgets)),
        persistent_pod_states: Some(PersistentPodStateStores::from_informer(&states)),
        ..Mutator::default()
    };
    let mut pod = cloneset_pod();
    pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps.kruise.io/v1beta1",
        "kind": "StatefulSet", "name": "web", "uid": "u", "controller": true}]);
    let create = request("CREATE", &pod);
    let answer = review(create.to_string().as_bytes(), &mutator);
    assert_eq!(answer.http_status, 503);
    let status: Value = serde_json::from_slice(&answer.body).unwrap();
    let message = status["message"].as_str().unwrap();
    assert!(
        message.contains("PodUnavailableBudget, PersistentPodState caches"),
        "{message}"
    );
    assert_eq!(
        mutator.unsynced_caches(false),
        ["PodUnavailableBudget"],
        "a pod of no StatefulSet does not wait for the PersistentPodStates"
    );
    states.apply(kube::runtime::watcher::Event::Init);
    states.apply(kube::runtime::watcher::Event::InitDone);
    assert_eq!(mutator.unsynced_caches(true), ["PodUnavailableBudget"]);
    budgets.apply(kube::runtime::watcher::Event::Init);
    budgets.apply(kube::runtime::watcher::Event::InitDone);
    assert!(mutator.unsynced_caches(true).is_empty());
    assert_eq!(
        review(create.to_string().as_bytes(), &mutator).http_status,
        200,
        "synced caches answer"
    );
}

/// The API server calls the webhook before it validates, so a pod may come without `containers`: the
/// injected containers are added as a whole list and the patch applies to the pod as sent (appending to the
/// missing list failed; found by the `untrusted_input` property tests).
#[test]
fn a_pod_without_containers_gets_a_patch_that_applies() {
    let mut pod = cloneset_pod();
    pod["metadata"]["labels"] = json!({"app": "nginx"});
    pod["spec"] = json!({});
    let response = answer_with(&request("CREATE", &pod), &sidecar_mutator());
    assert_eq!(response["response"]["allowed"], true, "{response}");
    let patch: json_patch::Patch = serde_json::from_value(patch_of(&response)).unwrap();
    let mut patched = pod.clone();
    json_patch::patch(&mut patched, &patch).unwrap();
    assert_eq!(patched["spec"]["containers"][0]["name"], "sidecar1");
}
