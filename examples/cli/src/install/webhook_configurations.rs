//! `webhook.yaml`: the MutatingWebhookConfiguration and the ValidatingWebhookConfiguration, with the
//! webhooks the feature gates turn on. kruise-manager writes the same objects at start and fills in
//! `caBundle`.

use std::collections::BTreeMap;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kruise_api::keys::pub_policy::{
    DELETE_PROTECTION_ALWAYS, DELETE_PROTECTION_CASCADING, DELETE_PROTECTION_LABEL,
};

use super::document::Document;
use super::manager_rbac::{MANAGER, MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION};
use super::settings::InstallSettings;
use super::webhook_entry::{Route, Selection, WebhookEntry};
use super::workload_webhooks;

const POD_CREATE: Route = pod_route(&["CREATE"], "pods");
const CREATE_UPDATE: &[&str] = &["CREATE", "UPDATE"];

/// `operations` of the core group's `resource` (`pods`, `pods/eviction`), v1.
const fn pod_route(operations: &'static [&'static str], resource: &'static str) -> Route {
    Route {
        group: "",
        versions: &["v1"],
        operations,
        resource,
        namespaced: true,
    }
}

/// The kinds whose DELETE the deletion protection webhook receives: `(group, versions, resource,
/// namespaced)`.
const PROTECTED: [(&str, &[&str], &str, bool); 9] = [
    ("", &["v1"], "namespaces", false),
    (
        "apiextensions.k8s.io",
        &["v1", "v1beta1"],
        "customresourcedefinitions",
        false,
    ),
    ("apps", &["v1"], "deployments", true),
    ("apps", &["v1"], "replicasets", true),
    ("apps", &["v1"], "statefulsets", true),
    (
        "apps.kruise.io",
        &["v1alpha1", "v1beta1"],
        "clonesets",
        true,
    ),
    (
        "apps.kruise.io",
        &["v1alpha1", "v1beta1"],
        "statefulsets",
        true,
    ),
    (
        "apps.kruise.io",
        &["v1alpha1", "v1beta1"],
        "daemonsets",
        true,
    ),
    (
        "apps.kruise.io",
        &["v1alpha1", "v1beta1"],
        "uniteddeployments",
        true,
    ),
];

fn entry(name: &str, path: &str, routes: Vec<Route>, selection: Selection) -> WebhookEntry {
    WebhookEntry {
        name: name.to_owned(),
        path: path.to_owned(),
        routes,
        selection,
        side_effects_unless_dry_run: false,
        fixed_failure_policy: None,
    }
}

/// The mutating webhooks: pods and ContainerRecreateRequests, the workloads' defaulting, WorkloadSpread.
fn mutating_entries(settings: &InstallSettings) -> Vec<WebhookEntry> {
    let mut entries = vec![
        entry(
            "mpod.kb.io",
            "/mutate-pod",
            vec![POD_CREATE],
            Selection::OutsideExcludedNamespaces,
        ),
        entry(
            "mcontainerrecreaterequest.kb.io",
            "/mutate-apps-kruise-io-v1beta1-containerrecreaterequest",
            vec![Route {
                group: "apps.kruise.io",
                versions: &["v1beta1"],
                operations: CREATE_UPDATE,
                resource: "containerrecreaterequests",
                namespaced: true,
            }],
            Selection::OutsideExcludedNamespaces,
        ),
    ];
    entries.extend(workload_webhooks::defaulting());
    if settings.webhook_gates.workload_spread {
        entries.push(WebhookEntry {
            side_effects_unless_dry_run: true,
            ..entry(
                "mworkloadspread.kruise.io",
                "/mutate-pod-workloadspread",
                vec![POD_CREATE],
                Selection::OutsideExcludedNamespaces,
            )
        });
    }
    entries
}

