//! The flags of kruise-manager.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::leader::LeaderTiming;
use crate::webhook::configuration::FailurePolicy;
use crate::webhook::connection_limits::ConnectionLimits;
use kruise_runtime::duration::parse_duration;
use kruise_runtime::logging::LogFormat;

/// Everything kruise-manager can be told.
#[derive(Clone, Debug, clap::Args)]
pub struct ManagerOptions {
    /// The manager's namespace (Lease, Events, certificate Secret, webhook Service); `POD_NAMESPACE` in a
    /// pod.
    #[arg(long, env = "POD_NAMESPACE", default_value = "kruise-system")]
    pub namespace: String,
    /// Create the namespace if it does not exist (handy on a fresh local control plane).
    #[arg(long)]
    pub create_namespace: bool,
    /// This instance's name in the leader election; default: `POD_NAME`, else `<hostname>_<pid>`.
    #[arg(long, env = "POD_NAME")]
    pub identity: Option<String>,
    /// Do not install or update the CRDs at start.
    #[arg(long)]
    pub no_install_crds: bool,
    /// Take part in leader election (only the leader runs controllers). `--leader-elect=false` runs them
    /// at once.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub leader_elect: bool,
    /// The name of the Lease.
    #[arg(long, default_value = "kruise-manager")]
    pub leader_election_id: String,
    /// How long a lease is valid; a standby takes over this long after the leader stops renewing.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    pub lease_duration: Duration,
    /// How long the leader tries to renew before it stops leading.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub renew_deadline: Duration,
    /// Time between election attempts.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub retry_period: Duration,
    /// Where `/healthz`, `/readyz` and `/metrics` are served (plain HTTP).
    #[arg(long, default_value = "0.0.0.0:8080")]
    pub metrics_bind_address: SocketAddr,
    /// Do not serve the pod webhook (and do not write its configuration).
    #[arg(long)]
    pub no_webhook: bool,
    /// Where the webhook is served (HTTPS).
    #[arg(long, default_value = "0.0.0.0:9876")]
    pub webhook_bind_address: SocketAddr,
    /// Send reviews to this URL (a manager outside the cluster, e.g.
    /// `https://127.0.0.1:9876/mutate-pod`) instead of the webhook Service.
    #[arg(long)]
    pub webhook_url: Option<String>,
    /// The webhook Service (in `--namespace`).
    #[arg(long, default_value = "kruise-rs-webhook-service")]
    pub webhook_service_name: String,
    /// The webhook Service's port.
    #[arg(long, default_value_t = 443)]
    pub webhook_service_port: i32,
    /// Host names (or IPs) the generated certificate is valid for (repeatable); default: the host of
    /// `--webhook-url`, or the Service's DNS names.
    #[arg(long = "webhook-host")]
    pub webhook_hosts: Vec<String>,
    /// What kube-apiserver does when the webhook cannot be reached.
    #[arg(long, value_enum, default_value_t)]
    pub webhook_failure_policy: FailurePolicy,
    /// Namespaces whose pods never reach the webhook (repeatable); default: kube-system and
    /// `--namespace`.
    #[arg(long = "webhook-excluded-namespace")]
    pub webhook_excluded_namespaces: Vec<String>,
    /// Share the generated certificate through this Secret (in `--namespace`), so every replica serves
    /// the same one. Without it, each instance generates its own.
    #[arg(long)]
    pub webhook_cert_secret: Option<String>,
    /// Serving certificate (PEM) instead of a generated one.
    #[arg(long, requires = "tls_key_file")]
    pub tls_cert_file: Option<PathBuf>,
    /// Key of `--tls-cert-file` (PEM).
    #[arg(long, requires = "tls_cert_file")]
    pub tls_key_file: Option<PathBuf>,
    /// CA bundle for the webhook configuration (PEM); default: `--tls-cert-file` itself.
    #[arg(long, requires = "tls_cert_file")]
    pub tls_ca_file: Option<PathBuf>,
    /// How often the serving certificate is checked: the `--tls-*-file`s read again, the
    /// `--webhook-cert-secret` (or the generated certificate) renewed when due. New material is served
    /// from the next TLS handshake on, and the caBundles follow.
    #[arg(long, default_value = "1m", value_parser = parse_positive_duration)]
    pub webhook_cert_check_interval: Duration,
    /// How long a webhook client may take for its TLS handshake.
    #[arg(long, default_value = "5s", value_parser = parse_positive_duration)]
    pub webhook_handshake_timeout: Duration,
    /// How long a webhook client may take to send a request's headers.
    #[arg(long, default_value = "5s", value_parser = parse_positive_duration)]
    pub webhook_header_read_timeout: Duration,
    /// How long a webhook client may take to send a request's body (after its headers).
    #[arg(long, default_value = "10s", value_parser = parse_positive_duration)]
    pub webhook_body_read_timeout: Duration,
    /// How long a kept-alive webhook connection may wait for its next request.
    #[arg(long, default_value = "60s", value_parser = parse_positive_duration)]
    pub webhook_idle_timeout: Duration,
    /// Webhook connections served at once; further ones wait until one closes.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    pub webhook_max_connections: u32,
    /// Upstream feature gates, `Name=true|false,...`. Known: `KruisePodReadinessGate` (default false:
    /// inject `KruisePodReady` into every pod, not only Kruise-owned ones), `ResourcesDeletionProtection`
    /// (default true: the `policy.kruise.io/delete-protection` label refuses deletions),
    /// `EnableSortSidecarContainerByName` and `SidecarSetPatchPodMetadataDefaultsAllowed` (default false),
    /// `PodUnavailableBudgetDeleteGate` (default true: pod deletions and evictions spend
    /// PodUnavailableBudget units), `PodUnavailableBudgetUpdateGate` (default false: so do pod updates and
    /// the in-place updates of the CloneSet and SidecarSet controllers), `WorkloadSpread` (default true:
    /// the WorkloadSpread pod webhooks and controller) and `ResourceDistributionGate` (default false: the
    /// ResourceDistribution controller and validating webhook), `PodProbeMarkerGate` (default true: the
    /// PodProbeMarker and NodePodProbe controllers and the PodProbeMarker webhook); and, as upstream's
    /// one list, the gates of the CloneSet, Advanced StatefulSet and Advanced DaemonSet controllers (see their
    /// `--<controller>-feature-gates`, whose settings win over this list's for that controller).
    #[arg(long, value_parser = parse_feature_gates, default_value = "")]
    pub feature_gates: FeatureGates,
    /// How long controllers get to stop at shutdown.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub shutdown_timeout: Duration,
    /// Log format (`--logging-format`, upstream's name, is the same flag).
    #[arg(long, visible_alias = "logging-format", value_enum, default_value_t)]
    pub log_format: LogFormat,
}

