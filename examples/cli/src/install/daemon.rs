//! `daemon.yaml`: kruise-daemon, one per node next to the node's container runtime, with its RBAC.

use k8s_openapi::api::apps::v1::{
    DaemonSet, DaemonSetSpec, DaemonSetUpdateStrategy, RollingUpdateDaemonSet,
};
use k8s_openapi::api::core::v1::{
    Container, HostPathVolumeSource, PodSpec, PodTemplateSpec, SecurityContext, ServiceAccount,
    Toleration, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::keys::image_pull::DAEMON_CONFIG_NAMESPACE;

use super::container_parts::{container_port, field_env, http_probe, resources};
use super::document::Document;
use super::object_meta::{app_labels, namespaced_meta};
use super::policy_rule::{rule, service_account_subject};
use super::role_grant::{cluster_role_grant, role_grant};
use super::settings::InstallSettings;

/// The name of the DaemonSet, its ServiceAccount and pods' `app.kubernetes.io/name`.
pub const DAEMON: &str = "kruise-daemon";
/// The name of its ClusterRole and ClusterRoleBinding.
pub const DAEMON_CLUSTER_ROLE: &str = "kruise-rs-daemon";
/// The Role (and binding) of the pull secrets it reads.
const PULL_SECRETS_ROLE: &str = "kruise-daemon-pull-secrets";
/// Its health and metrics port (host network).
pub const HEALTH_PORT: i32 = 10221;
/// The volume of the runtime socket's directory.
const SOCKET_VOLUME: &str = "runtime-socket";

fn container(settings: &InstallSettings) -> Container {
    let socket = &settings.daemon_socket;
    let health = || IntOrString::Int(HEALTH_PORT);
    Container {
        name: "daemon".to_owned(),
        image: Some(settings.daemon_image.clone()),
        // The image's entrypoint; named so an image holding both binaries works as well.
        command: Some(vec![DAEMON.to_owned()]),
        args: Some(vec![
            "--node-name=$(NODE_NAME)".to_owned(),
            format!("--cri-endpoint={}", socket.endpoint()),
            format!("--health-bind-address=0.0.0.0:{HEALTH_PORT}"),
            "--log-format=json".to_owned(),
        ]),
        env: Some(vec![field_env("NODE_NAME", "spec.nodeName")]),
        ports: Some(vec![container_port("health", HEALTH_PORT)]),
        readiness_probe: Some(http_probe("/readyz", health(), 5, None)),
        liveness_probe: Some(http_probe("/healthz", health(), 10, None)),
        resources: Some(resources(
            &[("cpu", "10m"), ("memory", "32Mi")],
            &[("memory", "128Mi")],
        )),
        security_context: Some(SecurityContext {
            run_as_user: Some(0),
            allow_privilege_escalation: Some(false),
            read_only_root_filesystem: Some(true),
            ..SecurityContext::default()
        }),
        volume_mounts: Some(vec![VolumeMount {
            name: SOCKET_VOLUME.to_owned(),
            mount_path: socket.mount_path(),
            ..VolumeMount::default()
        }]),
        ..Container::default()
    }
}

fn daemon_set(settings: &InstallSettings) -> DaemonSet {
    let mut metadata = namespaced_meta(DAEMON, &settings.namespace);
    metadata.labels = Some(app_labels(DAEMON));
    DaemonSet {
        metadata,
        spec: DaemonSetSpec {
            selector: LabelSelector {
                match_labels: Some(app_labels(DAEMON)),
                match_expressions: None,
            },
            update_strategy: Some(DaemonSetUpdateStrategy {
                type_: Some("RollingUpdate".to_owned()),
                rolling_update: Some(RollingUpdateDaemonSet {
                    max_unavailable: Some(IntOrString::String("10%".to_owned())),
                    max_surge: None,
                }),
            }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(app_labels(DAEMON)),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    service_account_name: Some(DAEMON.to_owned()),
                    host_network: Some(true),
                    termination_grace_period_seconds: Some(10),
                    tolerations: Some(vec![Toleration {
                        operator: Some("Exists".to_owned()),
                        ..Toleration::default()
                    }]),
                    containers: vec![container(settings)],
                    volumes: Some(vec![Volume {
                        name: SOCKET_VOLUME.to_owned(),
                        host_path: Some(HostPathVolumeSource {
                            path: settings.daemon_socket.location.clone(),
                            type_: Some("Directory".to_owned()),
                        }),
                        ..Volume::default()
                    }]),
                    ..PodSpec::default()
                }),
            },
            ..DaemonSetSpec::default()
        },
        status: None,
    }
}

/// The daemon's ServiceAccount, RBAC and DaemonSet.
///
/// # Errors
/// Rendering fails.
pub fn documents(settings: &InstallSettings) -> std::io::Result<Vec<Document>> {
    let namespace = settings.namespace.as_str();
    let subject = service_account_subject(DAEMON, namespace);
    let kruise = "apps.kruise.io";
    let mut documents = vec![Document::new(
        "kruise-daemon: one per node, next to the node's container runtime. It reads the\n\
         ContainerRecreateRequests labelled with its node and its node's NodeImage and NodePodProbe, acts\n\
         through the CRI socket, and writes their status. It reads pull Secrets only in kruise-daemon-config\n\
         (namespace.yaml), where kruise-manager copies them. It watches its node's pods and writes their\n\
         runtime-containers-meta annotation through pods/status (no other pod write).",
        &ServiceAccount {
            metadata: namespaced_meta(DAEMON, namespace),
            ..ServiceAccount::default()
        },
    )?];
    let cluster_rules = vec![
        rule(
            &[kruise],
            &["containerrecreaterequests", "nodeimages", "nodepodprobes"],
            &["get", "list", "watch"],
        ),
        rule(
            &[kruise],
            &[
                "containerrecreaterequests/status",
                "nodeimages/status",
                "nodepodprobes/status",
            ],
            &["get", "patch", "update"],
        ),
        // The container meta worker: its node's pods, their runtime-containers-meta annotation
        // (written through pods/status, as upstream), the node's kubelet version.
        rule(&[""], &["pods"], &["get", "list", "watch"]),
        rule(&[""], &["pods/status"], &["patch"]),
        rule(&[""], &["nodes"], &["get"]),
    ];
    documents.extend(cluster_role_grant(
        "",
        DAEMON_CLUSTER_ROLE,
        cluster_rules,
        &subject,
    )?);
    documents.extend(role_grant(
        "The pull secrets NodeImages reference: the copies kruise-manager keeps in kruise-daemon-config,\n\
         no others.",
        PULL_SECRETS_ROLE,
        DAEMON_CONFIG_NAMESPACE,
        vec![rule(&[""], &["secrets"], &["get"])],
        &subject,
    )?);
    documents.push(Document::new(
        "Every node, including tainted and control-plane ones (requests for their pods must be served),\n\
         on the host network. Talking to the runtime socket needs root; nothing else is written on the\n\
         host. The socket's host directory is mounted under /hostvar.",
        &daemon_set(settings),
    )?);
    Ok(documents)
}
