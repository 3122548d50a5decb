//! The body of a webhook request, read the same way on every route: at most [`BODY_LIMIT`] bytes. The API
//! server stores objects of up to about 1.5 MiB, and an UPDATE review carries the object twice (new and old),
//! so the limit leaves room for the largest review it can send.
//!
//! A body over the limit is not answered with a bare HTTP 413 (which the API server reports as a failed
//! webhook call, without a reason the user can act on): the answer is the review the API server expects,
//! for the request's `uid`, refused with code 413 and a message that says why. The `uid` and the review's
//! kind are read from the start of the body, where the API server writes them.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Value, json};

/// The largest review body accepted on any route.
pub const BODY_LIMIT: usize = 8 * 1024 * 1024;

/// How much of an oversized body is kept to find its `apiVersion`, `kind` and `uid`.
const HEAD_KEPT: usize = 64 * 1024;

/// A review's body (at most [`BODY_LIMIT`] bytes).
#[derive(Clone, Debug)]
pub struct ReviewBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for ReviewBody {
    type Rejection = Response;

    async fn from_request(request: Request, _state: &S) -> Result<Self, Response> {
        let mut stream = request.into_body().into_data_stream();
        let mut body: Vec<u8> = Vec::new();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|error| {
                (
                    StatusCode::BAD_REQUEST,
                    format!("reading the request body: {error}"),
                )
                    .into_response()
            })?;
            if body.len() + chunk.len() > BODY_LIMIT {
                let room = HEAD_KEPT.saturating_sub(body.len()).min(chunk.len());
                body.extend_from_slice(chunk.get(..room).unwrap_or_default());
                body.truncate(HEAD_KEPT);
                return Err(too_large(&body));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Self(Bytes::from(body)))
    }
}

/// The answer to a body over the limit, from the first bytes of that body.
fn too_large(head: &[u8]) -> Response {
    let text = String::from_utf8_lossy(head);
    let message = format!(
        "the request body is larger than the webhook's limit of {} MiB",
        BODY_LIMIT / (1024 * 1024)
    );
    let root = text.find('{');
    let api_version = root.and_then(|root| member(&text, root, "apiVersion"));
    let kind = root.and_then(|root| member(&text, root, "kind"));
    let uid = member_object(&text, "request").and_then(|request| member(&text, request, "uid"));
    let review = match (kind.as_deref(), api_version, uid) {
        (Some("AdmissionReview"), Some(api_version), Some(uid)) => json!({
            "apiVersion": api_version, "kind": "AdmissionReview",
            "response": {"uid": uid, "allowed": false,
                "status": {"code": 413, "reason": "RequestEntityTooLarge", "message": message}},
        }),
        (Some("ConversionReview"), Some(api_version), Some(uid)) => json!({
            "apiVersion": api_version, "kind": "ConversionReview",
            "response": {"uid": uid, "convertedObjects": [],
                "result": {"status": "Failure", "code": 413, "reason": "RequestEntityTooLarge",
                    "message": message}},
        }),
        _ => {
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                [(header::CONTENT_TYPE, "application/json")],
                json!({"message": message}).to_string(),
            )
                .into_response();
        }
    };
    tracing::warn!(%message, "refused an oversized review");
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        review.to_string(),
    )
        .into_response()
}

/// The string value of member `key` of the JSON object that starts at byte `object` of `text` (members of
/// nested objects and arrays do not count), as far as `text` reaches.
fn member(text: &str, object: usize, key: &str) -> Option<String> {
    let bytes = text.as_bytes();
    if bytes.get(object) != Some(&b'{') {
        return None;
    }
    let mut depth = 0usize;
    let mut index = object;
    while let Some(&byte) = bytes.get(index) {
        match byte {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return None;
                }
            }
            b'"' => {
                let end = string_end(bytes, index)?;
                if depth == 1 {
                    let name = text.get(index..=end)?;
                    let rest = text.get(end + 1..)?.trim_start();
                    if let Some(value) = rest.strip_prefix(':')
                        && serde_json::from_str::<String>(name).ok().as_deref() == Some(key)
                    {
                        let mut values = serde_json::Deserializer::from_str(value.trim_start())
                            .into_iter::<Value>();
                        return match values.next() {
                            Some(Ok(Value::String(found))) => Some(found),
                            _ => None,
                        };
                    }
                }
                index = end;
            }
            _ => {}
        }
        index += 1;
    }
    None
}

/// The index of the `"` that ends the JSON string starting at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut index = start + 1;
    while let Some(&byte) = bytes.get(index) {
        match byte {
            b'\\' => index += 2,
            b'"' => return Some(index),
            _ => index += 1,
        }
    }
    None
}

