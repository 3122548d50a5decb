//! The entries of the workload webhooks ([`super::workload_admission`]) in the MutatingWebhookConfiguration
//! and the ValidatingWebhookConfiguration, with the settings of the other webhooks (caBundle, target,
//! failure policy, timeout).
//!
//! * defaulting: one webhook per kind, CREATE and UPDATE of both served versions (`v1alpha1`, `v1beta1`), so
//!   each object gets the defaults of its own version;
//! * validating: one webhook per kind, CREATE and UPDATE of the version upstream validates, with
//!   `matchPolicy: Equivalent`, so objects of the other version reach it converted.
//!
//! No namespace selector: workloads are judged in every namespace.
//!
//! ```
//! use kruise_manager::webhook::configuration::WebhookOptions;
//! use kruise_manager::webhook::workload_configuration::validating_webhooks;
//!
//! let webhooks = validating_webhooks(&WebhookOptions::default(), b"PEM");
//! assert_eq!(webhooks[0].name, "vcloneset.kb.io");
//! ```

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, RuleWithOperations, ValidatingWebhook,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::configuration::{WebhookOptions, client_config};
use super::workload_kind::{GROUP, SERVED_VERSIONS, WorkloadKind};

fn rule(kind: WorkloadKind, versions: &[&str]) -> RuleWithOperations {
    RuleWithOperations {
        api_groups: Some(vec![GROUP.to_owned()]),
        api_versions: Some(versions.iter().map(|&version| version.to_owned()).collect()),
        operations: Some(vec!["CREATE".to_owned(), "UPDATE".to_owned()]),
        resources: Some(vec![kind.resource().to_owned()]),
        scope: Some("Namespaced".to_owned()),
    }
}

/// The defaulting webhooks, one per kind.
#[must_use]
pub fn mutating_webhooks(options: &WebhookOptions, ca_bundle: &[u8]) -> Vec<MutatingWebhook> {
    WorkloadKind::ALL
        .into_iter()
        .map(|kind| MutatingWebhook {
            name: kind.mutating_webhook_name(),
            admission_review_versions: vec!["v1".to_owned(), "v1beta1".to_owned()],
            client_config: client_config(&options.target, ca_bundle, &kind.mutate_path()),
            failure_policy: Some(options.failure_policy.as_str().to_owned()),
            match_policy: Some("Equivalent".to_owned()),
            namespace_selector: None,
            object_selector: Some(LabelSelector::default()),
            reinvocation_policy: Some("Never".to_owned()),
            rules: Some(vec![rule(kind, &SERVED_VERSIONS)]),
            side_effects: "None".to_owned(),
            timeout_seconds: Some(options.timeout_seconds),
            match_conditions: None,
        })
        .collect()
}

/// The validating webhooks, one per kind.
#[must_use]
pub fn validating_webhooks(options: &WebhookOptions, ca_bundle: &[u8]) -> Vec<ValidatingWebhook> {
    WorkloadKind::ALL
        .into_iter()
        .map(|kind| ValidatingWebhook {
            name: kind.validating_webhook_name(),
            admission_review_versions: vec!["v1".to_owned(), "v1beta1".to_owned()],
            client_config: client_config(&options.target, ca_bundle, &kind.validate_path()),
            failure_policy: Some(options.failure_policy.as_str().to_owned()),
            match_policy: Some("Equivalent".to_owned()),
            namespace_selector: None,
            object_selector: Some(LabelSelector::default()),
            rules: Some(vec![rule(kind, &[kind.admitted_version()])]),
            side_effects: "None".to_owned(),
            timeout_seconds: Some(options.timeout_seconds),
            match_conditions: None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhook::configuration::{ClientTarget, FailurePolicy};

    #[test]
    fn every_kind_has_both_webhooks_with_the_failure_policy() {
        let options = WebhookOptions {
            failure_policy: FailurePolicy::Ignore,
            ..WebhookOptions::default()
        };
        let mutating = serde_json::to_value(mutating_webhooks(&options, b"CA")).unwrap();
        let validating = serde_json::to_value(validating_webhooks(&options, b"CA")).unwrap();
        assert_eq!(mutating.as_array().unwrap().len(), 6);
        assert_eq!(mutating[1]["name"], "mstatefulset.kb.io");
        assert_eq!(mutating[1]["failurePolicy"], "Ignore");
        assert_eq!(
            mutating[1]["clientConfig"]["service"]["path"],
            "/mutate-apps-kruise-io-v1beta1-statefulset"
        );
        assert_eq!(
            mutating[0]["rules"][0],
            serde_json::json!({"apiGroups": ["apps.kruise.io"], "apiVersions": ["v1alpha1", "v1beta1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["clonesets"], "scope": "Namespaced"})
        );
        assert_eq!(validating[2]["name"], "vdaemonset.kb.io");
        assert_eq!(validating[2]["matchPolicy"], "Equivalent");
        assert_eq!(
            validating[2]["rules"][0]["apiVersions"],
            serde_json::json!(["v1alpha1"])
        );
        assert_eq!(
            validating[1]["rules"][0]["apiVersions"],
            serde_json::json!(["v1beta1"])
        );
        assert!(validating[0].get("namespaceSelector").is_none());
    }

    #[test]
    fn a_url_target_gets_the_sibling_paths() {
        let options = WebhookOptions {
            target: ClientTarget::Url("https://127.0.0.1:9443/mutate-pod".into()),
            ..WebhookOptions::default()
        };
        let webhooks = validating_webhooks(&options, b"");
        assert_eq!(
            webhooks[5].client_config.url.as_deref(),
            Some("https://127.0.0.1:9443/validate-apps-kruise-io-v1alpha1-imagepulljob")
        );
    }
}
