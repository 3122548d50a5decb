//! The pods of a UnitedDeployment's subsets for the `Adaptive` schedule strategy: an index of the shared
//! (packed) pod informer holds the pods with an `apps.kruise.io/subset-name` label by namespace; those the
//! UnitedDeployment's selector matches are grouped by that label.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::UnitedDeployment;
use kruise_api::keys::united_deployment::SUBSET_NAME_LABEL;
use kruise_api::label_selector;
use kruise_runtime::{Indexed, Informer};
use kruise_schedule::united_deployment::adaptive::PodSchedule;
use kube::ResourceExt;

/// The name of the index this module adds to the pod informer.
const SUBSET_PODS_INDEX: &str = "uniteddeployment-subset-pods-by-namespace";

/// The pods with a subset label, indexed by namespace.
pub fn subset_pods_by_namespace(pods: &Informer<Pod>) -> Indexed<Pod> {
    pods.index(
        SUBSET_PODS_INDEX,
        Arc::new(|pod: &Pod| {
            if pod.labels().contains_key(SUBSET_NAME_LABEL) {
                pod.metadata.namespace.clone().into_iter().collect()
            } else {
                Vec::new()
            }
        }),
    )
}

/// What the `Adaptive` strategy reads from each subset's pods, by subset name, given the subset pods of
/// `ud`'s namespace. An invalid selector matches no pod.
pub fn subset_pods(pods: &[Arc<Pod>], ud: &UnitedDeployment) -> BTreeMap<String, Vec<PodSchedule>> {
    let namespace = ud.namespace();
    let mut by_subset: BTreeMap<String, Vec<PodSchedule>> = BTreeMap::new();
    for pod in pods {
        if pod.namespace() != namespace
            || !label_selector::matches(&ud.spec.selector, pod.labels()).unwrap_or(false)
        {
            continue;
        }
        if let Some(subset) = pod.labels().get(SUBSET_NAME_LABEL) {
            by_subset
                .entry(subset.clone())
                .or_default()
                .push(PodSchedule::of(pod));
        }
    }
    by_subset
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, namespace: &str, labels: &serde_json::Value) -> Pod {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "status": {"phase": "Pending", "conditions": [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}}))
        .unwrap()
    }

    #[test]
    fn pods_are_grouped_by_subset_when_the_selector_matches_them_in_the_namespace() {
        let pods: Vec<Arc<Pod>> = [
            pod(
                "a1",
                "ns",
                &serde_json::json!({"app": "web", SUBSET_NAME_LABEL: "a"}),
            ),
            pod(
                "a2",
                "ns",
                &serde_json::json!({"app": "web", SUBSET_NAME_LABEL: "a"}),
            ),
            pod(
                "b1",
                "ns",
                &serde_json::json!({"app": "web", SUBSET_NAME_LABEL: "b"}),
            ),
            pod(
                "other-app",
                "ns",
                &serde_json::json!({"app": "api", SUBSET_NAME_LABEL: "a"}),
            ),
            pod(
                "other-ns",
                "x",
                &serde_json::json!({"app": "web", SUBSET_NAME_LABEL: "a"}),
            ),
            pod("no-subset", "ns", &serde_json::json!({"app": "web"})),
        ]
        .into_iter()
        .map(Arc::new)
        .collect();
        let ud: UnitedDeployment = serde_json::from_value(serde_json::json!({
            "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}}
        }))
        .unwrap();
        let found: Vec<(String, usize, bool)> = subset_pods(&pods, &ud)
            .into_iter()
            .map(|(subset, pods)| {
                let all_refused = pods.iter().all(|pod| pod.unschedulable);
                (subset, pods.len(), all_refused)
            })
            .collect();
        assert_eq!(
            found,
            [("a".to_owned(), 2, true), ("b".to_owned(), 1, true)]
        );
    }
}