/// The validating webhooks: SidecarSets, the workloads, and those of the gates.
fn validating_entries(settings: &InstallSettings) -> Vec<WebhookEntry> {
    let gates = settings.webhook_gates;
    let cluster_kind = |name: &str, path: &str, versions: &'static [&'static str], resource| {
        entry(
            name,
            path,
            vec![Route {
                group: "apps.kruise.io",
                versions,
                operations: CREATE_UPDATE,
                resource,
                namespaced: false,
            }],
            Selection::Everything,
        )
    };
    let mut entries = vec![cluster_kind(
        "vsidecarset.kb.io",
        "/validate-apps-kruise-io-v1beta1-sidecarset",
        &["v1beta1"],
        "sidecarsets",
    )];
    entries.extend(workload_webhooks::validation());
    if gates.deletion_protection {
        let routes = PROTECTED
            .into_iter()
            .map(|(group, versions, resource, namespaced)| Route {
                group,
                versions,
                operations: &["DELETE"],
                resource,
                namespaced,
            })
            .collect();
        entries.push(entry(
            "vdeletionprotection.kruise.io",
            "/validate-deletion-protection",
            routes,
            Selection::Labelled {
                key: DELETE_PROTECTION_LABEL,
                values: &[DELETE_PROTECTION_ALWAYS, DELETE_PROTECTION_CASCADING],
            },
        ));
    }
    let mut budget_routes = Vec::new();
    if gates.pod_unavailable_budget_delete {
        budget_routes.push(pod_route(&["DELETE"], "pods"));
        budget_routes.push(pod_route(&["CREATE"], "pods/eviction"));
    }
    if gates.pod_unavailable_budget_update {
        budget_routes.push(pod_route(&["UPDATE"], "pods"));
    }
    if !budget_routes.is_empty() {
        entries.push(WebhookEntry {
            side_effects_unless_dry_run: true,
            ..entry(
                "vpodunavailablebudget.kruise.io",
                "/validate-pod-unavailable-budget",
                budget_routes,
                Selection::OutsideExcludedNamespacesOnly,
            )
        });
    }
    if gates.workload_spread {
        // It only counts: a manager that cannot be reached must not block pod deletions.
        entries.push(WebhookEntry {
            side_effects_unless_dry_run: true,
            fixed_failure_policy: Some("Ignore"),
            ..entry(
                "vworkloadspread.kruise.io",
                "/validate-pod-workloadspread",
                vec![pod_route(&["DELETE"], "pods")],
                Selection::OutsideExcludedNamespaces,
            )
        });
    }
    if gates.resource_distribution {
        entries.push(cluster_kind(
            "vresourcedistribution.kb.io",
            "/validate-apps-kruise-io-v1alpha1-resourcedistribution",
            &["v1alpha1"],
            "resourcedistributions",
        ));
    }
    if gates.pod_probe_marker {
        entries.push(entry(
            "vpodprobemarker.kb.io",
            "/validate-apps-kruise-io-v1alpha1-podprobemarker",
            vec![Route {
                group: "apps.kruise.io",
                versions: &["v1alpha1"],
                operations: CREATE_UPDATE,
                resource: "podprobemarkers",
                namespaced: true,
            }],
            Selection::Everything,
        ));
    }
    entries
}

fn metadata(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        labels: Some(BTreeMap::from([(
            "app.kubernetes.io/managed-by".to_owned(),
            MANAGER.to_owned(),
        )])),
        ..ObjectMeta::default()
    }
}

/// The MutatingWebhookConfiguration.
#[must_use]
pub fn mutating_configuration(settings: &InstallSettings) -> MutatingWebhookConfiguration {
    MutatingWebhookConfiguration {
        metadata: metadata(MUTATING_CONFIGURATION),
        webhooks: Some(
            mutating_entries(settings)
                .iter()
                .map(|entry| entry.mutating(settings))
                .collect(),
        ),
    }
}

/// The ValidatingWebhookConfiguration.
#[must_use]
pub fn validating_configuration(settings: &InstallSettings) -> ValidatingWebhookConfiguration {
    ValidatingWebhookConfiguration {
        metadata: metadata(VALIDATING_CONFIGURATION),
        webhooks: Some(
            validating_entries(settings)
                .iter()
                .map(|entry| entry.validating(settings))
                .collect(),
        ),
    }
}

/// Both configurations.
///
/// # Errors
/// Rendering fails.
pub fn documents(settings: &InstallSettings) -> std::io::Result<Vec<Document>> {
    Ok(vec![
        Document::new(
            "Pods on CREATE (the pod webhook, then WorkloadSpread's), ContainerRecreateRequests, and the\n\
             workload kinds on CREATE and UPDATE (defaulting, both served versions) go to kruise-manager.\n\
             kruise-manager writes this object at start with the same webhooks and fills in caBundle.",
            &mutating_configuration(settings),
        )?,
        Document::new(
            "SidecarSets and the workload kinds on CREATE and UPDATE (the version upstream validates; the other\n\
             one arrives converted), deletion protection (gate ResourcesDeletionProtection: only objects\n\
             labelled policy.kruise.io/delete-protection=Always|Cascading, only their DELETE), pod DELETE and\n\
             pods/eviction CREATE for PodUnavailableBudget (gate PodUnavailableBudgetDeleteGate; pod UPDATE with\n\
             PodUnavailableBudgetUpdateGate), WorkloadSpread's accounting of pod DELETE (failure policy Ignore:\n\
             it only counts), ResourceDistributions (gate ResourceDistributionGate).",
            &validating_configuration(settings),
        )?,
    ])
}
