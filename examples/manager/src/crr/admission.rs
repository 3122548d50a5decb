//! The ContainerRecreateRequest mutating webhook over HTTP: `POST /mutate-apps-kruise-io-v1beta1-containerrecreaterequest`.
//! It reads the request's pod and the pod's node (the only API calls on this path, as upstream's webhook
//! reads them from its cache), applies the pure decisions of
//! [`kruise_lifecycle::container_recreate::webhook`] ([`default_on_create`] or [`check_update`]), and answers
//! with the JSON patch between the request as sent and as defaulted, or a rejection naming the problem.

use crate::webhook::review_body::ReviewBody;
use axum::Router;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::post;
use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_api::apps::v1beta1::ContainerRecreateRequest;
use kruise_lifecycle::container_recreate::webhook::{Rejection, check_update, default_on_create};
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use kube::{Api, Client};

use crate::webhook::admission::{Answer, answer};
use crate::webhook::server;

/// The path of the webhook (upstream's, for the v1beta1 resource).
pub const MUTATE_CRR_PATH: &str = "/mutate-apps-kruise-io-v1beta1-containerrecreaterequest";

/// The webhook route, reading pods and nodes with `client`.
pub fn router(client: Client) -> Router {
    Router::new()
        .route(MUTATE_CRR_PATH, post(mutate))
        .with_state(client)
}

async fn mutate(State(client): State<Client>, ReviewBody(body): ReviewBody) -> impl IntoResponse {
    server::respond(review(&body, &client).await)
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

fn decode(
    object: Option<&DynamicObject>,
    what: &str,
) -> Result<ContainerRecreateRequest, Rejection> {
    let object =
        object.ok_or_else(|| Rejection::new(400, format!("the request has no {what} object")))?;
    serde_json::to_value(object)
        .and_then(serde_json::from_value)
        .map_err(|error| {
            Rejection::new(
                400,
                format!("decoding the ContainerRecreateRequest: {error}"),
            )
        })
}

/// Answers one AdmissionReview body for a ContainerRecreateRequest.
pub async fn review(body: &[u8], client: &Client) -> Answer {
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
    let response = match respond(&request, client).await {
        Ok(response) => response,
        Err(rejection) => reject(&request, &rejection),
    };
    answer(200, &response)
}

async fn respond(
    request: &AdmissionRequest<DynamicObject>,
    client: &Client,
) -> Result<AdmissionResponse, Rejection> {
    match request.operation {
        Operation::Create => {
            let mut crr = decode(request.object.as_ref(), "new")?;
            let namespace = request.namespace.clone().unwrap_or_default();
            let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace);
            let pod = if crr.spec.pod_name.is_empty() {
                None
            } else {
                pods.get_opt(&crr.spec.pod_name).await.map_err(|error| {
                    Rejection::new(
                        500,
                        format!("reading pod {namespace}/{}: {error}", crr.spec.pod_name),
                    )
                })?
            };
            let node_name = pod
                .as_ref()
                .and_then(|pod| pod.spec.as_ref())
                .and_then(|spec| spec.node_name.clone())
                .unwrap_or_default();
            let node_labels = if node_name.is_empty() {
                None
            } else {
                let nodes: Api<Node> = Api::all(client.clone());
                nodes
                    .get_opt(&node_name)
                    .await
                    .ok()
                    .flatten()
                    .and_then(|node| node.metadata.labels)
            };
            default_on_create(&mut crr, pod.as_ref(), node_labels.as_ref())?;
            // The patch applies to the object as sent.
            let before = request
                .object
                .as_ref()
                .and_then(|object| serde_json::to_value(object).ok())
                .unwrap_or_default();
            let after = serde_json::to_value(&crr).unwrap_or_default();
            let patch = json_patch::diff(&before, &after);
            if patch.0.is_empty() {
                return Ok(AdmissionResponse::from(request));
            }
            AdmissionResponse::from(request)
                .with_patch(patch)
                .map_err(|error| Rejection::new(500, format!("encoding the patch: {error}")))
        }
        Operation::Update => {
            let old = decode(request.old_object.as_ref(), "old")?;
            let new = decode(request.object.as_ref(), "new")?;
            check_update(&old, &new)?;
            Ok(AdmissionResponse::from(request))
        }
        _ => Ok(AdmissionResponse::from(request)),
    }
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use tower::ServiceExt;

    use super::*;

    /// A review larger than axum's default body limit (2 MiB) reaches the handler: the route reads its body
    /// like every other webhook route. (Garbage, so the handler answers 400 without calling the API server.)
    #[tokio::test]
    async fn bodies_over_two_mebibytes_reach_the_handler() {
        let client = Client::try_from(kube::Config::new(
            "http://127.0.0.1:9".parse().expect("a valid URL"),
        ))
        .expect("a client needs no connection");
        let request = axum::http::Request::post(MUTATE_CRR_PATH)
            .body(axum::body::Body::from(vec![b' '; 3 * 1024 * 1024]))
            .expect("a request");
        let response = router(client).oneshot(request).await.expect("an answer");
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    }
}
