//! The ContainerRecreateRequest mutating webhook over HTTP: `POST /mutate-apps-kruise-io-v1beta1-containerrecreaterequest`.
//! It reads the request's pod and the pod's node from the process's shared informers (no API call on the
//! request path, as upstream's webhook reads its cache), applies the pure decisions of
//! [`kruise_lifecycle::container_recreate::webhook`] ([`default_on_create`] or [`check_update`]), and answers
//! with the JSON patch between the request as sent and as defaulted, or a rejection naming the problem.
//! Fields the typed request does not model are kept ([`UnknownFields`]): the patch never removes them.
//! Until both informers have their first lists it answers HTTP 503, so the API server applies the failure
//! policy instead of the webhook refusing a request for a pod it has not seen yet.

use crate::webhook::review_body::ReviewBody;
use axum::Router;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::post;
use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_api::apps::v1beta1::ContainerRecreateRequest;
use kruise_api::unknown_fields::UnknownFields;
use kruise_lifecycle::container_recreate::webhook::{Rejection, check_update, default_on_create};
use kruise_runtime::{Informer, Informers};
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use kube::runtime::reflector::ObjectRef;
use serde::Deserialize;

use crate::webhook::admission::{Answer, answer};
use crate::webhook::server;

/// The path of the webhook (upstream's, for the v1beta1 resource).
pub const MUTATE_CRR_PATH: &str = "/mutate-apps-kruise-io-v1beta1-containerrecreaterequest";

/// What the webhook reads: pods and nodes.
#[derive(Clone)]
pub struct CrrStores {
    pods: Informer<Pod>,
    nodes: Informer<Node>,
}

impl CrrStores {
    /// The process's shared pod and node informers (their watches start now if nothing started them yet).
    #[must_use]
    pub fn shared(informers: &Informers) -> Self {
        Self::from_informers(informers.get(), informers.get())
    }

    /// The given informers (tests, or informers fed elsewhere).
    #[must_use]
    pub fn from_informers(pods: Informer<Pod>, nodes: Informer<Node>) -> Self {
        Self { pods, nodes }
    }

    /// Whether both informers have stored their first list.
    #[must_use]
    pub fn is_synced(&self) -> bool {
        self.pods.is_synced() && self.nodes.is_synced()
    }
}

/// The webhook route, reading pods and nodes from `stores`.
pub fn router(stores: CrrStores) -> Router {
    Router::new()
        .route(MUTATE_CRR_PATH, post(mutate))
        .with_state(stores)
}

async fn mutate(
    State(stores): State<CrrStores>,
    ReviewBody(body): ReviewBody,
) -> impl IntoResponse {
    server::respond(review(&body, &stores))
}

fn reject(request: &AdmissionRequest<DynamicObject>, rejection: &Rejection) -> AdmissionResponse {
    let mut response = AdmissionResponse::from(request).deny(rejection.message.clone());
    response.result.code = rejection.code;
    response.result.reason = if rejection.code == 403 {
        "Forbidden"
    } else {
        "BadRequest"
    }
    .to_owned();
    response
}

/// The request's object as JSON, as sent.
fn sent(object: Option<&DynamicObject>, what: &str) -> Result<serde_json::Value, Rejection> {
    let object =
        object.ok_or_else(|| Rejection::new(400, format!("the request has no {what} object")))?;
    serde_json::to_value(object)
        .map_err(|error| Rejection::new(400, format!("encoding the {what} object: {error}")))
}

fn decode(object: &serde_json::Value) -> Result<ContainerRecreateRequest, Rejection> {
    ContainerRecreateRequest::deserialize(object).map_err(|error| {
        Rejection::new(
            400,
            format!("decoding the ContainerRecreateRequest: {error}"),
        )
    })
}