/// The byte where the object value of the root's member `key` starts.
fn member_object(text: &str, key: &str) -> Option<usize> {
    let needle = format!("\"{key}\"");
    let at = text.find(&needle)?;
    let after = at + needle.len();
    let rest = text.get(after..)?;
    let colon = rest.find(':')?;
    let value = rest.get(colon + 1..)?;
    let brace = value.find('{')?;
    value
        .get(..brace)
        .is_some_and(|gap| gap.trim().is_empty())
        .then_some(after + colon + 1 + brace)
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::routing::post;
    use proptest::strategy::Strategy as _;
    use tower::ServiceExt;

    use super::*;

    async fn echo_length(ReviewBody(body): ReviewBody) -> String {
        body.len().to_string()
    }

    async fn send(body: Vec<u8>) -> (StatusCode, String) {
        let app: Router = Router::new().route("/", post(echo_length));
        let request = axum::http::Request::post("/")
            .body(axum::body::Body::from(body))
            .unwrap();
        let response = app.oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, String::from_utf8(bytes.to_vec()).unwrap())
    }

    /// A review with its members in the order the API server writes them (Go's field order: the request's
    /// `uid` first, the objects last).
    fn review(kind: &str, api_version: &str, padding: usize) -> Vec<u8> {
        format!(
            r#"{{"kind":"{kind}","apiVersion":"{api_version}","request":{{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","kind":{{"group":"apps.kruise.io","version":"v1beta1","kind":"SidecarSet"}},"userInfo":{{"uid":"user-uid"}},"object":{{"metadata":{{"uid":"not-this-one"}},"data":"{}"}}}}}}"#,
            "x".repeat(padding)
        )
        .into_bytes()
    }

    #[test]
    fn members_are_read_at_their_own_level() {
        let text = r#"{"request": {"object": {"uid": "nested"}, "list": [{"uid": "in-array"}], "uid": "mine"}, "kind": "AdmissionReview"}"#;
        let request = member_object(text, "request").unwrap();
        assert_eq!(member(text, request, "uid").as_deref(), Some("mine"));
        assert_eq!(member(text, 0, "kind").as_deref(), Some("AdmissionReview"));
        assert_eq!(member(text, 0, "uid"), None);
        let escaped = r#"{"a": "x\"uid\": \"no\"", "uid": "yes"}"#;
        assert_eq!(member(escaped, 0, "uid").as_deref(), Some("yes"));
        assert_eq!(member(r#"{"uid": 7}"#, 0, "uid"), None);
        assert_eq!(member(r#"{"uid": "cut"#, 0, "uid"), None);
    }

    #[tokio::test]
    async fn bodies_up_to_the_limit_are_read_whole() {
        // Larger than axum's default limit of 2 MiB, which the SidecarSet and CRR routes used to get.
        let body = review("AdmissionReview", "admission.k8s.io/v1", 3 * 1024 * 1024);
        let length = body.len();
        assert_eq!(send(body).await, (StatusCode::OK, length.to_string()));
    }

    #[tokio::test]
    async fn an_oversized_admission_review_is_refused_as_a_review() {
        let (status, text) =
            send(review("AdmissionReview", "admission.k8s.io/v1", BODY_LIMIT)).await;
        assert_eq!(status, StatusCode::OK);
        let answer: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(answer["kind"], "AdmissionReview");
        assert_eq!(answer["apiVersion"], "admission.k8s.io/v1");
        assert_eq!(
            answer["response"]["uid"],
            "705ab4f5-6393-11e8-b7cc-42010a800002"
        );
        assert_eq!(answer["response"]["allowed"], false);
        assert_eq!(answer["response"]["status"]["code"], 413);
        assert!(
            answer["response"]["status"]["message"]
                .as_str()
                .unwrap()
                .contains("8 MiB"),
            "{answer}"
        );
    }

    #[tokio::test]
    async fn an_oversized_conversion_review_fails_as_a_review() {
        let (status, text) = send(review(
            "ConversionReview",
            "apiextensions.k8s.io/v1",
            BODY_LIMIT,
        ))
        .await;
        assert_eq!(status, StatusCode::OK);
        let answer: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(answer["response"]["result"]["status"], "Failure");
        assert_eq!(answer["response"]["result"]["code"], 413);
        assert_eq!(
            answer["response"]["uid"],
            "705ab4f5-6393-11e8-b7cc-42010a800002"
        );
    }

    #[tokio::test]
    async fn an_oversized_body_that_is_no_review_gets_a_plain_413() {
        let (status, _) = send(vec![b'x'; BODY_LIMIT + 1]).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    }

    proptest::proptest! {
        #![proptest_config(kruise_fuzz_inputs::fuzz_cases::config())]

        /// The head of an oversized body is whatever the client sent, cut anywhere: reading it never panics,
        /// and the answer is a review (HTTP 200) or a plain 413.
        #[test]
        fn any_head_is_answered(
            head in proptest::prop_oneof![
                proptest::sample::select(&[("AdmissionReview", "admission.k8s.io/v1"),
                    ("ConversionReview", "apiextensions.k8s.io/v1")][..])
                    .prop_flat_map(|(kind, api_version)| {
                        let text = String::from_utf8(review(kind, api_version, 8)).unwrap();
                        kruise_fuzz_inputs::text_edits::edited(text)
                    })
                    .prop_map(String::into_bytes),
                proptest::collection::vec(proptest::arbitrary::any::<u8>(), 0..200),
            ],
            at in proptest::arbitrary::any::<proptest::sample::Index>(),
        ) {
            let text = String::from_utf8_lossy(&head);
            for key in ["apiVersion", "kind", "uid"] {
                let _ = member(&text, at.index(text.len() + 1), key);
                let _ = member(&text, 0, key);
            }
            let _ = member_object(&text, "request");
            let status = too_large(&head).status();
            proptest::prop_assert!(status == StatusCode::OK || status == StatusCode::PAYLOAD_TOO_LARGE);
        }
    }
}