/// A duration that is not zero (`5s`, `1m`, ...).
///
/// # Errors
/// Not a duration, or zero.
pub fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    let duration = parse_duration(text).map_err(|error| error.to_string())?;
    if duration.is_zero() {
        return Err(format!("{text:?}: must be more than zero"));
    }
    Ok(duration)
}

/// The upstream feature gates of `--feature-gates`: the manager's own, typed, and every entry as given
/// ([`FeatureGates::listed`]), from which each controller takes the gates it knows
/// ([`FeatureGates::list_for`]), as upstream's one `--feature-gates` reaches every controller.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeatureGates {
    /// `KruisePodReadinessGate` (default off).
    pub kruise_pod_readiness_gate: bool,
    /// `ResourcesDeletionProtection` (default on, as upstream): the deletion protection webhook.
    pub resources_deletion_protection: bool,
    /// The SidecarSet gates (`EnableSortSidecarContainerByName`,
    /// `SidecarSetPatchPodMetadataDefaultsAllowed`), for the pod and SidecarSet webhooks.
    pub sidecarset: kruise_sidecar::Options,
    /// `PodUnavailableBudgetDeleteGate` (default on, as upstream): pod deletions and evictions go through
    /// the PodUnavailableBudget webhook.
    pub pod_unavailable_budget_delete: bool,
    /// `PodUnavailableBudgetUpdateGate` (default off, as upstream): pod updates go through the
    /// PodUnavailableBudget webhook, and the CloneSet controller spends a unit before an in-place update.
    pub pod_unavailable_budget_update: bool,
    /// `WorkloadSpread` (default on, as upstream since v1.5): the WorkloadSpread pod webhooks and controller.
    pub workload_spread: bool,
    /// `ResourceDistributionGate` (default off, as upstream since v1.5): the ResourceDistribution
    /// controller and validating webhook.
    pub resource_distribution: bool,
    /// `PodProbeMarkerGate` (default on, as upstream since v1.4): the PodProbeMarker and NodePodProbe
    /// controllers and the PodProbeMarker validating webhook.
    pub pod_probe_marker: bool,
    /// Every `Name=value` entry of the list, in order (the controllers' gates among them).
    pub listed: Vec<(String, bool)>,
}

