//! `deployment.yaml`: the kruise-manager Deployment. One replica leads (runs the controllers); all serve the
//! webhook with the certificate they share through a Secret.

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, PodSecurityContext, PodSpec, PodTemplateSpec, SecurityContext,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::container_parts::{container_port, field_env, http_probe, resources};
use super::document::Document;
use super::manager_rbac::{CERT_SECRET, MANAGER};
use super::object_meta::{app_labels, namespaced_meta};
use super::service::{WEBHOOK_SERVICE, WEBHOOK_SERVICE_PORT};
use super::settings::InstallSettings;

/// The `app.kubernetes.io/name` of kruise-manager's pods.
pub const MANAGER_APP: &str = "kruise-manager";
/// The name of the webhook's container port.
pub const WEBHOOK_PORT_NAME: &str = "webhook";
/// The name of the health and metrics port.
pub const METRICS_PORT_NAME: &str = "metrics";
/// The webhook's port.
pub const WEBHOOK_PORT: i32 = 9876;
/// The health and metrics port.
pub const METRICS_PORT: i32 = 8080;
/// The non-root user kruise-manager runs as (the image's `nonroot`).
pub const NONROOT_USER: i64 = 65532;

/// kruise-manager's arguments.
fn manager_args(settings: &InstallSettings) -> Vec<String> {
    let mut args = vec![
        "--log-format=json".to_owned(),
        "--leader-elect=true".to_owned(),
        format!("--metrics-bind-address=0.0.0.0:{METRICS_PORT}"),
        format!("--webhook-bind-address=0.0.0.0:{WEBHOOK_PORT}"),
        format!("--webhook-service-name={WEBHOOK_SERVICE}"),
        format!("--webhook-service-port={WEBHOOK_SERVICE_PORT}"),
        format!("--webhook-cert-secret={CERT_SECRET}"),
        format!(
            "--webhook-failure-policy={}",
            settings.webhook_failure_policy.manager_flag_value()
        ),
    ];
    if !settings.feature_gates.trim().is_empty() {
        args.push(format!("--feature-gates={}", settings.feature_gates.trim()));
    }
    args
}

fn container(settings: &InstallSettings) -> Container {
    let metrics = || IntOrString::String(METRICS_PORT_NAME.to_owned());
    let limits = &settings.manager_resources;
    Container {
        name: "manager".to_owned(),
        image: Some(settings.manager_image.clone()),
        args: Some(manager_args(settings)),
        env: Some(vec![
            field_env("POD_NAME", "metadata.name"),
            field_env("POD_NAMESPACE", "metadata.namespace"),
        ]),
        ports: Some(vec![
            container_port(WEBHOOK_PORT_NAME, WEBHOOK_PORT),
            container_port(METRICS_PORT_NAME, METRICS_PORT),
        ]),
        readiness_probe: Some(http_probe("/readyz", metrics(), 5, None)),
        liveness_probe: Some(http_probe("/healthz", metrics(), 20, Some(15))),
        resources: Some(resources(
            &[
                ("cpu", limits.cpu_request.as_str()),
                ("memory", limits.memory_request.as_str()),
            ],
            &[("memory", limits.memory_limit.as_str())],
        )),
        security_context: Some(SecurityContext {
            allow_privilege_escalation: Some(false),
            read_only_root_filesystem: Some(true),
            capabilities: Some(Capabilities {
                drop: Some(vec!["ALL".to_owned()]),
                add: None,
            }),
            ..SecurityContext::default()
        }),
        ..Container::default()
    }
}

/// The Deployment.
///
/// # Errors
/// Rendering fails.
pub fn documents(settings: &InstallSettings) -> std::io::Result<Vec<Document>> {
    let mut metadata = namespaced_meta(MANAGER, &settings.namespace);
    metadata.labels = Some(app_labels(MANAGER_APP));
    let deployment = Deployment {
        metadata,
        spec: DeploymentSpec {
            replicas: Some(settings.replicas),
            selector: LabelSelector {
                match_labels: Some(app_labels(MANAGER_APP)),
                match_expressions: None,
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(app_labels(MANAGER_APP)),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    service_account_name: Some(MANAGER.to_owned()),
                    termination_grace_period_seconds: Some(20),
                    security_context: Some(PodSecurityContext {
                        run_as_non_root: Some(true),
                        run_as_user: Some(NONROOT_USER),
                        ..PodSecurityContext::default()
                    }),
                    containers: vec![container(settings)],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        status: None,
    };
    Ok(vec![Document::new(
        "kruise-manager: one replica leads (runs the controllers), every replica serves the webhook with the\n\
         certificate they share through the Secret kruise-rs-webhook-certs.",
        &deployment,
    )?])
}
