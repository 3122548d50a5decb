use serde_json::{Value, json};

use super::*;
use crate::webhook::configuration::ClientTarget;

fn pod(image: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "ns"},
        "spec": {"containers": [{"name": "main", "image": image}]}})
}

fn request(
    operation: &str,
    sub_resource: Option<&str>,
    object: &Value,
    old: &Value,
) -> AdmissionRequest<DynamicObject> {
    let mut request = json!({"uid": "1", "operation": operation, "name": "web-1", "namespace": "ns",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"},
        "userInfo": {}, "object": object, "oldObject": old, "dryRun": false});
    if let Some(sub_resource) = sub_resource {
        request["subResource"] = json!(sub_resource);
    }
    let body =
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request});
    parse_request(&serde_json::to_vec(&body).unwrap()).unwrap()
}

fn operation(
    request: &AdmissionRequest<DynamicObject>,
    delete_gate: bool,
    update_gate: bool,
) -> Option<String> {
    match classify(request, delete_gate, update_gate).unwrap() {
        Request::Unprotected => None,
        Request::Pod(operation, pod) => {
            assert_eq!(pod.metadata.name.as_deref(), Some("web-1"));
            Some(operation.as_str().to_owned())
        }
        Request::Eviction(namespace, name) => Some(format!("EVICT {namespace}/{name}")),
    }
}

#[test]
fn deletions_evictions_and_spec_updates_are_protected_by_their_gates() {
    let delete = request("DELETE", None, &Value::Null, &pod("nginx:1"));
    let eviction = request(
        "CREATE",
        Some("eviction"),
        &json!({"apiVersion": "policy/v1beta1", "kind": "Eviction", "metadata": {"name": "web-1", "namespace": "ns"}}),
        &Value::Null,
    );
    let image = request("UPDATE", None, &pod("nginx:2"), &pod("nginx:1"));
    let metadata_only = request("UPDATE", None, &pod("nginx:1"), &pod("nginx:1"));
    let status = request("UPDATE", Some("status"), &pod("nginx:2"), &pod("nginx:1"));
    assert_eq!(operation(&delete, true, false).as_deref(), Some("DELETE"));
    assert_eq!(operation(&delete, false, true), None);
    assert_eq!(
        operation(&eviction, true, false).as_deref(),
        Some("EVICT ns/web-1")
    );
    assert_eq!(operation(&eviction, false, false), None);
    assert_eq!(operation(&image, true, false), None);
    assert_eq!(operation(&image, false, true).as_deref(), Some("UPDATE"));
    assert_eq!(operation(&metadata_only, true, true), None);
    assert_eq!(operation(&status, true, true), None);
}

#[test]
fn a_pod_that_does_not_decode_is_named_in_the_error() {
    let broken = request(
        "DELETE",
        None,
        &Value::Null,
        &json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-1"}, "spec": {"containers": "nope"}}),
    );
    let error = classify(&broken, true, false).unwrap_err();
    assert!(error.starts_with("decoding the old pod: "), "{error}");
}

#[test]
fn the_configuration_entry_follows_the_gates() {
    let options = WebhookOptions {
        target: ClientTarget::Url("https://127.0.0.1:9443/mutate-pod".into()),
        ..WebhookOptions::default()
    };
    let webhook =
        serde_json::to_value(pod_unavailable_budget_webhook(&options, b"CA").unwrap()).unwrap();
    assert_eq!(webhook["name"], POD_UNAVAILABLE_BUDGET_WEBHOOK_NAME);
    assert_eq!(webhook["sideEffects"], "NoneOnDryRun");
    assert_eq!(
        webhook["clientConfig"]["url"],
        "https://127.0.0.1:9443/validate-pod-unavailable-budget"
    );
    assert_eq!(
        webhook["rules"],
        json!([
            {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["DELETE"], "resources": ["pods"], "scope": "Namespaced"},
            {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods/eviction"], "scope": "Namespaced"},
        ])
    );
    assert_eq!(
        webhook["namespaceSelector"]["matchExpressions"][0]["values"],
        json!(["kruise-system", "kube-system"])
    );
    let updates = WebhookOptions {
        pod_unavailable_budget_delete: false,
        pod_unavailable_budget_update: true,
        ..options.clone()
    };
    let webhook =
        serde_json::to_value(pod_unavailable_budget_webhook(&updates, b"CA").unwrap()).unwrap();
    assert_eq!(webhook["rules"][0]["operations"], json!(["UPDATE"]));
    let off = WebhookOptions {
        pod_unavailable_budget_delete: false,
        ..options
    };
    assert!(pod_unavailable_budget_webhook(&off, b"CA").is_none());
}
