//! The defaulting and validating webhooks of the workload kinds (CloneSet, Advanced StatefulSet, Advanced
//! DaemonSet, BroadcastJob, AdvancedCronJob, ImagePullJob): one of each per kind, CREATE and UPDATE.
//! Defaulting receives both served versions; validation the version upstream validates (the other one
//! arrives converted).

use super::webhook_entry::{Route, Selection, WebhookEntry};

/// The served versions of the workload kinds.
const SERVED_VERSIONS: &[&str] = &["v1alpha1", "v1beta1"];

/// The version upstream validates (and names in the webhooks' paths) of most kinds.
const V1ALPHA1: &[&str] = &["v1alpha1"];
/// The version upstream validates of Advanced StatefulSet.
const V1BETA1: &[&str] = &["v1beta1"];

/// `(singular, plural, validated version)` of each workload kind, in the configurations' order.
const WORKLOADS: [(&str, &str, &[&str]); 6] = [
    ("cloneset", "clonesets", V1ALPHA1),
    ("statefulset", "statefulsets", V1BETA1),
    ("daemonset", "daemonsets", V1ALPHA1),
    ("broadcastjob", "broadcastjobs", V1ALPHA1),
    ("advancedcronjob", "advancedcronjobs", V1ALPHA1),
    ("imagepulljob", "imagepulljobs", V1ALPHA1),
];

/// The version a kind's validating webhook receives: the validated one, except for AdvancedCronJob, whose
/// v1beta1-only ImageListPullJob template a conversion to v1alpha1 would drop before the webhook sees it.
fn admitted(singular: &str, validated: &'static [&'static str]) -> &'static [&'static str] {
    if singular == "advancedcronjob" {
        V1BETA1
    } else {
        validated
    }
}

fn entry(
    name: String,
    path: String,
    plural: &'static str,
    versions: &'static [&'static str],
) -> WebhookEntry {
    WebhookEntry {
        name,
        path,
        routes: vec![Route {
            group: "apps.kruise.io",
            versions,
            operations: &["CREATE", "UPDATE"],
            resource: plural,
            namespaced: true,
        }],
        selection: Selection::Everything,
        side_effects_unless_dry_run: false,
        fixed_failure_policy: None,
    }
}

/// The version in a kind's webhook paths: the one upstream validates.
fn path_version(validated: &[&str]) -> String {
    validated.join("-")
}

/// The defaulting webhooks.
#[must_use]
pub fn defaulting() -> Vec<WebhookEntry> {
    WORKLOADS
        .into_iter()
        .map(|(singular, plural, validated)| {
            entry(
                format!("m{singular}.kb.io"),
                format!(
                    "/mutate-apps-kruise-io-{}-{singular}",
                    path_version(validated)
                ),
                plural,
                SERVED_VERSIONS,
            )
        })
        .collect()
}

/// The validating webhooks.
#[must_use]
pub fn validation() -> Vec<WebhookEntry> {
    WORKLOADS
        .into_iter()
        .map(|(singular, plural, validated)| {
            entry(
                format!("v{singular}.kb.io"),
                format!(
                    "/validate-apps-kruise-io-{}-{singular}",
                    path_version(validated)
                ),
                plural,
                admitted(singular, validated),
            )
        })
        .collect()
}