impl Default for FeatureGates {
    fn default() -> Self {
        Self {
            kruise_pod_readiness_gate: false,
            resources_deletion_protection: true,
            sidecarset: kruise_sidecar::Options::default(),
            pod_unavailable_budget_delete: true,
            pod_unavailable_budget_update: false,
            workload_spread: true,
            resource_distribution: false,
            pod_probe_marker: true,
            listed: Vec::new(),
        }
    }
}

impl FeatureGates {
    /// The entries of the list whose gate is one of `names`, followed by `own` (a controller's own
    /// `--<controller>-feature-gates`, whose settings therefore win), as one `Name=value,...` list.
    #[must_use]
    pub fn list_for(&self, names: &[&str], own: &str) -> String {
        let mut list: Vec<String> = self
            .listed
            .iter()
            .filter(|(name, _)| names.contains(&name.as_str()))
            .map(|(name, enabled)| format!("{name}={enabled}"))
            .collect();
        if !own.trim().is_empty() {
            list.push(own.to_owned());
        }
        list.join(",")
    }
}

/// The gates the controllers read from `--feature-gates` (each also has a flag of its own).
fn controller_gate_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = crate::cloneset::gates::GATE_NAMES
        .iter()
        .chain(kruise_schedule::statefulset::Options::GATE_NAMES.iter())
        .chain(kruise_inplace::FeatureGates::NAMES.iter())
        .copied()
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The gate name of [`FeatureGates::kruise_pod_readiness_gate`].
const KRUISE_POD_READINESS_GATE: &str = "KruisePodReadinessGate";
/// The gate name of [`FeatureGates::resources_deletion_protection`].
const RESOURCES_DELETION_PROTECTION: &str = "ResourcesDeletionProtection";
/// The gate name of [`FeatureGates::pod_unavailable_budget_delete`].
const POD_UNAVAILABLE_BUDGET_DELETE_GATE: &str = "PodUnavailableBudgetDeleteGate";
/// The gate name of [`FeatureGates::pod_unavailable_budget_update`].
const POD_UNAVAILABLE_BUDGET_UPDATE_GATE: &str = "PodUnavailableBudgetUpdateGate";
/// The gate name of [`FeatureGates::workload_spread`].
const WORKLOAD_SPREAD: &str = "WorkloadSpread";
/// The gate name of [`FeatureGates::resource_distribution`].
const RESOURCE_DISTRIBUTION_GATE: &str = "ResourceDistributionGate";
/// The gate name of [`FeatureGates::pod_probe_marker`].
const POD_PROBE_MARKER_GATE: &str = "PodProbeMarkerGate";

