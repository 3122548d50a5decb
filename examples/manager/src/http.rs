//! The plain-HTTP endpoints of kruise-manager: `/healthz` (the process answers), `/readyz` (every
//! readiness check passed: CRDs installed, webhook serving) and `/metrics` (Prometheus text).
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

#[derive(Clone)]
struct AppState {
    metrics: Metrics,
    readiness: Readiness,
}

/// The routes.
pub fn router(metrics: Metrics, readiness: Readiness) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .with_state(AppState { metrics, readiness })
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
        let app = router(metrics.clone(), readiness.clone());
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
    }
}
