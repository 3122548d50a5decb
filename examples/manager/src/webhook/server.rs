//! HTTPS serving of the webhook: rustls over a TCP listener, HTTP/1.1 by hyper, routes by axum. The
//! handlers only call [`super::admission::review`] (`/mutate-pod`) and [`super::conversion::review`]
//! (`/convert`): no API calls on the request path. Every route reads its body as a
//! [`ReviewBody`] (one size limit, oversized reviews refused as reviews).

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::admission::{Answer, Mutator, review};
use super::conversion;
use super::review_body::ReviewBody;
use kruise_runtime::shutdown::Shutdown;

/// The path of the pod mutating webhook (upstream's).
pub const MUTATE_POD_PATH: &str = "/mutate-pod";

/// The path of the CRD conversion webhook.
pub const CONVERT_PATH: &str = "/convert";

/// Called after each review with the HTTP status and how long it took (for metrics).
pub type Observer = Arc<dyn Fn(u16, Duration) + Send + Sync>;

#[derive(Clone)]
struct AppState {
    mutator: Mutator,
    observer: Option<Observer>,
}

/// The webhook routes: `POST /mutate-pod` and `POST /convert`.
pub fn router(mutator: Mutator, observer: Option<Observer>) -> Router {
    Router::new()
        .route(MUTATE_POD_PATH, post(mutate_pod))
        .route(CONVERT_PATH, post(convert))
        .with_state(AppState { mutator, observer })
}

async fn mutate_pod(
    State(state): State<AppState>,
    ReviewBody(body): ReviewBody,
) -> impl IntoResponse {
    let started = Instant::now();
    let answer = review(&body, &state.mutator);
    if let Some(observer) = &state.observer {
        observer(answer.http_status, started.elapsed());
    }
    if answer.http_status != 200 {
        tracing::warn!(
            status = answer.http_status,
            "rejected a request that is not an AdmissionReview"
        );
    }
    respond(answer)
}

async fn convert(ReviewBody(body): ReviewBody) -> impl IntoResponse {
    let answer = conversion::review(&body);
    if answer.http_status != 200 {
        tracing::warn!(
            status = answer.http_status,
            "rejected a request that is not a ConversionReview"
        );
    }
    respond(answer)
}

/// The HTTP response carrying `answer` (JSON).
pub(crate) fn respond(answer: Answer) -> impl IntoResponse {
    let status =
        StatusCode::from_u16(answer.http_status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        answer.body,
    )
}

/// Serves `app` over TLS on `listener` until `shutdown`, then lets open connections finish (at most 5 s).
pub async fn serve_tls(
    listener: TcpListener,
    tls: Arc<ServerConfig>,
    app: Router,
    shutdown: Shutdown,
) {
    let acceptor = TlsAcceptor::from(tls);
    let graceful = GracefulShutdown::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = shutdown.clone().wait() => break,
        };
        let (stream, peer) = match accepted {
            Ok(connection) => connection,
            Err(error) => {
                tracing::warn!(%error, "accepting a webhook connection failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let acceptor = acceptor.clone();
        let service = TowerToHyperService::new(app.clone());
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let stream = match tokio::time::timeout(
                Duration::from_secs(10),
                acceptor.accept(stream),
            )
            .await
            {
                Ok(Ok(stream)) => stream,
                Ok(Err(error)) => {
                    tracing::debug!(%peer, %error, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "TLS handshake timed out");
                    return;
                }
            };
            let connection = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service);
            if let Err(error) = watcher.watch(connection).await {
                tracing::debug!(%peer, %error, "webhook connection ended with an error");
            }
        });
    }
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(5)) => {
            tracing::warn!("webhook connections still open after 5s; closing them");
        }
    }
}

#[cfg(test)]
mod tests {
    use tower::ServiceExt;

    use super::*;

    #[tokio::test]
    async fn the_route_answers_reviews_and_rejects_garbage() {
        let app = router(Mutator::default(), None);
        let request = axum::http::Request::post(MUTATE_POD_PATH)
            .body(axum::body::Body::from("garbage"))
            .unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");

        let request = axum::http::Request::get(MUTATE_POD_PATH)
            .body(axum::body::Body::empty())
            .unwrap();
        let response = app.oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED);
    }

    #[tokio::test]
    async fn the_convert_route_answers_conversion_reviews() {
        let app = router(Mutator::default(), None);
        let review = serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "1", "desiredAPIVersion": "apps.kruise.io/v1beta1", "objects": []}
        });
        let request = axum::http::Request::post(CONVERT_PATH)
            .body(axum::body::Body::from(review.to_string()))
            .unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        let request = axum::http::Request::post(CONVERT_PATH)
            .body(axum::body::Body::from("{}"))
            .unwrap();
        let response = app.oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    }
}