/// Parses `Name=true|false,...` (values as Go's `strconv.ParseBool`): the manager's gates, and the
/// controllers' gates, which [`FeatureGates::list_for`] hands on.
///
/// # Errors
/// A gate no part of the manager knows, or a value that is not a boolean.
pub fn parse_feature_gates(text: &str) -> Result<FeatureGates, String> {
    let mut gates = FeatureGates::default();
    let controller_gates = controller_gate_names();
    for entry in kruise_api::feature_gate::gate_entries(text) {
        let (name, value) =
            entry.map_err(|entry| format!("feature gate {entry:?}: expected Name=true|false"))?;
        gates.listed.push((name.to_owned(), value));
        if name == KRUISE_POD_READINESS_GATE {
            gates.kruise_pod_readiness_gate = value;
        } else if name == RESOURCES_DELETION_PROTECTION {
            gates.resources_deletion_protection = value;
        } else if name == POD_UNAVAILABLE_BUDGET_DELETE_GATE {
            gates.pod_unavailable_budget_delete = value;
        } else if name == POD_UNAVAILABLE_BUDGET_UPDATE_GATE {
            gates.pod_unavailable_budget_update = value;
        } else if name == WORKLOAD_SPREAD {
            gates.workload_spread = value;
        } else if name == RESOURCE_DISTRIBUTION_GATE {
            gates.resource_distribution = value;
        } else if name == POD_PROBE_MARKER_GATE {
            gates.pod_probe_marker = value;
        } else if gates.sidecarset.set_gate(name, value).is_err()
            && !controller_gates.contains(&name)
        {
            return Err(format!(
                "unknown feature gate {name:?} (known: {KRUISE_POD_READINESS_GATE}, \
                 {RESOURCES_DELETION_PROTECTION}, {POD_UNAVAILABLE_BUDGET_DELETE_GATE}, \
                 {POD_UNAVAILABLE_BUDGET_UPDATE_GATE}, {WORKLOAD_SPREAD}, \
                 {RESOURCE_DISTRIBUTION_GATE}, {POD_PROBE_MARKER_GATE}, {}, {})",
                kruise_sidecar::Options::GATE_NAMES.join(", "),
                controller_gates.join(", ")
            ));
        }
    }
    Ok(gates)
}

impl ManagerOptions {
    /// The election timing.
    #[must_use]
    pub fn leader_timing(&self) -> LeaderTiming {
        LeaderTiming {
            lease_duration: self.lease_duration,
            renew_deadline: self.renew_deadline,
            retry_period: self.retry_period,
        }
    }

    /// The limits of the webhook server's connections.
    #[must_use]
    pub fn webhook_connection_limits(&self) -> ConnectionLimits {
        ConnectionLimits {
            handshake_timeout: self.webhook_handshake_timeout,
            header_read_timeout: self.webhook_header_read_timeout,
            body_read_timeout: self.webhook_body_read_timeout,
            idle_timeout: self.webhook_idle_timeout,
            max_connections: usize::try_from(self.webhook_max_connections).unwrap_or(usize::MAX),
        }
    }

    /// The identity in the election.
    #[must_use]
    pub fn identity(&self) -> String {
        self.identity
            .clone()
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| {
                let host = hostname::get()
                    .ok()
                    .and_then(|name| name.into_string().ok())
                    .unwrap_or_else(|| "kruise-manager".into());
                format!("{host}_{}", std::process::id())
            })
    }

    /// Namespaces excluded from the webhook.
    #[must_use]
    pub fn excluded_namespaces(&self) -> Vec<String> {
        if self.webhook_excluded_namespaces.is_empty() {
            vec!["kube-system".into(), self.namespace.clone()]
        } else {
            self.webhook_excluded_namespaces.clone()
        }
    }

    /// Host names for a generated certificate.
    #[must_use]
    pub fn webhook_hosts(&self) -> Vec<String> {
        if !self.webhook_hosts.is_empty() {
            return self.webhook_hosts.clone();
        }
        if let Some(host) = self.webhook_url.as_deref().and_then(url_host) {
            return vec![host];
        }
        let service = format!("{}.{}.svc", self.webhook_service_name, self.namespace);
        vec![service.clone(), format!("{service}.cluster.local")]
    }
}

/// The URL of the conversion webhook next to the pod webhook at `webhook_url`: the same scheme, host
/// and port, path `/convert` (`https://127.0.0.1:9876/mutate-pod` -> `https://127.0.0.1:9876/convert`).
#[must_use]
pub fn conversion_url(webhook_url: &str) -> String {
    crate::webhook::configuration::sibling_url(webhook_url, crate::webhook::server::CONVERT_PATH)
}

