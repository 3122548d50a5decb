//! The MutatingWebhookConfiguration that routes pod creations (and ContainerRecreateRequests and the
//! workloads of [`super::workload_configuration`]) to the webhook, built as a value (pure; written by [`super::registration`]), caBundle included.
//!
//! Namespace exclusions use the `kubernetes.io/metadata.name` label (set on every namespace by Kubernetes
//! 1.21+). A v1.20 server does not set it, so [`label_excluded_namespaces`] adds it to the excluded
//! namespaces that lack it (the same value newer servers would set).
//!
//! ```
//! use kruise_manager::webhook::configuration::{ClientTarget, WebhookOptions, mutating_webhook_configuration};
//!
//! let options = WebhookOptions {
//!     target: ClientTarget::Url("https://127.0.0.1:9443/mutate-pod".into()),
//!     ..WebhookOptions::default()
//! };
//! let config = mutating_webhook_configuration(&options, b"PEM");
//! let webhook = &config.webhooks.unwrap()[0];
//! assert_eq!(webhook.failure_policy.as_deref(), Some("Fail"));
//! assert_eq!(webhook.client_config.url.as_deref(), Some("https://127.0.0.1:9443/mutate-pod"));
//! ```

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ServiceReference,
    WebhookClientConfig,
};
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use kruise_api::keys::kubernetes::NAMESPACE_NAME_LABEL;
use kube::api::{ObjectMeta, Patch, PatchParams};
use kube::{Api, Client};

use super::server::MUTATE_POD_PATH;

/// The name of the MutatingWebhookConfiguration kruise-manager writes.
pub const CONFIGURATION_NAME: &str = "kruise-rs-mutating-webhook-configuration";
/// The name of the pod webhook inside it (upstream's).
pub const POD_WEBHOOK_NAME: &str = "mpod.kb.io";
/// The name of the ContainerRecreateRequest webhook inside it (upstream's).
pub const CRR_WEBHOOK_NAME: &str = "mcontainerrecreaterequest.kb.io";
/// The field manager of everything kruise-manager applies.
pub const FIELD_MANAGER: &str = "kruise-manager";

/// What kube-apiserver does when the webhook cannot be called.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum FailurePolicy {
    /// Reject the request (upstream's choice).
    #[default]
    Fail,
    /// Let the request through unmutated.
    Ignore,
}

impl FailurePolicy {
    /// The API value.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fail => "Fail",
            Self::Ignore => "Ignore",
        }
    }
}

/// Where kube-apiserver sends the reviews.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientTarget {
    /// A URL (`https://127.0.0.1:<port>/mutate-pod` for a manager running outside the cluster).
    Url(String),
    /// A Service in the cluster.
    Service {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Its port.
        port: i32,
    },
}

/// The settings of the webhook configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookOptions {
    /// Where reviews go.
    pub target: ClientTarget,
    /// Failure policy.
    pub failure_policy: FailurePolicy,
    /// Namespaces whose pods are never sent (at least kube-system and the manager's own).
    pub excluded_namespaces: Vec<String>,
    /// How long kube-apiserver waits for an answer.
    pub timeout_seconds: i32,
    /// Whether the deletion protection webhook is configured (gate `ResourcesDeletionProtection`).
    pub deletion_protection: bool,
    /// Whether pod deletions and evictions go to the PodUnavailableBudget webhook (gate
    /// `PodUnavailableBudgetDeleteGate`).
    pub pod_unavailable_budget_delete: bool,
    /// Whether pod updates go to the PodUnavailableBudget webhook (gate `PodUnavailableBudgetUpdateGate`).
    pub pod_unavailable_budget_update: bool,
    /// Whether the WorkloadSpread pod webhooks are configured (gate `WorkloadSpread`).
    pub workload_spread: bool,
    /// Whether the ResourceDistribution validating webhook is configured (gate `ResourceDistributionGate`).
    pub resource_distribution: bool,
    /// Whether the PodProbeMarker validating webhook is configured (gate `PodProbeMarkerGate`).
    pub pod_probe_marker: bool,
}

impl Default for WebhookOptions {
    fn default() -> Self {
        Self {
            target: ClientTarget::Service {
                namespace: "kruise-system".into(),
                name: "kruise-rs-webhook-service".into(),
                port: 443,
            },
            failure_policy: FailurePolicy::Fail,
            excluded_namespaces: vec!["kube-system".into(), "kruise-system".into()],
            timeout_seconds: 10,
            deletion_protection: true,
            pod_unavailable_budget_delete: true,
            pod_unavailable_budget_update: false,
            workload_spread: true,
            resource_distribution: false,
            pod_probe_marker: true,
        }
    }
}

