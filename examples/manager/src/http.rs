//! The plain-HTTP endpoints of kruise-manager: `/healthz` (the process answers and has not failed: see
//! [`Liveness`]), `/readyz` (every readiness check passed: CRDs installed, webhook serving) and
//! `/metrics` (Prometheus text).
//!
//! ```
//! use kruise_manager::http::Readiness;
//!
//! let readiness = Readiness::new(&["crds", "webhook"]);
//! readiness.set("crds", true);
//! assert_eq!(readiness.failing(), ["webhook"]);
//! readiness.set("webhook", true);
//! assert!(readiness.failing().is_empty());
//! ```

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

use super::metrics::Metrics;

/// Named readiness checks; `/readyz` passes when all are true.
#[derive(Clone, Debug, Default)]
pub struct Readiness {
    checks: Arc<Mutex<BTreeMap<String, bool>>>,
}

impl Readiness {
    /// The checks `names`, all failing.
    #[must_use]
    pub fn new(names: &[&str]) -> Self {
        let checks = names
            .iter()
            .map(|name| ((*name).to_owned(), false))
            .collect();
        Self {
            checks: Arc::new(Mutex::new(checks)),
        }
    }

    /// Sets (or adds) the check `name`.
    pub fn set(&self, name: &str, ok: bool) {
        self.checks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_owned(), ok);
    }

    /// The failing checks, by name.
    #[must_use]
    pub fn failing(&self) -> Vec<String> {
        self.checks
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(_, ok)| !**ok)
            .map(|(name, _)| name.clone())
            .collect()
    }
}

/// Whether the process is still fit to run; once failed (the leader's controllers died, or it could not
/// write its webhook configuration), `/healthz` answers 500 with the reason so kubelet restarts it.
///
/// ```
/// use kruise_manager::http::Liveness;
///
/// let liveness = Liveness::default();
/// assert_eq!(liveness.failure(), None);
/// liveness.fail("controller cloneset ended while leading");
/// assert_eq!(liveness.failure().as_deref(), Some("controller cloneset ended while leading"));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Liveness {
    failure: Arc<Mutex<Option<String>>>,
}

impl Liveness {
    /// Marks the process failed, for `reason` (the first reason is kept).
    pub fn fail(&self, reason: &str) {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_or_insert_with(|| reason.to_owned());
    }

    /// Why the process failed, if it did.
    #[must_use]
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[derive(Clone)]
struct AppState {
    metrics: Metrics,
    readiness: Readiness,
    liveness: Liveness,
}

/// The routes.
pub fn router(metrics: Metrics, readiness: Readiness, liveness: Liveness) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .with_state(AppState {
            metrics,
            readiness,
            liveness,
        })
}

async fn healthz(State(state): State<AppState>) -> impl IntoResponse {
    match state.liveness.failure() {
        None => (StatusCode::OK, "ok".to_owned()),
        Some(reason) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("unhealthy: {reason}"),
        ),
    }
}

async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let failing = state.readiness.failing();
    if failing.is_empty() {
        (StatusCode::OK, "ok".to_owned())
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("not ready: {}", failing.join(", ")),
        )
    }
}

async fn metrics_text(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        state.metrics.encode(),
    )
}

#[cfg(test)]
mod tests {
    use axum::body::{Body, to_bytes};
    use tower::ServiceExt;

    use super::*;

    async fn get_text(app: &Router, path: &str) -> (StatusCode, String) {
        let request = axum::http::Request::get(path).body(Body::empty()).unwrap();
        let response = app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let body = to_bytes(response.into_body(), 1 << 20).await.unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    #[tokio::test]
    async fn endpoints_report_health_readiness_and_metrics() {
        let readiness = Readiness::new(&["crds"]);
        let metrics = Metrics::new();
        let liveness = Liveness::default();
        let app = router(metrics.clone(), readiness.clone(), liveness.clone());
        assert_eq!(
            get_text(&app, "/healthz").await,
            (StatusCode::OK, "ok".into())
        );
        assert_eq!(
            get_text(&app, "/readyz").await,
            (StatusCode::SERVICE_UNAVAILABLE, "not ready: crds".into())
        );
        readiness.set("crds", true);
        assert_eq!(get_text(&app, "/readyz").await.0, StatusCode::OK);
        metrics.set_leader(true);
        let (status, text) = get_text(&app, "/metrics").await;
        assert_eq!(status, StatusCode::OK);
        assert!(text.contains("kruise_manager_leader 1"));
        liveness.fail("controller fragile ended while leading");
        liveness.fail("a later reason");
        assert_eq!(
            get_text(&app, "/healthz").await,
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "unhealthy: controller fragile ended while leading".into()
            )
        );
    }
}