/// Answers one AdmissionReview body for a ContainerRecreateRequest.
#[must_use]
pub fn review(body: &[u8], stores: &CrrStores) -> Answer {
    let parsed: AdmissionReview<DynamicObject> = match serde_json::from_slice(body) {
        Ok(review) => review,
        Err(error) => {
            let mut response =
                AdmissionResponse::invalid(format!("the body is not an AdmissionReview: {error}"));
            response.result.code = 400;
            return answer(400, &response);
        }
    };
    let request: AdmissionRequest<DynamicObject> = match parsed.try_into() {
        Ok(request) => request,
        Err(_) => {
            let mut response = AdmissionResponse::invalid("the AdmissionReview has no request");
            response.result.code = 400;
            return answer(400, &response);
        }
    };
    if matches!(request.operation, Operation::Create) && !stores.is_synced() {
        return not_synced();
    }
    let response = match respond(&request, stores) {
        Ok(response) => response,
        Err(rejection) => reject(&request, &rejection),
    };
    answer(200, &response)
}

/// The answer while the pod and node informers have not stored their first lists: an HTTP error, so the API
/// server applies the webhook's failure policy (a CRR for a pod the webhook has not seen yet is not refused
/// as if the pod did not exist).
fn not_synced() -> Answer {
    Answer {
        http_status: 503,
        body: serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 503,
            "reason": "ServiceUnavailable",
            "message": "the pod and node caches of the ContainerRecreateRequest webhook are not synced yet; retry shortly",
        })
        .to_string()
        .into_bytes(),
    }
}

