use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::http::{Request, Response};
use serde_json::{Value, json};

use super::*;

/// A request the fake API server saw: method, path, content type, body.
type Seen = Arc<Mutex<Vec<(String, String, String, Value)>>>;

/// A client whose API server answers the requests in turn with `replies` (status, body).
fn scripted_client(replies: Vec<(u16, Value)>, seen: Seen) -> kube::Client {
    let replies = Arc::new(Mutex::new(replies.into_iter()));
    let service = tower::service_fn(move |request: Request<kube::client::Body>| {
        let (seen, replies) = (Arc::clone(&seen), Arc::clone(&replies));
        async move {
            let (parts, body) = request.into_parts();
            let body = body.collect_bytes().await.unwrap();
            let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let content_type = parts
                .headers
                .get("content-type")
                .and_then(|value| value.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            seen.lock().unwrap().push((
                parts.method.to_string(),
                parts.uri.path().to_owned(),
                content_type,
                body,
            ));
            let (status, reply) = replies.lock().unwrap().next().unwrap();
            Ok::<_, std::convert::Infallible>(
                Response::builder()
                    .status(status)
                    .body(kube::client::Body::from(
                        serde_json::to_vec(&reply).unwrap(),
                    ))
                    .unwrap(),
            )
        }
    });
    kube::Client::new(service, "default")
}

fn pod_at(resource_version: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "ns", "resourceVersion": resource_version}})
}

fn pod() -> Pod {
    serde_json::from_value(pod_at("42")).unwrap()
}

fn writes() -> Vec<PodWrite> {
    let test: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": "42"},
        {"op": "add", "path": "/status/conditions", "value": []},
    ]))
    .unwrap();
    vec![
        PodWrite {
            subresource: Some("status"),
            body: Body::Json(test),
        },
        PodWrite::metadata(json!({"metadata": {"labels": {"a": "b"}}}), None),
    ]
}

/// Sends [`writes`] to [`pod`] through an API server answering `replies`: the result, the requests
/// seen (`method path content-type`) and the expectations.
async fn send(
    replies: Vec<(u16, Value)>,
) -> (Result<Sent, ActionError>, Vec<String>, SharedExpectations) {
    let seen = Seen::default();
    let api = Api::namespaced(scripted_client(replies, Arc::clone(&seen)), "ns");
    let expectations = SharedExpectations::new(Duration::from_secs(300));
    let result = send_writes(&expectations, &api, &pod(), &writes()).await;
    let requests = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(method, path, content_type, _)| format!("{method} {path} {content_type}"))
        .collect();
    (result, requests, expectations)
}

#[tokio::test]
async fn writes_go_in_order_and_the_last_version_is_expected() {
    let (sent, requests, expectations) = send(vec![(200, pod_at("43")), (200, pod_at("44"))]).await;
    assert_eq!(
        sent.unwrap(),
        Sent {
            writes: 2,
            resource_version: Some("44".into())
        }
    );
    assert_eq!(
        requests,
        [
            "PATCH /api/v1/namespaces/ns/pods/web-0/status application/json-patch+json",
            "PATCH /api/v1/namespaces/ns/pods/web-0 application/strategic-merge-patch+json",
        ]
    );
    assert!(!expectations.version_satisfied("pod/ns/web-0", "43"));
    assert!(expectations.version_satisfied("pod/ns/web-0", "44"));
}

#[tokio::test]
async fn a_failed_test_is_a_conflict_and_stops_the_writes() {
    let invalid = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
        "reason": "Invalid", "code": 422, "message": "the test failed"});
    let (sent, requests, expectations) = send(vec![(422, invalid)]).await;
    let error = sent.unwrap_err();
    assert!(
        matches!(&error, ActionError::Conflict { object } if object == "ns/web-0"),
        "{error}"
    );
    assert_eq!(requests.len(), 1, "the second write is not sent");
    assert!(
        expectations.version_satisfied("pod/ns/web-0", "1"),
        "nothing expected"
    );
}

/// The `resourceVersion` a request body is conditional on (a JSON-patch `test` or a merge patch's
/// `metadata.resourceVersion`).
fn precondition_of(body: &Value) -> Option<String> {
    let version = match body {
        Value::Array(operations) => operations
            .iter()
            .find(|operation| operation["op"] == "test")
            .map(|operation| operation["value"].clone()),
        other => other.pointer("/metadata/resourceVersion").cloned(),
    };
    version.and_then(|version| version.as_str().map(str::to_owned))
}

#[tokio::test]
async fn a_later_action_is_conditional_on_the_version_the_earlier_one_wrote() {
    let seen = Seen::default();
    let replies = vec![
        (200, pod_at("43")),
        (200, pod_at("44")),
        (200, pod_at("45")),
    ];
    let api = Api::namespaced(scripted_client(replies, Arc::clone(&seen)), "ns");
    let expectations = SharedExpectations::new(Duration::from_secs(300));
    let second = vec![PodWrite::metadata(
        json!({"metadata": {"labels": {"c": "d"}}}),
        Some("42"),
    )];
    let outcomes = send_chained(&expectations, &api, &pod(), vec![writes(), second]).await;
    assert_eq!(outcomes.len(), 2);
    assert!(outcomes.iter().all(Result::is_ok));
    let preconditions: Vec<Option<String>> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(_, _, _, body)| precondition_of(body))
        .collect();
    assert_eq!(
        preconditions,
        [Some("42".to_owned()), None, Some("44".to_owned())],
        "the second action moves from the plan's version 42 to the 44 its first action produced"
    );
    assert!(expectations.version_satisfied("pod/ns/web-0", "45"));
}

#[tokio::test]
async fn a_failed_action_stops_the_later_ones() {
    let seen = Seen::default();
    let conflict = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
        "reason": "Conflict", "code": 409, "message": "the object has been modified"});
    let api = Api::namespaced(
        scripted_client(vec![(409, conflict)], Arc::clone(&seen)),
        "ns",
    );
    let expectations = SharedExpectations::new(Duration::from_secs(300));
    let outcomes = send_chained(&expectations, &api, &pod(), vec![writes(), writes()]).await;
    assert_eq!(outcomes.len(), 1);
    assert!(outcomes[0].is_err());
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "nothing sent after the failure"
    );
}
