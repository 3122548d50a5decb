//! HTTPS serving of the webhook: rustls over a TCP listener, HTTP/1.1 by hyper, routes by axum. The
//! handlers only call [`super::admission::review`] (`/mutate-pod`) and [`super::conversion::review`]
//! (`/convert`): no API calls on the request path. Every route reads its body as a
//! [`ReviewBody`] (one size limit, oversized reviews refused as reviews).
//!
//! Every connection is bounded by [`ConnectionLimits`]: the TLS handshake, the headers, the body and the
//! idle wait between requests each have a deadline ([`super::connection_watchdog`]), and at most
//! `max_connections` are served at once. The certificate is read from a watch channel for every handshake,
//! so a renewed or reloaded one is served without a restart.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use super::admission::{Answer, Mutator, review};
use super::connection_limits::ConnectionLimits;
use super::connection_watchdog::{self, PhaseTracker, PhaseTrackingIo};
use super::conversion;
use super::review_body::ReviewBody;
use super::tls::ServingCertificate;
use kruise_runtime::metrics::Metrics;
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

/// Serves `app` over TLS on `listener` with the certificate `tls` holds at each handshake, within
/// `limits`, until `shutdown`; then lets open connections finish (at most 5 s). `metrics` counts open
/// connections and the ones closed by a limit.
pub async fn serve_tls(
    listener: TcpListener,
    tls: watch::Receiver<ServingCertificate>,
    app: Router,
    limits: ConnectionLimits,
    metrics: Option<Metrics>,
    shutdown: Shutdown,
) {
    let graceful = GracefulShutdown::new();
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    loop {
        // At the cap the server stops accepting: further connections wait in the listen backlog and are
        // served as soon as a slot frees (the limits bound how long any connection holds one), within
        // the API server's webhook timeout. Closing them at once would fail those reviews outright: the
        // API server's client does not retry a POST that failed on a fresh connection (Go's transport
        // retries only on a kept-alive connection the server closed while idle, which the idle timeout
        // does).
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
            () = shutdown.clone().wait() => break,
        };
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
        let connection = Connection {
            peer,
            acceptor: TlsAcceptor::from(tls.borrow().config.clone()),
            app: app.clone(),
            limits,
            open: OpenConnection::new(metrics.clone(), slot),
        };
        tokio::spawn(connection.serve(stream, graceful.watcher()));
    }
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(5)) => {
            tracing::warn!("webhook connections still open after 5s; closing them");
        }
    }
}

/// One accepted connection and what serving it needs.
struct Connection {
    peer: SocketAddr,
    acceptor: TlsAcceptor,
    app: Router,
    limits: ConnectionLimits,
    open: OpenConnection,
}

impl Connection {
    async fn serve(self, stream: TcpStream, watcher: Watcher) {
        let Self {
            peer,
            acceptor,
            app,
            limits,
            open,
        } = self;
        let stream =
            match tokio::time::timeout(limits.handshake_timeout, acceptor.accept(stream)).await {
                Ok(Ok(stream)) => stream,
                Ok(Err(error)) => {
                    tracing::debug!(%peer, %error, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "TLS handshake timed out");
                    open.closed_by("handshake_timeout");
                    return;
                }
            };
        let (tracker, phases) = PhaseTracker::new();
        let io = TokioIo::new(PhaseTrackingIo::new(stream, tracker.clone()));
        let service = service_fn(move |request: hyper::Request<Incoming>| {
            tracker.request_started();
            let answer = app.clone().oneshot(request);
            let tracker = tracker.clone();
            async move {
                let response = answer.await;
                tracker.request_finished();
                Ok::<_, Infallible>(match response {
                    Ok(response) => response,
                    Err(never) => match never {},
                })
            }
        });
        // hyper's own header timeout is off: the watchdog keeps the header and idle deadlines apart.
        let connection = hyper::server::conn::http1::Builder::new()
            .header_read_timeout(None)
            .serve_connection(io, service);
        tokio::select! {
            result = watcher.watch(connection) => {
                if let Err(error) = result {
                    tracing::debug!(%peer, %error, "webhook connection ended with an error");
                }
            }
            expired = connection_watchdog::watch(phases, limits) => {
                tracing::debug!(%peer, reason = expired.reason(), "closing a webhook connection");
                open.closed_by(expired.reason());
            }
        }
    }
}

/// A served connection: holds its slot under the cap and counts in the open-connections gauge until
/// dropped.
struct OpenConnection {
    metrics: Option<Metrics>,
    _slot: OwnedSemaphorePermit,
}

impl OpenConnection {
    fn new(metrics: Option<Metrics>, slot: OwnedSemaphorePermit) -> Self {
        if let Some(metrics) = &metrics {
            metrics.count_webhook_connection(true);
        }
        Self {
            metrics,
            _slot: slot,
        }
    }

    fn closed_by(&self, reason: &str) {
        if let Some(metrics) = &self.metrics {
            metrics.observe_webhook_connection_closed(reason);
        }
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        if let Some(metrics) = &self.metrics {
            metrics.count_webhook_connection(false);
        }
    }
}

#[cfg(test)]
mod certificate_swap;
#[cfg(test)]
mod stalled_clients;
#[cfg(test)]
mod test_client;

#[cfg(test)]
mod tests {
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