fn respond(
    request: &AdmissionRequest<DynamicObject>,
    stores: &CrrStores,
) -> Result<AdmissionResponse, Rejection> {
    match request.operation {
        Operation::Create => {
            let before = sent(request.object.as_ref(), "new")?;
            let mut crr = decode(&before)?;
            let known = serde_json::to_value(&crr)
                .map_err(|error| Rejection::new(500, format!("encoding the request: {error}")))?;
            let unknown = UnknownFields::between(&before, &known);
            let namespace = request.namespace.clone().unwrap_or_default();
            let pod = if crr.spec.pod_name.is_empty() {
                None
            } else {
                stores
                    .pods
                    .get(&ObjectRef::new(&crr.spec.pod_name).within(&namespace))
            };
            let node_labels = pod
                .as_ref()
                .and_then(|pod| pod.spec.as_ref())
                .and_then(|spec| spec.node_name.as_deref())
                .filter(|name| !name.is_empty())
                .and_then(|name| stores.nodes.get(&ObjectRef::new(name)))
                .and_then(|node| node.metadata.labels.clone());
            default_on_create(&mut crr, pod.as_deref(), node_labels.as_ref())?;
            // The patch applies to the object as sent; what the types do not model stays as it is.
            let mut after = serde_json::to_value(&crr)
                .map_err(|error| Rejection::new(500, format!("encoding the request: {error}")))?;
            unknown.restore(&mut after);
            let patch = json_patch::diff(&before, &after);
            if patch.0.is_empty() {
                return Ok(AdmissionResponse::from(request));
            }
            AdmissionResponse::from(request)
                .with_patch(patch)
                .map_err(|error| Rejection::new(500, format!("encoding the patch: {error}")))
        }
        Operation::Update => {
            let old = decode(&sent(request.old_object.as_ref(), "old")?)?;
            let new = decode(&sent(request.object.as_ref(), "new")?)?;
            check_update(&old, &new)?;
            Ok(AdmissionResponse::from(request))
        }
        _ => Ok(AdmissionResponse::from(request)),
    }
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use kube::runtime::watcher::Event;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};
    use tower::ServiceExt;

    use super::*;

    fn informer<K>(name: &'static str, objects: &[Value]) -> Informer<K>
    where
        K: kube::Resource<DynamicType = ()> + Clone + DeserializeOwned + 'static,
    {
        let informer = Informer::new(name);
        informer.apply(Event::Init);
        for object in objects {
            informer.apply(Event::InitApply(
                serde_json::from_value(object.clone()).unwrap(),
            ));
        }
        informer.apply(Event::InitDone);
        informer
    }

    fn stores() -> CrrStores {
        CrrStores::from_informers(
            informer(
                "pods",
                &[json!({
                    "metadata": {"name": "web-0", "namespace": "ns", "uid": "pod-uid"},
                    "spec": {"nodeName": "node-a", "containers": [{"name": "app", "image": "nginx"}]},
                    "status": {"containerStatuses": [{"name": "app", "image": "nginx", "imageID": "",
                        "ready": true, "restartCount": 0, "containerID": "containerd://abc"}]}
                })],
            ),
            informer(
                "nodes",
                &[json!({"metadata": {"name": "node-a", "labels": {"zone": "a"}}})],
            ),
        )
    }

    fn create(object: &Value) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "r-1", "operation": "CREATE", "namespace": "ns",
                "kind": {"group": "apps.kruise.io", "version": "v1beta1", "kind": "ContainerRecreateRequest"},
                "resource": {"group": "apps.kruise.io", "version": "v1beta1",
                    "resource": "containerrecreaterequests"},
                "userInfo": {}, "object": object}
        }))
        .unwrap()
    }

    fn crr() -> Value {
        json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "ContainerRecreateRequest",
            "metadata": {"name": "r", "namespace": "ns"},
            "spec": {"podName": "web-0", "containers": [{"name": "app"}]}})
    }

    fn patch_of(answer: &Answer) -> Vec<Value> {
        assert_eq!(answer.http_status, 200);
        let review: Value = serde_json::from_slice(&answer.body).unwrap();
        assert_eq!(review["response"]["allowed"], true, "{review:#}");
        let patch = review["response"]["patch"].as_str().unwrap_or_default();
        if patch.is_empty() {
            return Vec::new();
        }
        let bytes = base64_decode(patch);
        serde_json::from_slice(&bytes).unwrap()
    }

    fn base64_decode(text: &str) -> Vec<u8> {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(text)
            .unwrap()
    }

    /// The pod comes from the informer: the defaults name its UID and node, without an API call.
    #[test]
    fn defaults_come_from_the_informers() {
        let patch = patch_of(&review(&create(&crr()), &stores()));
        let text = serde_json::to_string(&patch).unwrap();
        assert!(text.contains("pod-uid"), "{text}");
        assert!(text.contains("node-a"), "{text}");
    }

    /// Fields the types do not model are not removed by the patch (they were, as `remove` operations).
    #[test]
    fn unknown_fields_survive_the_patch() {
        let mut object = crr();
        object["spec"]["futureField"] = json!({"keep": true});
        object["spec"]["containers"][0]["futureContainerField"] = json!(1);
        let patch = patch_of(&review(&create(&object), &stores()));
        assert!(!patch.is_empty());
        let mut patched = object.clone();
        json_patch::patch(
            &mut patched,
            &serde_json::from_value::<json_patch::Patch>(Value::Array(patch.clone())).unwrap(),
        )
        .unwrap();
        assert_eq!(
            patched["spec"]["futureField"],
            json!({"keep": true}),
            "{patch:?}"
        );
        assert_eq!(
            patched["spec"]["containers"][0]["futureContainerField"], 1,
            "{patch:?}"
        );
    }

    /// Before the informers have their first lists, a CREATE gets HTTP 503 (the failure policy applies).
    #[test]
    fn creates_wait_for_the_informers() {
        let unsynced = CrrStores::from_informers(Informer::new("pods"), Informer::new("nodes"));
        assert_eq!(review(&create(&crr()), &unsynced).http_status, 503);
    }

    /// A review larger than axum's default body limit (2 MiB) reaches the handler: the route reads its body
    /// like every other webhook route. (Garbage, so the handler answers 400.)
    #[tokio::test]
    async fn bodies_over_two_mebibytes_reach_the_handler() {
        let request = axum::http::Request::post(MUTATE_CRR_PATH)
            .body(axum::body::Body::from(vec![b' '; 3 * 1024 * 1024]))
            .expect("a request");
        let response = router(stores()).oneshot(request).await.expect("an answer");
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    }
}
