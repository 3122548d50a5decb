//! A client for the unit tests of the workload controllers: its API server answers 404 to everything, so
//! a test can build a controller's state without a cluster (nothing in it calls the server).

use axum::http::{Request, Response};
use kube::Client;

/// A client whose API server answers 404 to everything.
pub fn offline_client() -> Client {
    let service = tower::service_fn(|_: Request<kube::client::Body>| async {
        Ok::<_, std::convert::Infallible>(
            Response::builder()
                .status(404)
                .body(kube::client::Body::empty())
                .unwrap(),
        )
    });
    Client::new(service, "default")
}
