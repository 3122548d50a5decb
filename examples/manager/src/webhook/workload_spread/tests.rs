use std::sync::{Arc, Mutex};

use axum::http::{Method, Request, Response};
use base64::Engine;
use http_body_util::BodyExt;
use kube::runtime::watcher::Event;
use serde_json::{Value, json};

use super::*;

/// An API server holding one WorkloadSpread: GET returns it, PUT of its status succeeds only with the
/// current resourceVersion (then bumps it), like the real one.
struct FakeServer {
    spread: Value,
    version: u64,
    writes: Vec<Value>,
    conflicts: usize,
}

fn client(server: &Arc<Mutex<FakeServer>>) -> Client {
    let server = Arc::clone(server);
    let service = tower::service_fn(move |request: Request<kube::client::Body>| {
        let server = Arc::clone(&server);
        async move {
            let method = request.method().clone();
            let path = request.uri().path().to_owned();
            let body = request.into_body().collect().await.unwrap().to_bytes();
            let mut server = server.lock().unwrap();
            let (code, answer) = match (method, path.ends_with("/status")) {
                (Method::GET, false) => (200, server.spread.clone()),
                (Method::PUT, true) => {
                    let sent: Value = serde_json::from_slice(&body).unwrap();
                    if sent["metadata"]["resourceVersion"].as_str()
                        == Some(server.version.to_string().as_str())
                    {
                        server.version += 1;
                        server.spread["status"] = sent["status"].clone();
                        server.spread["metadata"]["resourceVersion"] =
                            server.version.to_string().into();
                        server.writes.push(sent["status"].clone());
                        (200, server.spread.clone())
                    } else {
                        server.conflicts += 1;
                        (
                            409,
                            json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                            "reason": "Conflict", "code": 409, "message": "the object has been modified"}),
                        )
                    }
                }
                _ => (
                    404,
                    json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "reason": "NotFound", "code": 404, "message": "not found"}),
                ),
            };
            Ok::<_, std::convert::Infallible>(
                Response::builder()
                    .status(code)
                    .body(kube::client::Body::from(
                        serde_json::to_vec(&answer).unwrap(),
                    ))
                    .unwrap(),
            )
        }
    });
    Client::new(service, "ns")
}

fn spread_json(version: u64, missing_a: i32) -> Value {
    json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "WorkloadSpread",
        "metadata": {"name": "ws", "namespace": "ns", "resourceVersion": version.to_string(), "generation": 1},
        "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "subsets": [
                {"name": "a", "maxReplicas": 1,
                 "requiredNodeSelector": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}},
                {"name": "b", "requiredNodeSelector": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}}]},
        "status": {"observedGeneration": 1, "subsetStatuses": [
            {"name": "a", "replicas": 0, "missingReplicas": missing_a},
            {"name": "b", "replicas": 0, "missingReplicas": -1}]}
    })
}

/// The webhook with a store holding `stored` and a server holding `current`.
fn webhook(
    stored: &Value,
    current: Value,
    version: u64,
) -> (SpreadWebhook, Arc<Mutex<FakeServer>>) {
    let server = Arc::new(Mutex::new(FakeServer {
        spread: current,
        version,
        writes: Vec::new(),
        conflicts: 0,
    }));
    let (store, mut writer) = kube::runtime::reflector::store();
    writer.apply_watcher_event(&Event::Apply(
        serde_json::from_value(stored.clone()).unwrap(),
    ));
    (
        SpreadWebhook::from_store(client(&server), store, true),
        server,
    )
}

fn request(operation: &str, pod: &Value, dry_run: bool) -> AdmissionRequest<DynamicObject> {
    let field = if operation == "DELETE" {
        "oldObject"
    } else {
        "object"
    };
    let body = json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "req-1", "operation": operation, "name": "", "namespace": "ns", "dryRun": dry_run,
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "userInfo": {}, field: pod}
    });
    parse_request(&serde_json::to_vec(&body).unwrap()).unwrap()
}

fn cloneset_pod(name: Option<&str>) -> Value {
    let mut metadata = json!({"namespace": "ns", "generateName": "web-", "ownerReferences": [
        {"apiVersion": "apps.kruise.io/v1beta1", "kind": "CloneSet", "name": "web", "uid": "u", "controller": true}]});
    if let Some(name) = name {
        metadata["name"] = name.into();
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata,
        "spec": {"containers": [{"name": "main", "image": "nginx"}]}})
}

/// The pod after the response's patch.
fn patched(pod: &Value, response: &AdmissionResponse) -> Value {
    let encoded = serde_json::to_value(response).unwrap();
    let patch = encoded["patch"].clone();
    let bytes: Vec<u8> = match patch {
        Value::String(text) => base64::engine::general_purpose::STANDARD
            .decode(text)
            .unwrap(),
        Value::Array(items) => items
            .iter()
            .map(|b| u8::try_from(b.as_u64().unwrap()).unwrap())
            .collect(),
        _ => return pod.clone(),
    };
    let patch: json_patch::Patch = serde_json::from_slice(&bytes).unwrap();
    let mut pod = pod.clone();
    json_patch::patch(&mut pod, &patch).unwrap();
    pod
}

