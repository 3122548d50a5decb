//! `service.yaml`: the Service kube-apiserver sends the admission reviews to.

use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::deployment::{MANAGER_APP, WEBHOOK_PORT_NAME};
use super::document::Document;
use super::object_meta::{app_labels, namespaced_meta};
use super::settings::InstallSettings;

/// The name of the webhook Service (kruise-manager's `--webhook-service-name`).
pub const WEBHOOK_SERVICE: &str = "kruise-rs-webhook-service";
/// Its port (kruise-manager's `--webhook-service-port`).
pub const WEBHOOK_SERVICE_PORT: i32 = 443;

/// The Service.
///
/// # Errors
/// Rendering fails.
pub fn documents(settings: &InstallSettings) -> std::io::Result<Vec<Document>> {
    let service = Service {
        metadata: namespaced_meta(WEBHOOK_SERVICE, &settings.namespace),
        spec: Some(ServiceSpec {
            selector: Some(app_labels(MANAGER_APP)),
            ports: Some(vec![ServicePort {
                name: Some("https".to_owned()),
                port: WEBHOOK_SERVICE_PORT,
                target_port: Some(IntOrString::String(WEBHOOK_PORT_NAME.to_owned())),
                protocol: Some("TCP".to_owned()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        status: None,
    };
    Ok(vec![Document::new(
        "Where kube-apiserver sends the admission reviews.",
        &service,
    )?])
}
