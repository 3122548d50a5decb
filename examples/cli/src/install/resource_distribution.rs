//! `resource-distribution.yaml`: the rights of the ResourceDistribution controller and webhook (gate
//! `ResourceDistributionGate`), a ClusterRole of their own so the manager's stays read-only on Secrets.

use super::document::Document;
use super::manager_rbac::MANAGER;
use super::policy_rule::{rule, service_account_subject};
use super::role_grant::cluster_role_grant;
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
    let rules = vec![
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
    ];
    let subject = service_account_subject(MANAGER, &settings.namespace);
    Ok(cluster_role_grant(COMMENT, RESOURCE_DISTRIBUTION_ROLE, rules, &subject)?.into())
}
