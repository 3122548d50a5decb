//! The ValidatingWebhookConfiguration that sends SidecarSet creations and updates to the SidecarSet
//! validating webhook ([`super::sidecarset_admission`]) and the workloads to theirs
//! ([`super::workload_configuration`]) and protected deletions to the deletion protection webhook
//! ([`super::deletion_protection`], unless its gate is off) and pod deletions, evictions and (gate
//! `PodUnavailableBudgetUpdateGate`) updates to the PodUnavailableBudget webhook
//! ([`super::pod_unavailable_budget`]) and (gate `ResourceDistributionGate`) ResourceDistribution creations
//! and updates to theirs ([`super::resource_distribution`]), built as a value (pure; written by
//! [`super::registration`]), caBundle included.
//!
//! The rule names v1beta1 with `matchPolicy: Equivalent`, so v1alpha1 requests reach the webhook converted
//! to v1beta1. SidecarSets are cluster-scoped: no namespace selector applies.
//!
//! ```
//! use kruise_manager::webhook::configuration::{ClientTarget, WebhookOptions};
//! use kruise_manager::webhook::validating_configuration::validating_webhook_configuration;
//!
//! let options = WebhookOptions {
//!     target: ClientTarget::Url("https://127.0.0.1:9443/mutate-pod".into()),
//!     ..WebhookOptions::default()
//! };
//! let config = validating_webhook_configuration(&options, b"PEM");
//! let webhook = &config.webhooks.unwrap()[0];
//! assert_eq!(
//!     webhook.client_config.url.as_deref(),
//!     Some("https://127.0.0.1:9443/validate-apps-kruise-io-v1beta1-sidecarset")
//! );
//! ```

use std::collections::BTreeMap;

use k8s_openapi::api::admissionregistration::v1::{
    RuleWithOperations, ValidatingWebhook, ValidatingWebhookConfiguration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::ObjectMeta;

use super::configuration::{FIELD_MANAGER, WebhookOptions, client_config};
use super::deletion_protection::deletion_protection_webhook;
use super::pod_unavailable_budget::pod_unavailable_budget_webhook;
use super::sidecarset_admission::VALIDATE_SIDECARSET_PATH;

/// The name of the ValidatingWebhookConfiguration kruise-manager writes.
pub const VALIDATING_CONFIGURATION_NAME: &str = "kruise-rs-validating-webhook-configuration";
/// The name of the SidecarSet webhook inside it (upstream's).
pub const SIDECARSET_WEBHOOK_NAME: &str = "vsidecarset.kb.io";

/// The configuration object, with `ca_bundle` (PEM) as the trusted CA.
#[must_use]
pub fn validating_webhook_configuration(
    options: &WebhookOptions,
    ca_bundle: &[u8],
) -> ValidatingWebhookConfiguration {
    ValidatingWebhookConfiguration {
        metadata: ObjectMeta {
            name: Some(VALIDATING_CONFIGURATION_NAME.to_owned()),
            labels: Some(BTreeMap::from([(
                "app.kubernetes.io/managed-by".to_owned(),
                FIELD_MANAGER.to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        webhooks: Some(
            [cluster_kind_webhook(
                SIDECARSET_WEBHOOK_NAME,
                VALIDATE_SIDECARSET_PATH,
                ("v1beta1", "sidecarsets"),
                options,
                ca_bundle,
            )]
            .into_iter()
            .chain(super::workload_configuration::validating_webhooks(
                options, ca_bundle,
            ))
            .chain(
                options
                    .deletion_protection
                    .then(|| deletion_protection_webhook(options, ca_bundle)),
            )
            .chain(pod_unavailable_budget_webhook(options, ca_bundle))
            .chain(super::workload_spread::validating_webhook(
                options,
                ca_bundle,
                super::configuration::excluded_namespace_selector(options),
            ))
            .chain(options.resource_distribution.then(|| {
                super::resource_distribution::resource_distribution_webhook(options, ca_bundle)
            }))
            .chain(
                options
                    .pod_probe_marker
                    .then(|| super::pod_probe_marker::validating_webhook(options, ca_bundle)),
            )
            .collect(),
        ),
    }
}

/// The entry `name` that sends CREATE and UPDATE of one cluster-scoped `apps.kruise.io` resource
/// (`(version, resource)`) to `path` (`matchPolicy: Equivalent`: the other served version arrives
/// converted).
#[must_use]
pub fn cluster_kind_webhook(
    name: &str,
    path: &str,
    (version, resource): (&str, &str),
    options: &WebhookOptions,
    ca_bundle: &[u8],
) -> ValidatingWebhook {
    ValidatingWebhook {
        name: name.to_owned(),
        admission_review_versions: vec!["v1".to_owned(), "v1beta1".to_owned()],
        client_config: client_config(&options.target, ca_bundle, path),
        failure_policy: Some(options.failure_policy.as_str().to_owned()),
        match_policy: Some("Equivalent".to_owned()),
        namespace_selector: None,
        object_selector: Some(LabelSelector::default()),
        rules: Some(vec![RuleWithOperations {
            api_groups: Some(vec!["apps.kruise.io".to_owned()]),
            api_versions: Some(vec![version.to_owned()]),
            operations: Some(vec!["CREATE".to_owned(), "UPDATE".to_owned()]),
            resources: Some(vec![resource.to_owned()]),
            scope: Some("Cluster".to_owned()),
        }]),
        side_effects: "None".to_owned(),
        timeout_seconds: Some(options.timeout_seconds),
        match_conditions: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhook::configuration::{ClientTarget, FailurePolicy};

    #[test]
    fn sidecarsets_go_to_the_service_path_with_the_failure_policy() {
        let options = WebhookOptions {
            failure_policy: FailurePolicy::Ignore,
            ..WebhookOptions::default()
        };
        let value =
            serde_json::to_value(validating_webhook_configuration(&options, b"CA")).unwrap();
        let webhook = &value["webhooks"][0];
        assert_eq!(webhook["name"], SIDECARSET_WEBHOOK_NAME);
        assert_eq!(webhook["failurePolicy"], "Ignore");
        assert_eq!(webhook["matchPolicy"], "Equivalent");
        assert_eq!(
            webhook["clientConfig"]["service"]["path"],
            VALIDATE_SIDECARSET_PATH
        );
        assert_eq!(webhook["clientConfig"]["caBundle"], "Q0E=");
        assert_eq!(
            webhook["rules"][0],
            serde_json::json!({"apiGroups": ["apps.kruise.io"], "apiVersions": ["v1beta1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["sidecarsets"], "scope": "Cluster"})
        );
        assert!(webhook.get("namespaceSelector").is_none());
    }

    #[test]
    fn a_url_target_gets_the_sibling_path() {
        let options = WebhookOptions {
            target: ClientTarget::Url("https://[::1]:9443/mutate-pod?x=1".into()),
            ..WebhookOptions::default()
        };
        let config = validating_webhook_configuration(&options, b"");
        assert_eq!(
            config.webhooks.unwrap()[0].client_config.url.as_deref(),
            Some("https://[::1]:9443/validate-apps-kruise-io-v1beta1-sidecarset")
        );
    }
}
