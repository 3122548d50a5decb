//! `resource-distribution.yaml`: the rights of the ResourceDistribution controller and webhook (gate
//! `ResourceDistributionGate`), a ClusterRole of their own so the manager's stays read-only on Secrets.

use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};

use super::document::Document;
use super::manager_rbac::MANAGER;
use super::object_meta::cluster_meta;
use super::policy_rule::{role_ref, rule, service_account_subject};
use super::settings::InstallSettings;

/// The name of the ClusterRole and its binding.
pub const RESOURCE_DISTRIBUTION_ROLE: &str = "kruise-manager-resource-distribution";

const COMMENT: &str = "\
ResourceDistribution (kruise-manager --feature-gates=ResourceDistributionGate=true; off by default, as
upstream, because of these rights): apply this only with the gate on (`kruise install --resource-distribution
--feature-gates ResourceDistributionGate=true`). The controller reads ResourceDistributions (and namespaces,
in rbac.yaml), writes their status, and creates, replaces and deletes the copies, Secrets and ConfigMaps in
any namespace, whose metadata it watches (metadata only, never the data); the validating webhook lists them
(metadata only) to refuse conflicts. With the gate on, the manager adds its webhook to the
ValidatingWebhookConfiguration it writes.";

/// The ClusterRole and its binding.
///
/// # Errors
/// Rendering fails.
pub fn documents(settings: &InstallSettings) -> std::io::Result<Vec<Document>> {
    let kruise = "apps.kruise.io";
    Ok(vec![
        Document::new(
            COMMENT,
            &ClusterRole {
                metadata: cluster_meta(RESOURCE_DISTRIBUTION_ROLE),
                rules: Some(vec![
                    rule(
                        &[kruise],
                        &["resourcedistributions"],
                        &["get", "list", "watch"],
                    ),
                    rule(
                        &[kruise],
                        &["resourcedistributions/status"],
                        &["get", "update", "patch"],
                    ),
                    rule(
                        &[""],
                        &["secrets", "configmaps"],
                        &["get", "list", "watch", "create", "update", "delete"],
                    ),
                ]),
                aggregation_rule: None,
            },
        )?,
        Document::new(
            "",
            &ClusterRoleBinding {
                metadata: cluster_meta(RESOURCE_DISTRIBUTION_ROLE),
                role_ref: role_ref("ClusterRole", RESOURCE_DISTRIBUTION_ROLE),
                subjects: Some(vec![service_account_subject(MANAGER, &settings.namespace)]),
            },
        )?,
    ])
}
