//! The part of kruise-manager's `--feature-gates` that changes the install manifests: which webhooks the
//! webhook configurations hold. Every entry must read `Name=true|false`; names are checked by
//! kruise-manager itself when it starts (this crate does not link it).

use kruise_api::feature_gate::gate_entries;

/// The gates that add or remove webhooks, with upstream's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WebhookGates {
    /// `ResourcesDeletionProtection` (default on): the deletion protection webhook.
    pub deletion_protection: bool,
    /// `PodUnavailableBudgetDeleteGate` (default on): pod deletions and evictions.
    pub pod_unavailable_budget_delete: bool,
    /// `PodUnavailableBudgetUpdateGate` (default off): pod updates.
    pub pod_unavailable_budget_update: bool,
    /// `WorkloadSpread` (default on): the WorkloadSpread pod webhooks.
    pub workload_spread: bool,
    /// `ResourceDistributionGate` (default off): the ResourceDistribution webhook.
    pub resource_distribution: bool,
    /// `PodProbeMarkerGate` (default on): the PodProbeMarker webhook.
    pub pod_probe_marker: bool,
}

impl Default for WebhookGates {
    fn default() -> Self {
        Self {
            deletion_protection: true,
            pod_unavailable_budget_delete: true,
            pod_unavailable_budget_update: false,
            workload_spread: true,
            resource_distribution: false,
            pod_probe_marker: true,
        }
    }
}

/// Reads the webhook gates of a `Name=true|false,...` list (other names are left to kruise-manager).
///
/// # Errors
/// An entry that is not `Name=BOOLEAN`, named in a one-line message.
pub fn webhook_gates(list: &str) -> Result<WebhookGates, String> {
    let mut gates = WebhookGates::default();
    for entry in gate_entries(list) {
        let (name, enabled) = entry
            .map_err(|entry| format!("--feature-gates: entry {entry:?} is not Name=true|false"))?;
        match name {
            "ResourcesDeletionProtection" => gates.deletion_protection = enabled,
            "PodUnavailableBudgetDeleteGate" => gates.pod_unavailable_budget_delete = enabled,
            "PodUnavailableBudgetUpdateGate" => gates.pod_unavailable_budget_update = enabled,
            "WorkloadSpread" => gates.workload_spread = enabled,
            "ResourceDistributionGate" => gates.resource_distribution = enabled,
            "PodProbeMarkerGate" => gates.pod_probe_marker = enabled,
            _ => {}
        }
    }
    Ok(gates)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gates_override_defaults_and_bad_entries_are_named() {
        assert_eq!(webhook_gates("").unwrap(), WebhookGates::default());
        let gates =
            webhook_gates("WorkloadSpread=false, PodUnavailableBudgetUpdateGate=true,Other=true")
                .unwrap();
        assert!(!gates.workload_spread);
        assert!(gates.pod_unavailable_budget_update);
        assert!(gates.deletion_protection);
        assert_eq!(
            webhook_gates("WorkloadSpread=maybe").unwrap_err(),
            "--feature-gates: entry \"WorkloadSpread=maybe\" is not Name=true|false"
        );
    }
}
