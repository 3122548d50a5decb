//! One webhook of kruise-manager as the webhook configurations list it: where kube-apiserver sends which
//! requests. The same entries as kruise-manager writes at start (it fills in `caBundle`);
//! `examples/tests/manifests.rs` checks they are equal.

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, RuleWithOperations, ServiceReference, ValidatingWebhook, WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use kruise_api::keys::kubernetes::NAMESPACE_NAME_LABEL;

use super::service::{WEBHOOK_SERVICE, WEBHOOK_SERVICE_PORT};
use super::settings::InstallSettings;

/// The requests of one resource a webhook receives.
#[derive(Clone, Copy, Debug)]
pub struct Route {
    /// API group (`""` for the core group).
    pub group: &'static str,
    /// Versions.
    pub versions: &'static [&'static str],
    /// Operations (`CREATE`, ...).
    pub operations: &'static [&'static str],
    /// Resource (`pods`, `pods/eviction`).
    pub resource: &'static str,
    /// Whether the resource is namespaced.
    pub namespaced: bool,
}

impl Route {
    fn rule(self) -> RuleWithOperations {
        let strings =
            |items: &[&str]| -> Vec<String> { items.iter().map(|&s| s.to_owned()).collect() };
        RuleWithOperations {
            api_groups: Some(vec![self.group.to_owned()]),
            api_versions: Some(strings(self.versions)),
            operations: Some(strings(self.operations)),
            resources: Some(vec![self.resource.to_owned()]),
            scope: Some(
                if self.namespaced {
                    "Namespaced"
                } else {
                    "Cluster"
                }
                .to_owned(),
            ),
        }
    }
}

/// Which objects a webhook receives, besides its routes.
#[derive(Clone, Debug)]
pub enum Selection {
    /// Every object (an empty object selector).
    Everything,
    /// Objects outside the excluded namespaces (kruise-manager's own and kube-system).
    OutsideExcludedNamespaces,
    /// Like [`Self::OutsideExcludedNamespaces`], without an object selector.
    OutsideExcludedNamespacesOnly,
    /// Objects whose label `key` has one of `values`.
    Labelled {
        /// The label.
        key: &'static str,
        /// Its values.
        values: &'static [&'static str],
    },
}

/// One webhook.
#[derive(Clone, Debug)]
pub struct WebhookEntry {
    /// Its name (`mpod.kb.io`).
    pub name: String,
    /// The path on the webhook Service.
    pub path: String,
    /// The requests it receives.
    pub routes: Vec<Route>,
    /// Which objects.
    pub selection: Selection,
    /// Whether it has side effects on non-dry-run requests (`NoneOnDryRun`) or none (`None`).
    pub side_effects_unless_dry_run: bool,
    /// A failure policy of its own instead of the configured one.
    pub fixed_failure_policy: Option<&'static str>,
}

/// How long kube-apiserver waits for an answer.
const TIMEOUT_SECONDS: i32 = 10;

/// The namespace selector excluding kruise-manager's namespace and kube-system.
fn excluded_namespaces(settings: &InstallSettings) -> LabelSelector {
    let mut values = vec!["kube-system".to_owned(), settings.namespace.clone()];
    values.sort();
    values.dedup();
    LabelSelector {
        match_expressions: Some(vec![LabelSelectorRequirement {
            key: NAMESPACE_NAME_LABEL.to_owned(),
            operator: "NotIn".to_owned(),
            values: Some(values),
        }]),
        match_labels: None,
    }
}

impl WebhookEntry {
    fn client_config(&self, settings: &InstallSettings) -> WebhookClientConfig {
        WebhookClientConfig {
            ca_bundle: None,
            service: Some(ServiceReference {
                namespace: settings.namespace.clone(),
                name: WEBHOOK_SERVICE.to_owned(),
                path: Some(self.path.clone()),
                port: Some(WEBHOOK_SERVICE_PORT),
            }),
            url: None,
        }
    }

    fn selectors(
        &self,
        settings: &InstallSettings,
    ) -> (Option<LabelSelector>, Option<LabelSelector>) {
        match &self.selection {
            Selection::Everything => (None, Some(LabelSelector::default())),
            Selection::OutsideExcludedNamespaces => (
                Some(excluded_namespaces(settings)),
                Some(LabelSelector::default()),
            ),
            Selection::OutsideExcludedNamespacesOnly => (Some(excluded_namespaces(settings)), None),
            Selection::Labelled { key, values } => (
                None,
                Some(LabelSelector {
                    match_expressions: Some(vec![LabelSelectorRequirement {
                        key: (*key).to_owned(),
                        operator: "In".to_owned(),
                        values: Some(values.iter().map(|&v| v.to_owned()).collect()),
                    }]),
                    match_labels: None,
                }),
            ),
        }
    }

    fn failure_policy(&self, settings: &InstallSettings) -> String {
        self.fixed_failure_policy
            .unwrap_or_else(|| settings.webhook_failure_policy.api_value())
            .to_owned()
    }

    fn side_effects(&self) -> String {
        if self.side_effects_unless_dry_run {
            "NoneOnDryRun"
        } else {
            "None"
        }
        .to_owned()
    }

    /// The entry of the MutatingWebhookConfiguration.
    #[must_use]
    pub fn mutating(&self, settings: &InstallSettings) -> MutatingWebhook {
        let (namespace_selector, object_selector) = self.selectors(settings);
        MutatingWebhook {
            name: self.name.clone(),
            admission_review_versions: vec!["v1".to_owned(), "v1beta1".to_owned()],
            client_config: self.client_config(settings),
            failure_policy: Some(self.failure_policy(settings)),
            match_policy: Some("Equivalent".to_owned()),
            namespace_selector,
            object_selector,
            reinvocation_policy: Some("Never".to_owned()),
            rules: Some(self.routes.iter().map(|route| route.rule()).collect()),
            side_effects: self.side_effects(),
            timeout_seconds: Some(TIMEOUT_SECONDS),
            match_conditions: None,
        }
    }

    /// The entry of the ValidatingWebhookConfiguration.
    #[must_use]
    pub fn validating(&self, settings: &InstallSettings) -> ValidatingWebhook {
        let (namespace_selector, object_selector) = self.selectors(settings);
        ValidatingWebhook {
            name: self.name.clone(),
            admission_review_versions: vec!["v1".to_owned(), "v1beta1".to_owned()],
            client_config: self.client_config(settings),
            failure_policy: Some(self.failure_policy(settings)),
            match_policy: Some("Equivalent".to_owned()),
            namespace_selector,
            object_selector,
            rules: Some(self.routes.iter().map(|route| route.rule()).collect()),
            side_effects: self.side_effects(),
            timeout_seconds: Some(TIMEOUT_SECONDS),
            match_conditions: None,
        }
    }
}
