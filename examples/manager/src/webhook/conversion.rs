//! The CRD conversion webhook as a pure function: `apiextensions.k8s.io/v1` ConversionReview bytes in,
//! ConversionReview bytes (and the HTTP status) out. Every object is converted with
//! [`kruise_api::convert::convert_object`] (v1alpha1 <-> v1beta1, lossless through the stash annotation).
//!
//! Answers, and why:
//! * a review with a request: HTTP 200, `result.status: Success` and the converted objects in request
//!   order; if any object cannot be converted, `result.status: Failure` with a message naming the object
//!   (its index, kind, name) and what was wrong, and no objects (kube-apiserver then fails the read or
//!   write with that message);
//! * a body that is not a ConversionReview (not JSON, no `request`, no `uid`, no `desiredAPIVersion`):
//!   HTTP 400 with a ConversionReview-shaped body saying why.
//!
//! ```
//! use kruise_manager::webhook::conversion::review;
//!
//! let body = serde_json::json!({
//!     "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
//!     "request": {"uid": "1", "desiredAPIVersion": "apps.kruise.io/v1beta1", "objects": [
//!         {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": {"name": "c"},
//!          "spec": {"selector": {}, "template": {}, "updateStrategy": {"type": "InPlaceIfPossible"}}}]}
//! });
//! let answer = review(&serde_json::to_vec(&body).unwrap());
//! assert_eq!(answer.http_status, 200);
//! let response: serde_json::Value = serde_json::from_slice(&answer.body).unwrap();
//! assert_eq!(response["response"]["result"]["status"], "Success");
//! let converted = &response["response"]["convertedObjects"][0];
//! assert_eq!(converted["apiVersion"], "apps.kruise.io/v1beta1");
//! assert_eq!(converted["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"], "InPlaceIfPossible");
//! ```

use kruise_api::convert::convert_object;
use kube::core::Status;
use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use serde_json::Value;

use super::admission::Answer;

/// Answers one ConversionReview body.
#[must_use]
pub fn review(body: &[u8]) -> Answer {
    let parsed: ConversionReview = match serde_json::from_slice(body) {
        Ok(review) => review,
        Err(error) => {
            return not_a_review(&format!("the body is not a ConversionReview: {error}"));
        }
    };
    let Ok(request) = ConversionRequest::try_from(parsed) else {
        return not_a_review("the ConversionReview has no request");
    };
    if request.uid.is_empty() {
        return not_a_review("the ConversionReview request has no uid");
    }
    if request.desired_api_version.is_empty() {
        return not_a_review("the ConversionReview request has no desiredAPIVersion");
    }
    let desired = request.desired_api_version.clone();
    let objects = request.objects.clone();
    let response = ConversionResponse::for_request(request);
    let response = match convert_all(objects, &desired) {
        Ok(converted) => response.success(converted),
        Err(message) => {
            tracing::warn!(%message, "conversion failed");
            response.failure(Status::failure(&message, "Invalid").with_code(422))
        }
    };
    answer(200, response)
}

/// Converts every object, or says which one could not be converted and why.
fn convert_all(objects: Vec<Value>, desired: &str) -> Result<Vec<Value>, String> {
    objects
        .into_iter()
        .enumerate()
        .map(|(index, object)| {
            let describe = describe(&object);
            convert_object(object, desired).map_err(|error| {
                format!("converting objects[{index}] ({describe}) to {desired}: {error}")
            })
        })
        .collect()
}

/// `Kind apiVersion namespace/name` of an object, for messages.
fn describe(object: &Value) -> String {
    let text = |pointer: &str| {
        object
            .pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned()
    };
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .map(|namespace| format!("{namespace}/"))
        .unwrap_or_default();
    format!(
        "{} {} {namespace}{}",
        text("/kind"),
        text("/apiVersion"),
        text("/metadata/name")
    )
}

fn not_a_review(message: &str) -> Answer {
    let response =
        ConversionResponse::invalid(Status::failure(message, "BadRequest").with_code(400));
    answer(400, response)
}

