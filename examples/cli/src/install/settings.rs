//! What `kruise install` renders: the validated values of its flags, with defaults equal to the
//! checked-in `examples/manifests/`.

use super::feature_gates::WebhookGates;

/// The failure policy of the webhooks (Helm value `webhookConfiguration.failurePolicy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "PascalCase")]
pub enum WebhookFailurePolicy {
    /// kube-apiserver refuses the request when the webhook cannot be reached (upstream's default).
    #[default]
    Fail,
    /// kube-apiserver lets the request through unchanged.
    Ignore,
}

impl WebhookFailurePolicy {
    /// The API value (`Fail`, `Ignore`).
    #[must_use]
    pub fn api_value(self) -> &'static str {
        match self {
            Self::Fail => "Fail",
            Self::Ignore => "Ignore",
        }
    }

    /// The value of kruise-manager's `--webhook-failure-policy` flag (`fail`, `ignore`).
    #[must_use]
    pub fn manager_flag_value(self) -> &'static str {
        match self {
            Self::Fail => "fail",
            Self::Ignore => "ignore",
        }
    }
}

/// The container resources of kruise-manager (Helm value `manager.resources`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManagerResources {
    /// `requests.cpu`.
    pub cpu_request: String,
    /// `requests.memory`.
    pub memory_request: String,
    /// `limits.memory`.
    pub memory_limit: String,
}

/// Where kruise-daemon finds the node's CRI socket (Helm value `daemon.socketLocation`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DaemonSocket {
    /// The host directory holding the socket, mounted into the daemon under `/hostvar`.
    pub location: String,
    /// The socket's file name in that directory.
    pub file_name: String,
}

impl DaemonSocket {
    /// Where the host directory appears inside the daemon's container.
    #[must_use]
    pub fn mount_path(&self) -> String {
        format!("/hostvar{}", self.location)
    }

    /// The daemon's `--cri-endpoint`.
    #[must_use]
    pub fn endpoint(&self) -> String {
        format!("unix://{}/{}", self.mount_path(), self.file_name)
    }
}

/// Every value the manifests are rendered from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstallSettings {
    /// The namespace of kruise-manager and kruise-daemon (Helm: the release namespace).
    pub namespace: String,
    /// kruise-manager's replicas (Helm `manager.replicas`).
    pub replicas: i32,
    /// kruise-manager's `--feature-gates`, as given (Helm `featureGates`); empty for none.
    pub feature_gates: String,
    /// The gates that change which webhooks are configured, read from [`Self::feature_gates`].
    pub webhook_gates: WebhookGates,
    /// kruise-manager's image (Helm `manager.image`).
    pub manager_image: String,
    /// kruise-daemon's image (Helm `daemon.image`).
    pub daemon_image: String,
    /// kruise-manager's resources.
    pub manager_resources: ManagerResources,
    /// The webhooks' failure policy.
    pub webhook_failure_policy: WebhookFailurePolicy,
    /// The daemon's CRI socket.
    pub daemon_socket: DaemonSocket,
    /// Whether the kruise-daemon DaemonSet and its RBAC are rendered.
    pub daemon: bool,
    /// Whether the RBAC of the ResourceDistribution controller is rendered.
    pub resource_distribution: bool,
    /// Whether the CustomResourceDefinitions are rendered.
    pub crds: bool,
}

/// The version of this CLI, which is the workspace's and the images' tag.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The default namespace (upstream's).
pub const DEFAULT_NAMESPACE: &str = "kruise-system";

impl Default for InstallSettings {
    fn default() -> Self {
        Self {
            namespace: DEFAULT_NAMESPACE.to_owned(),
            replicas: 2,
            feature_gates: String::new(),
            webhook_gates: WebhookGates::default(),
            manager_image: format!("ghcr.io/kruise-rs/kruise-manager:{VERSION}"),
            daemon_image: format!("ghcr.io/kruise-rs/kruise-daemon:{VERSION}"),
            manager_resources: ManagerResources {
                cpu_request: "100m".to_owned(),
                memory_request: "128Mi".to_owned(),
                memory_limit: "512Mi".to_owned(),
            },
            webhook_failure_policy: WebhookFailurePolicy::Fail,
            daemon_socket: DaemonSocket {
                location: "/run/containerd".to_owned(),
                file_name: "containerd.sock".to_owned(),
            },
            daemon: true,
            resource_distribution: false,
            crds: false,
        }
    }
}