#[tokio::test]
async fn a_create_spends_the_first_subset_with_room_after_a_conflict() {
    // The store is one version behind: the first write conflicts, the second decides on the fresh object.
    let (webhook, server) = webhook(&spread_json(1, 1), spread_json(2, 1), 2);
    let pod = cloneset_pod(Some("web-1"));
    let response = webhook.on_create(&request("CREATE", &pod, false)).await;
    assert!(response.allowed, "{:?}", response.result);
    let after = patched(&pod, &response);
    assert_eq!(
        after["metadata"]["annotations"]["apps.kruise.io/matched-workloadspread"],
        r#"{"name":"ws","subset":"a"}"#
    );
    assert_eq!(
        after["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"][0]["matchExpressions"][0]["values"],
        json!(["a"])
    );
    let server = server.lock().unwrap();
    assert_eq!(server.conflicts, 1);
    let written = &server.writes[0]["subsetStatuses"][0];
    assert_eq!(written["missingReplicas"], 0);
    assert!(written["creatingPods"]["web-1"].is_string());
}

#[tokio::test]
async fn a_full_subset_sends_the_pod_to_the_next_and_generate_name_pods_get_an_id() {
    let (webhook, server) = webhook(&spread_json(3, 0), spread_json(3, 0), 3);
    let pod = cloneset_pod(None);
    let response = webhook.on_create(&request("CREATE", &pod, false)).await;
    let after = patched(&pod, &response);
    assert_eq!(
        after["metadata"]["annotations"]["apps.kruise.io/matched-workloadspread"],
        r#"{"name":"ws","subset":"b","uid":"req-1"}"#
    );
    let server = server.lock().unwrap();
    assert!(server.writes[0]["subsetStatuses"][1]["creatingPods"]["req-1"].is_string());
    assert_eq!(server.writes[0]["subsetStatuses"][1]["missingReplicas"], -1);
}

#[tokio::test]
async fn dry_runs_and_pods_of_other_workloads_write_nothing() {
    let (webhook, server) = webhook(&spread_json(3, 1), spread_json(3, 1), 3);
    let pod = cloneset_pod(Some("web-1"));
    let response = webhook.on_create(&request("CREATE", &pod, true)).await;
    assert!(
        patched(&pod, &response)["metadata"]["annotations"].is_object(),
        "a dry run is patched"
    );
    let mut other = cloneset_pod(Some("x-1"));
    other["metadata"]["ownerReferences"][0]["name"] = "other".into();
    let response = webhook.on_create(&request("CREATE", &other, false)).await;
    assert!(response.allowed);
    assert_eq!(patched(&other, &response), other);
    assert!(server.lock().unwrap().writes.is_empty());
}

#[tokio::test]
async fn a_delete_gives_the_replica_back() {
    let (webhook, server) = webhook(&spread_json(5, 0), spread_json(5, 0), 5);
    let mut pod = cloneset_pod(Some("web-1"));
    pod["metadata"]["annotations"] =
        json!({"apps.kruise.io/matched-workloadspread": r#"{"name":"ws","subset":"a"}"#});
    let response = webhook.on_delete(&request("DELETE", &pod, false)).await;
    assert!(response.allowed);
    let server = server.lock().unwrap();
    let written = &server.writes[0]["subsetStatuses"][0];
    assert_eq!(written["missingReplicas"], 1);
    assert!(written["deletingPods"]["web-1"].is_string());
}

#[test]
fn targets_compare_group_kind_and_name() {
    let target = TargetReference {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: "web".into(),
    };
    let workload = |api_version: &str, kind: &str, name: &str| Workload {
        api_version: api_version.into(),
        kind: kind.into(),
        name: name.into(),
    };
    assert!(targets(&target, &workload("apps/v1", "Deployment", "web")));
    assert!(!targets(
        &target,
        &workload("apps.kruise.io/v1alpha1", "Deployment", "web")
    ));
    assert!(!targets(&target, &workload("apps/v1", "ReplicaSet", "web")));
    assert!(!targets(&target, &workload("apps/v1", "Deployment", "api")));
}

#[test]
fn the_entries_follow_the_gate() {
    let options = WebhookOptions::default();
    let mutating = mutating_webhook(&options, b"CA", None).unwrap();
    assert_eq!(mutating.side_effects, "NoneOnDryRun");
    assert_eq!(
        mutating.client_config.service.unwrap().path.as_deref(),
        Some(WORKLOAD_SPREAD_MUTATING_PATH)
    );
    let validating = validating_webhook(&options, b"CA", None).unwrap();
    assert_eq!(
        validating.rules.unwrap()[0].operations,
        Some(vec!["DELETE".to_owned()])
    );
    let off = WebhookOptions {
        workload_spread: false,
        ..WebhookOptions::default()
    };
    assert!(mutating_webhook(&off, b"CA", None).is_none());
    assert!(validating_webhook(&off, b"CA", None).is_none());
}