fn answer(http_status: u16, response: ConversionResponse) -> Answer {
    match serde_json::to_vec(&response.into_review()) {
        Ok(body) => Answer { http_status, body },
        Err(error) => Answer {
            http_status: 500,
            body: serde_json::json!({ "error": error.to_string() })
                .to_string()
                .into_bytes(),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[allow(clippy::needless_pass_by_value)] // test tables read better with owned lists
    fn request(desired: &str, objects: Vec<Value>) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "uid-7", "desiredAPIVersion": desired, "objects": objects}
        }))
        .unwrap()
    }

    fn response(answer: &Answer) -> Value {
        serde_json::from_slice(&answer.body).unwrap()
    }

    fn alpha_cloneset() -> Value {
        json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
            "metadata": {"name": "demo", "namespace": "ns", "uid": "u-1", "resourceVersion": "5",
                "generation": 2, "creationTimestamp": "2024-05-01T00:00:00Z",
                "labels": {"app": "demo"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "demo"}},
                "template": {"metadata": {"labels": {"app": "demo"}},
                    "spec": {"containers": [{"name": "main", "image": "nginx"}]}},
                "scaleStrategy": {"disablePVCReuse": true},
                "updateStrategy": {"type": "InPlaceOnly", "partition": "20%", "paused": true}},
            "status": {"replicas": 3, "readyReplicas": 2, "availableReplicas": 2, "updatedReplicas": 1,
                "updatedReadyReplicas": 1, "updateRevision": "demo-1"}
        })
    }

    #[test]
    fn converts_every_object_in_order_and_keeps_the_uid() {
        let sidecarset = json!({
            "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet",
            "metadata": {"name": "s"},
            "spec": {"namespace": "team-a", "selector": {"matchLabels": {"app": "x"}},
                "containers": [{"name": "sidecar1", "image": "busybox"}]}
        });
        let answer = review(&request(
            "apps.kruise.io/v1beta1",
            vec![alpha_cloneset(), sidecarset],
        ));
        assert_eq!(answer.http_status, 200);
        let body = response(&answer);
        assert_eq!(body["apiVersion"], "apiextensions.k8s.io/v1");
        assert_eq!(body["kind"], "ConversionReview");
        assert_eq!(body["response"]["uid"], "uid-7");
        assert_eq!(body["response"]["result"]["status"], "Success");
        let objects = body["response"]["convertedObjects"].as_array().unwrap();
        assert_eq!(objects.len(), 2);
        let cloneset = &objects[0];
        assert_eq!(cloneset["apiVersion"], "apps.kruise.io/v1beta1");
        assert_eq!(cloneset["kind"], "CloneSet");
        assert_eq!(cloneset["metadata"]["uid"], "u-1");
        assert_eq!(cloneset["metadata"]["resourceVersion"], "5");
        assert_eq!(
            cloneset["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"],
            "InPlaceOnly"
        );
        assert_eq!(
            cloneset["spec"]["updateStrategy"]["rollingUpdate"]["partition"],
            "20%"
        );
        assert_eq!(cloneset["spec"]["scaleStrategy"]["enablePVCReuse"], false);
        assert_eq!(objects[1]["kind"], "SidecarSet");
        assert_eq!(
            objects[1]["spec"]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"],
            "team-a"
        );
    }

    #[test]
    fn a_round_trip_through_the_webhook_is_lossless() {
        let original = alpha_cloneset();
        let up = response(&review(&request(
            "apps.kruise.io/v1beta1",
            vec![original.clone()],
        )));
        let beta = up["response"]["convertedObjects"][0].clone();
        let down = response(&review(&request("apps.kruise.io/v1alpha1", vec![beta])));
        let back = &down["response"]["convertedObjects"][0];
        assert_eq!(back["spec"], original["spec"]);
        assert_eq!(back["status"], original["status"]);
        assert_eq!(back["metadata"]["uid"], original["metadata"]["uid"]);
    }

    #[test]
    fn objects_already_in_the_desired_version_are_returned_as_they_are() {
        let mut object = alpha_cloneset();
        object["spec"]["unknownField"] = json!({"kept": true});
        let body = response(&review(&request(
            "apps.kruise.io/v1alpha1",
            vec![object.clone()],
        )));
        assert_eq!(body["response"]["convertedObjects"][0], object);
    }

    #[test]
    fn an_unconvertible_object_fails_the_review_with_a_message_naming_it() {
        let stranger = json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "namespace": "ns"}});
        let answer = review(&request(
            "apps.kruise.io/v1beta1",
            vec![alpha_cloneset(), stranger],
        ));
        assert_eq!(answer.http_status, 200);
        let body = response(&answer);
        assert_eq!(body["response"]["uid"], "uid-7");
        assert_eq!(body["response"]["result"]["status"], "Failure");
        let message = body["response"]["result"]["message"].as_str().unwrap();
        assert!(message.contains("objects[1]"), "{message}");
        assert!(message.contains("Widget example.com/v1 ns/w"), "{message}");
        assert!(
            body["response"]["convertedObjects"]
                .as_array()
                .is_none_or(Vec::is_empty)
        );
    }

    #[test]
    fn an_object_that_does_not_decode_names_the_field() {
        let mut object = alpha_cloneset();
        object["spec"]["replicas"] = json!("three");
        let body = response(&review(&request("apps.kruise.io/v1beta1", vec![object])));
        assert_eq!(body["response"]["result"]["status"], "Failure");
        let message = body["response"]["result"]["message"].as_str().unwrap();
        assert!(message.contains("CloneSet"), "{message}");
        assert!(message.contains("demo"), "{message}");
    }

    #[test]
    fn malformed_reviews_get_400_with_a_reason() {
        for (body, expected) in [
            (b"garbage".to_vec(), "not a ConversionReview"),
            (
                serde_json::to_vec(&json!({"apiVersion": "apiextensions.k8s.io/v1",
                    "kind": "ConversionReview"}))
                .unwrap(),
                "no request",
            ),
            (request_without_uid(), "no uid"),
            (request("", vec![]), "no desiredAPIVersion"),
            (
                serde_json::to_vec(&json!({"request": {"uid": 5}})).unwrap(),
                "not a ConversionReview",
            ),
        ] {
            let answer = review(&body);
            assert_eq!(answer.http_status, 400, "{expected}");
            let value = response(&answer);
            assert_eq!(value["response"]["result"]["status"], "Failure");
            let message = value["response"]["result"]["message"].as_str().unwrap();
            assert!(message.contains(expected), "{message} / {expected}");
        }
    }

    fn request_without_uid() -> Vec<u8> {
        serde_json::to_vec(&json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "", "desiredAPIVersion": "apps.kruise.io/v1beta1", "objects": []}
        }))
        .unwrap()
    }

    #[test]
    fn an_empty_object_list_succeeds() {
        let body = response(&review(&request("apps.kruise.io/v1beta1", vec![])));
        assert_eq!(body["response"]["result"]["status"], "Success");
    }
}