/// The configuration object, with `ca_bundle` (PEM) as the trusted CA.
#[must_use]
pub fn mutating_webhook_configuration(
    options: &WebhookOptions,
    ca_bundle: &[u8],
) -> MutatingWebhookConfiguration {
    let client_config = client_config(&options.target, ca_bundle, MUTATE_POD_PATH);
    let namespace_selector = excluded_namespace_selector(options);
    let workload_spread_webhook =
        super::workload_spread::mutating_webhook(options, ca_bundle, namespace_selector.clone());
    let crr_webhook = crr_webhook(options, ca_bundle, namespace_selector.clone());
    MutatingWebhookConfiguration {
        metadata: ObjectMeta {
            name: Some(CONFIGURATION_NAME.to_owned()),
            labels: Some(BTreeMap::from([(
                "app.kubernetes.io/managed-by".to_owned(),
                FIELD_MANAGER.to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        webhooks: Some(
            vec![
                MutatingWebhook {
                    name: POD_WEBHOOK_NAME.to_owned(),
                    admission_review_versions: vec!["v1".to_owned(), "v1beta1".to_owned()],
                    client_config,
                    failure_policy: Some(options.failure_policy.as_str().to_owned()),
                    match_policy: Some("Equivalent".to_owned()),
                    namespace_selector,
                    object_selector: Some(LabelSelector::default()),
                    reinvocation_policy: Some("Never".to_owned()),
                    rules: Some(vec![RuleWithOperations {
                        api_groups: Some(vec![String::new()]),
                        api_versions: Some(vec!["v1".to_owned()]),
                        operations: Some(vec!["CREATE".to_owned()]),
                        resources: Some(vec!["pods".to_owned()]),
                        scope: Some("Namespaced".to_owned()),
                    }]),
                    side_effects: "None".to_owned(),
                    timeout_seconds: Some(options.timeout_seconds),
                    match_conditions: None,
                },
                crr_webhook,
            ]
            .into_iter()
            .chain(super::workload_configuration::mutating_webhooks(
                options, ca_bundle,
            ))
            .chain(workload_spread_webhook)
            .collect(),
        ),
    }
}

/// The namespace selector of the pod webhooks: every namespace but the excluded ones (`None` when none is).
#[must_use]
pub fn excluded_namespace_selector(options: &WebhookOptions) -> Option<LabelSelector> {
    let mut excluded = options.excluded_namespaces.clone();
    excluded.sort();
    excluded.dedup();
    (!excluded.is_empty()).then(|| LabelSelector {
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: NAMESPACE_NAME_LABEL.to_owned(),
            operator: "NotIn".to_owned(),
            values: Some(excluded),
        }]),
        match_labels: None,
    })
}

/// The ContainerRecreateRequest webhook: creations and updates of v1beta1 requests (v1alpha1 ones reach it
/// converted, `matchPolicy: Equivalent`), at [`crate::crr::admission::MUTATE_CRR_PATH`] next to the pod
/// webhook.
fn crr_webhook(
    options: &WebhookOptions,
    ca_bundle: &[u8],
    namespace_selector: Option<LabelSelector>,
) -> MutatingWebhook {
    let client_config = client_config(
        &options.target,
        ca_bundle,
        crate::crr::admission::MUTATE_CRR_PATH,
    );
    MutatingWebhook {
        name: CRR_WEBHOOK_NAME.to_owned(),
        admission_review_versions: vec!["v1".to_owned(), "v1beta1".to_owned()],
        client_config,
        failure_policy: Some(options.failure_policy.as_str().to_owned()),
        match_policy: Some("Equivalent".to_owned()),
        namespace_selector,
        object_selector: Some(LabelSelector::default()),
        reinvocation_policy: Some("Never".to_owned()),
        rules: Some(vec![RuleWithOperations {
            api_groups: Some(vec!["apps.kruise.io".to_owned()]),
            api_versions: Some(vec!["v1beta1".to_owned()]),
            operations: Some(vec!["CREATE".to_owned(), "UPDATE".to_owned()]),
            resources: Some(vec!["containerrecreaterequests".to_owned()]),
            scope: Some("Namespaced".to_owned()),
        }]),
        side_effects: "None".to_owned(),
        timeout_seconds: Some(options.timeout_seconds),
        match_conditions: None,
    }
}

/// How kube-apiserver reaches the webhook at `path`: the target's URL with its path replaced, or the
/// Service with `path`; `ca_bundle` (PEM) is the trusted CA.
#[must_use]
pub fn client_config(target: &ClientTarget, ca_bundle: &[u8], path: &str) -> WebhookClientConfig {
    match target {
        ClientTarget::Url(url) => WebhookClientConfig {
            url: Some(sibling_url(url, path)),
            ca_bundle: Some(ByteString(ca_bundle.to_vec())),
            service: None,
        },
        ClientTarget::Service {
            namespace,
            name,
            port,
        } => WebhookClientConfig {
            url: None,
            ca_bundle: Some(ByteString(ca_bundle.to_vec())),
            service: Some(ServiceReference {
                namespace: namespace.clone(),
                name: name.clone(),
                path: Some(path.to_owned()),
                port: Some(*port),
            }),
        },
    }
}

/// `url` with its path (query and fragment) replaced by `path`, the scheme `https` when it has none:
/// every webhook of the manager is served next to the pod webhook at `--webhook-url`
/// (`https://127.0.0.1:9876/mutate-pod` -> `https://127.0.0.1:9876<path>`).
#[must_use]
pub fn sibling_url(url: &str, path: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    format!("{scheme}://{authority}{path}")
}

/// Gives excluded namespaces that exist but lack it the `kubernetes.io/metadata.name` label (Kubernetes
/// 1.21+ sets it itself), so the namespace selector excludes them on a v1.20 server too. Failures are
/// logged, not returned: the webhook still works, only the exclusion is missing.
pub async fn label_excluded_namespaces(client: &Client, namespaces: &[String]) {
    let api: Api<Namespace> = Api::all(client.clone());
    for name in namespaces {
        let namespace = match api.get_opt(name).await {
            Ok(Some(namespace)) => namespace,
            Ok(None) => continue,
            Err(error) => {
                tracing::warn!(namespace = %name, %error, "cannot read an excluded namespace");
                continue;
            }
        };
        let labelled = namespace
            .metadata
            .labels
            .as_ref()
            .and_then(|labels| labels.get(NAMESPACE_NAME_LABEL))
            .is_some_and(|value| value == name);
        if labelled {
            continue;
        }
        let patch = serde_json::json!({ "metadata": { "labels": { NAMESPACE_NAME_LABEL: name } } });
        match api
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {
                tracing::info!(namespace = %name, label = NAMESPACE_NAME_LABEL, "labelled an excluded namespace");
            }
            Err(error) => {
                tracing::warn!(namespace = %name, %error, "cannot label an excluded namespace; its pods reach the webhook");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_targets_and_exclusions() {
        let options = WebhookOptions {
            failure_policy: FailurePolicy::Ignore,
            excluded_namespaces: vec![
                "kruise-system".into(),
                "kube-system".into(),
                "kube-system".into(),
            ],
            ..WebhookOptions::default()
        };
        let config = mutating_webhook_configuration(&options, b"CA");
        let value = serde_json::to_value(&config).unwrap();
        let webhook = &value["webhooks"][0];
        assert_eq!(webhook["name"], POD_WEBHOOK_NAME);
        assert_eq!(webhook["failurePolicy"], "Ignore");
        assert_eq!(webhook["sideEffects"], "None");
        assert_eq!(webhook["clientConfig"]["service"]["path"], "/mutate-pod");
        assert_eq!(webhook["clientConfig"]["caBundle"], "Q0E=");
        assert_eq!(
            webhook["rules"][0]["operations"],
            serde_json::json!(["CREATE"])
        );
        assert_eq!(
            webhook["namespaceSelector"]["matchExpressions"][0],
            serde_json::json!({"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kruise-system", "kube-system"]})
        );
    }

    #[test]
    fn the_crr_webhook_sits_next_to_the_pod_webhook() {
        let options = WebhookOptions {
            target: ClientTarget::Url("https://127.0.0.1:9443/mutate-pod".into()),
            ..WebhookOptions::default()
        };
        let value = serde_json::to_value(mutating_webhook_configuration(&options, b"CA")).unwrap();
        let webhook = &value["webhooks"][1];
        assert_eq!(webhook["name"], CRR_WEBHOOK_NAME);
        assert_eq!(
            webhook["clientConfig"]["url"],
            "https://127.0.0.1:9443/mutate-apps-kruise-io-v1beta1-containerrecreaterequest"
        );
        assert_eq!(
            webhook["rules"][0]["resources"],
            serde_json::json!(["containerrecreaterequests"])
        );
        assert_eq!(sibling_url("https://h", "/p"), "https://h/p");
        let service = mutating_webhook_configuration(&WebhookOptions::default(), b"CA");
        let crr = &service.webhooks.unwrap()[1];
        assert_eq!(
            crr.client_config.service.as_ref().unwrap().path.as_deref(),
            Some(crate::crr::admission::MUTATE_CRR_PATH)
        );
    }

    #[test]
    fn no_exclusions_means_no_selector() {
        let options = WebhookOptions {
            excluded_namespaces: Vec::new(),
            ..WebhookOptions::default()
        };
        let config = mutating_webhook_configuration(&options, b"");
        assert!(config.webhooks.unwrap()[0].namespace_selector.is_none());
    }
}
