//! Every request to the webhook server counted by webhook and answer, under controller-runtime's names
//! (`controller_runtime_webhook_requests_total{webhook,code}`, `..._latency_seconds{webhook}`,
//! `..._requests_in_flight{webhook}`): a layer over the whole router, so each webhook (pod mutation,
//! conversion, SidecarSet, workload and budget validation, ...) is counted the same way. The `webhook`
//! label is the route's path; a request to no route counts as [`UNMATCHED`], so a client cannot make up
//! label values.

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use kruise_runtime::metrics::Metrics;

/// The `webhook` label of requests that matched no route.
pub const UNMATCHED: &str = "unmatched";

/// Counts one request: in flight while it is served, then by its HTTP status and latency. Use it with
/// `axum::middleware::from_fn_with_state(metrics, count_request)` as the router's outermost layer.
pub async fn count_request(
    State(metrics): State<Metrics>,
    request: Request,
    next: Next,
) -> Response {
    let webhook = request
        .extensions()
        .get::<MatchedPath>()
        .map_or(UNMATCHED, MatchedPath::as_str)
        .to_owned();
    let served = metrics.webhook_request(&webhook);
    let response = next.run(request).await;
    served.answered(response.status().as_u16());
    response
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::http::StatusCode;
    use axum::routing::post;
    use tower::ServiceExt;

    use super::*;

    fn router(metrics: &Metrics) -> Router {
        Router::new()
            .route("/validate-thing", post(|| async { "ok" }))
            .route(
                "/convert",
                post(|| async { (StatusCode::BAD_REQUEST, "no") }),
            )
            .layer(axum::middleware::from_fn_with_state(
                metrics.clone(),
                count_request,
            ))
    }

    async fn post_to(router: &Router, path: &str) -> StatusCode {
        let request = Request::post(path).body(Body::empty()).unwrap();
        router.clone().oneshot(request).await.unwrap().status()
    }

    #[tokio::test]
    async fn requests_are_counted_by_route_and_status() {
        let metrics = Metrics::new();
        let router = router(&metrics);
        assert_eq!(post_to(&router, "/validate-thing").await, StatusCode::OK);
        assert_eq!(post_to(&router, "/validate-thing").await, StatusCode::OK);
        assert_eq!(post_to(&router, "/convert").await, StatusCode::BAD_REQUEST);
        assert_eq!(post_to(&router, "/made-up-1").await, StatusCode::NOT_FOUND);
        assert_eq!(post_to(&router, "/made-up-2").await, StatusCode::NOT_FOUND);
        let text = metrics.encode();
        for line in [
            "controller_runtime_webhook_requests_total{webhook=\"/validate-thing\",code=\"200\"} 2",
            "controller_runtime_webhook_requests_total{webhook=\"/convert\",code=\"400\"} 1",
            "controller_runtime_webhook_requests_total{webhook=\"unmatched\",code=\"404\"} 2",
            "controller_runtime_webhook_latency_seconds_count{webhook=\"/validate-thing\"} 2",
            "controller_runtime_webhook_requests_in_flight{webhook=\"/convert\"} 0",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "{line} missing from:\n{text}"
            );
        }
        assert!(!text.contains("made-up"), "{text}");
    }
}