/// The host of an `https://host[:port]/path` URL (brackets of IPv6 literals removed).
#[must_use]
pub fn url_host(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        authority.split(':').next().unwrap_or_default()
    };
    (!host.is_empty()).then(|| host.to_owned())
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        options: ManagerOptions,
    }

    fn parse(args: &[&str]) -> ManagerOptions {
        let mut all = vec!["kruise-manager"];
        all.extend_from_slice(args);
        Cli::try_parse_from(all).unwrap().options
    }

    #[test]
    fn upstream_flag_names_are_accepted() {
        assert!(matches!(parse(&[]).log_format, LogFormat::Text));
        assert!(matches!(
            parse(&["--logging-format=json"]).log_format,
            LogFormat::Json
        ));
        assert!(matches!(
            parse(&["--log-format=json"]).log_format,
            LogFormat::Json
        ));
    }

    #[test]
    fn defaults_and_derived_values() {
        let options = parse(&["--namespace=ks", "--identity=me"]);
        assert!(options.leader_elect);
        assert_eq!(options.identity(), "me");
        assert_eq!(options.excluded_namespaces(), ["kube-system", "ks"]);
        assert_eq!(
            options.webhook_hosts(),
            [
                "kruise-rs-webhook-service.ks.svc",
                "kruise-rs-webhook-service.ks.svc.cluster.local"
            ]
        );
        assert!(options.leader_timing().validate().is_ok());
        assert_eq!(options.feature_gates, FeatureGates::default());
        assert_eq!(
            options.webhook_connection_limits(),
            ConnectionLimits::default()
        );
        assert_eq!(options.webhook_cert_check_interval, Duration::from_secs(60));
    }

    #[test]
    fn webhook_limits_from_flags() {
        let options = parse(&[
            "--webhook-handshake-timeout=1s",
            "--webhook-header-read-timeout=2s",
            "--webhook-body-read-timeout=3s",
            "--webhook-idle-timeout=4s",
            "--webhook-max-connections=7",
            "--webhook-cert-check-interval=30s",
        ]);
        assert_eq!(
            options.webhook_connection_limits(),
            ConnectionLimits {
                handshake_timeout: Duration::from_secs(1),
                header_read_timeout: Duration::from_secs(2),
                body_read_timeout: Duration::from_secs(3),
                idle_timeout: Duration::from_secs(4),
                max_connections: 7,
            }
        );
        assert_eq!(options.webhook_cert_check_interval, Duration::from_secs(30));
        let refuse = |arg: &str| {
            let error = Cli::try_parse_from(["kruise-manager", arg]).err().unwrap();
            error.to_string()
        };
        assert!(
            refuse("--webhook-idle-timeout=0s").contains("more than zero"),
            "{}",
            refuse("--webhook-idle-timeout=0s")
        );
        assert!(refuse("--webhook-max-connections=0").contains("webhook-max-connections"));
    }

    #[test]
    fn local_runs() {
        let options = parse(&[
            "--leader-elect=false",
            "--webhook-url=https://127.0.0.1:9443/mutate-pod",
            "--feature-gates=KruisePodReadinessGate=true",
            "--lease-duration=4s",
        ]);
        assert!(!options.leader_elect);
        assert_eq!(options.webhook_hosts(), ["127.0.0.1"]);
        assert!(options.feature_gates.kruise_pod_readiness_gate);
        assert_eq!(options.lease_duration, Duration::from_secs(4));
        assert!(options.identity().contains('_'));
    }

    #[test]
    fn url_hosts() {
        assert_eq!(url_host("https://[::1]:9443/x").as_deref(), Some("::1"));
        assert_eq!(
            url_host("https://user@example.com/x").as_deref(),
            Some("example.com")
        );
        assert_eq!(url_host("example.com:1").as_deref(), Some("example.com"));
        assert_eq!(url_host("https:///x"), None);
    }

    #[test]
    fn conversion_urls() {
        assert_eq!(
            conversion_url("https://127.0.0.1:9876/mutate-pod"),
            "https://127.0.0.1:9876/convert"
        );
        assert_eq!(
            conversion_url("https://[::1]:9443/a/b?x=1"),
            "https://[::1]:9443/convert"
        );
        assert_eq!(conversion_url("example.com"), "https://example.com/convert");
    }

    #[test]
    fn bad_feature_gates() {
        assert!(parse_feature_gates("Nope=true").is_err());
        assert!(parse_feature_gates("KruisePodReadinessGate").is_err());
        assert!(parse_feature_gates("KruisePodReadinessGate=yes").is_err());
        assert_eq!(parse_feature_gates(" ").unwrap(), FeatureGates::default());
    }

    #[test]
    fn one_list_holds_every_controllers_gates() {
        let gates = parse_feature_gates(
            "WorkloadSpread=false,CloneSetShortHash=true,StatefulSetStartOrdinal=true,\
             InPlaceWorkloadVerticalScaling=1,PreDownloadImageForInPlaceUpdate=true",
        )
        .unwrap();
        assert!(!gates.workload_spread, "the manager's own gates stay typed");
        assert_eq!(gates.listed.len(), 5);
        assert_eq!(
            gates.list_for(&["CloneSetShortHash", "InPlaceWorkloadVerticalScaling"], ""),
            "CloneSetShortHash=true,InPlaceWorkloadVerticalScaling=true"
        );
        assert_eq!(
            gates.list_for(
                &["StatefulSetStartOrdinal"],
                "StatefulSetStartOrdinal=false"
            ),
            "StatefulSetStartOrdinal=true,StatefulSetStartOrdinal=false",
            "the controller's own list comes last, so it wins"
        );
        assert_eq!(gates.list_for(&["NoneOfThese"], ""), "");
        let error = parse_feature_gates("CloneSetShortHash=true,Nope=true").unwrap_err();
        assert!(
            error.contains("\"Nope\"") && error.contains("CloneSetShortHash"),
            "the error names the bad gate and the known ones: {error}"
        );
    }

    #[test]
    fn deletion_protection_is_on_unless_turned_off() {
        assert!(FeatureGates::default().resources_deletion_protection);
        assert!(
            !parse_feature_gates("ResourcesDeletionProtection=false")
                .unwrap()
                .resources_deletion_protection
        );
    }

    #[test]
    fn pod_unavailable_budget_deletes_are_guarded_and_updates_not_by_default() {
        let defaults = FeatureGates::default();
        assert!(defaults.pod_unavailable_budget_delete);
        assert!(!defaults.pod_unavailable_budget_update);
        let gates = parse_feature_gates(
            "PodUnavailableBudgetDeleteGate=false,PodUnavailableBudgetUpdateGate=true",
        )
        .unwrap();
        assert!(!gates.pod_unavailable_budget_delete);
        assert!(gates.pod_unavailable_budget_update);
    }

    #[test]
    fn workload_spread_is_on_unless_turned_off() {
        assert!(FeatureGates::default().workload_spread);
        assert!(
            !parse_feature_gates("WorkloadSpread=false")
                .unwrap()
                .workload_spread
        );
    }

    #[test]
    fn resource_distribution_is_off_unless_turned_on() {
        assert!(!FeatureGates::default().resource_distribution);
        assert!(
            parse_feature_gates("ResourceDistributionGate=true")
                .unwrap()
                .resource_distribution
        );
        let error = parse_feature_gates("Nope=true").unwrap_err();
        assert!(error.contains("ResourceDistributionGate"), "{error}");
    }

    #[test]
    fn pod_probe_marker_is_on_unless_turned_off() {
        assert!(FeatureGates::default().pod_probe_marker);
        assert!(
            !parse_feature_gates("PodProbeMarkerGate=false")
                .unwrap()
                .pod_probe_marker
        );
        let error = parse_feature_gates("Nope=true").unwrap_err();
        assert!(error.contains("PodProbeMarkerGate"), "{error}");
    }

    #[test]
    fn sidecarset_gates_share_the_list() {
        let gates = parse_feature_gates(
            "KruisePodReadinessGate=true, SidecarSetPatchPodMetadataDefaultsAllowed=1",
        )
        .unwrap();
        assert!(gates.kruise_pod_readiness_gate);
        assert!(gates.sidecarset.patch_pod_metadata_defaults_allowed);
        assert!(!gates.sidecarset.sort_sidecar_containers_by_name);
        let error = parse_feature_gates("Nope=true").unwrap_err();
        assert!(
            error.contains("SidecarSetPatchPodMetadataDefaultsAllowed"),
            "{error}"
        );
    }
}
