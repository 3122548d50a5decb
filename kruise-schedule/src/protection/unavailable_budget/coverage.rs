//! Which pods a budget covers, and which of them it leaves alone.
//!
//! A budget covers a pod of its own namespace when:
//!
//! * with `spec.targetRef` (which wins over `spec.selector`): the pod's workload is the target. The pod's
//!   workload is the owner reference marked `controller` ([`WorkloadRef::owners_of`]); a pod of a
//!   ReplicaSet named `<deployment>-<pod-template-hash>` (the name the Deployment controller gives its
//!   ReplicaSets, the hash being the pod's `pod-template-hash` label) also belongs to that Deployment, so a
//!   budget targeting a Deployment covers its pods without reading the ReplicaSet. The group of the target's
//!   `apiVersion` must equal the owner's; the version may differ (`apps.kruise.io/v1alpha1` and `v1beta1`
//!   CloneSets are the same objects);
//! * with `spec.selector` only: the selector is not empty and matches the pod's labels (an empty selector
//!   covers nothing, as upstream).
//!
//! A covered pod is left alone ([`is_ignored`]) when its annotation `pub.kruise.io/no-protect` is true (Go
//! `ParseBool`) or the budget's `spec.ignoredPodSelector` (when not empty) matches its labels.

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kruise_api::feature_gate::parse_go_bool;
use kruise_api::keys::kubernetes::POD_TEMPLATE_HASH_LABEL;
use kruise_api::keys::pub_policy::NO_PROTECT_ANNOTATION;
use kruise_api::label_selector;
use kruise_api::policy::v1beta1::{PodUnavailableBudget, TargetReference};

use super::BudgetError;

/// A workload a pod belongs to: API group (empty for core), kind and name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WorkloadRef {
    /// The API group (`apps`, `apps.kruise.io`).
    pub group: String,
    /// The kind (`CloneSet`).
    pub kind: String,
    /// The name.
    pub name: String,
}

impl WorkloadRef {
    /// The workload a target reference names.
    #[must_use]
    pub fn of_target(target: &TargetReference) -> Self {
        Self {
            group: group_of(&target.api_version).to_owned(),
            kind: target.kind.clone(),
            name: target.name.clone(),
        }
    }

    /// The workloads `pod` belongs to: its controller, and for a ReplicaSet named after a Deployment and the
    /// pod's `pod-template-hash`, that Deployment too.
    #[must_use]
    pub fn owners_of(pod: &Pod) -> Vec<Self> {
        let Some(owner) = pod
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|owner| owner.controller == Some(true))
        else {
            return Vec::new();
        };
        let direct = Self {
            group: group_of(&owner.api_version).to_owned(),
            kind: owner.kind.clone(),
            name: owner.name.clone(),
        };
        let deployment = (direct.group == "apps" && direct.kind == "ReplicaSet")
            .then(|| kruise_api::pod::label(pod, POD_TEMPLATE_HASH_LABEL))
            .flatten()
            .filter(|hash| !hash.is_empty())
            .and_then(|hash| direct.name.strip_suffix(hash))
            .and_then(|name| name.strip_suffix('-'))
            .filter(|name| !name.is_empty())
            .map(|name| Self {
                group: "apps".to_owned(),
                kind: "Deployment".to_owned(),
                name: name.to_owned(),
            });
        std::iter::once(direct).chain(deployment).collect()
    }
}

/// The group of an `apiVersion` (`apps/v1` → `apps`, `v1` → core).
fn group_of(api_version: &str) -> &str {
    api_version
        .rsplit_once('/')
        .map_or("", |(group, _version)| group)
}

/// `namespace/name` of a budget.
#[must_use]
pub fn budget_key(budget: &PodUnavailableBudget) -> String {
    format!(
        "{}/{}",
        budget.metadata.namespace.as_deref().unwrap_or_default(),
        budget.metadata.name.as_deref().unwrap_or_default()
    )
}

/// Whether `budget` covers `pod` (see the module documentation).
///
/// # Errors
/// The budget's selector is invalid.
pub fn covers(budget: &PodUnavailableBudget, pod: &Pod) -> Result<bool, BudgetError> {
    if budget.metadata.namespace != pod.metadata.namespace {
        return Ok(false);
    }
    if let Some(target) = &budget.spec.target_reference {
        let target = WorkloadRef::of_target(target);
        return Ok(WorkloadRef::owners_of(pod).contains(&target));
    }
    match &budget.spec.selector {
        Some(selector) if !label_selector::is_empty(selector) => {
            selector_matches(budget, "spec.selector", selector, pod)
        }
        _ => Ok(false),
    }
}

/// Whether `budget` leaves `pod` alone: `pub.kruise.io/no-protect` is true, or `spec.ignoredPodSelector`
/// matches.
///
/// # Errors
/// The budget's `spec.ignoredPodSelector` is invalid.
pub fn is_ignored(budget: &PodUnavailableBudget, pod: &Pod) -> Result<bool, BudgetError> {
    if kruise_api::pod::annotation(pod, NO_PROTECT_ANNOTATION).and_then(parse_go_bool) == Some(true)
    {
        return Ok(true);
    }
    match &budget.spec.ignored_pod_selector {
        Some(selector) if !label_selector::is_empty(selector) => {
            selector_matches(budget, "spec.ignoredPodSelector", selector, pod)
        }
        _ => Ok(false),
    }
}

fn selector_matches(
    budget: &PodUnavailableBudget,
    field: &'static str,
    selector: &LabelSelector,
    pod: &Pod,
) -> Result<bool, BudgetError> {
    label_selector::matches(selector, kruise_api::pod::labels(pod)).map_err(|source| {
        BudgetError::Selector {
            budget: budget_key(budget),
            field,
            source,
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(value: serde_json::Value) -> Pod {
        serde_json::from_value(value).unwrap()
    }

    fn budget(spec: &serde_json::Value) -> PodUnavailableBudget {
        serde_json::from_value(json!({"apiVersion": "policy.kruise.io/v1beta1",
            "kind": "PodUnavailableBudget", "metadata": {"name": "pub", "namespace": "ns"}, "spec": spec}))
        .unwrap()
    }

    fn owned(api_version: &str, kind: &str, name: &str, hash: Option<&str>) -> Pod {
        let labels = hash.map_or(
            json!({"app": "web"}),
            |hash| json!({"app": "web", "pod-template-hash": hash}),
        );
        pod(
            json!({"metadata": {"name": "p", "namespace": "ns", "labels": labels, "ownerReferences": [
            {"apiVersion": api_version, "kind": kind, "name": name, "uid": "u", "controller": true}]}}),
        )
    }

    #[test]
    fn a_target_covers_the_pods_its_workload_controls() {
        let cloneset = budget(
            &json!({"targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"}}),
        );
        let deployment = budget(
            &json!({"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}),
        );
        let table = [
            (
                &cloneset,
                owned("apps.kruise.io/v1beta1", "CloneSet", "web", None),
                true,
            ),
            (
                &cloneset,
                owned("apps.kruise.io/v1beta1", "CloneSet", "other", None),
                false,
            ),
            (&cloneset, owned("apps/v1", "CloneSet", "web", None), false),
            (
                &deployment,
                owned("apps/v1", "ReplicaSet", "web-5d8f7", Some("5d8f7")),
                true,
            ),
            (
                &deployment,
                owned("apps/v1", "ReplicaSet", "web-5d8f7", Some("other")),
                false,
            ),
            (
                &deployment,
                owned("apps/v1", "ReplicaSet", "web-5d8f7", None),
                false,
            ),
            (
                &deployment,
                owned("apps/v1", "Deployment", "web", None),
                true,
            ),
        ];
        for (budget, pod, expected) in table {
            assert_eq!(
                covers(budget, &pod).unwrap(),
                expected,
                "{:?}",
                pod.metadata.owner_references
            );
        }
    }

    #[test]
    fn a_selector_covers_matching_pods_of_the_namespace_and_an_empty_one_nothing() {
        let pod = owned("apps/v1", "ReplicaSet", "x", None);
        assert!(
            covers(
                &budget(&json!({"selector": {"matchLabels": {"app": "web"}}})),
                &pod
            )
            .unwrap()
        );
        assert!(
            !covers(
                &budget(&json!({"selector": {"matchLabels": {"app": "db"}}})),
                &pod
            )
            .unwrap()
        );
        assert!(!covers(&budget(&json!({"selector": {}})), &pod).unwrap());
        assert!(!covers(&budget(&json!({})), &pod).unwrap());
        let mut elsewhere = pod.clone();
        elsewhere.metadata.namespace = Some("other".into());
        assert!(
            !covers(
                &budget(&json!({"selector": {"matchLabels": {"app": "web"}}})),
                &elsewhere
            )
            .unwrap()
        );
    }

    #[test]
    fn an_invalid_selector_names_the_budget_and_field() {
        let bad = budget(
            &json!({"selector": {"matchExpressions": [{"key": "app", "operator": "Nope"}]}}),
        );
        let error = covers(&bad, &owned("apps/v1", "ReplicaSet", "x", None))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("PodUnavailableBudget ns/pub: spec.selector: "),
            "{error}"
        );
    }

    #[test]
    fn no_protect_and_the_ignored_selector_leave_pods_alone() {
        let plain = budget(&json!({}));
        let mut pod = owned("apps/v1", "ReplicaSet", "x", None);
        assert!(!is_ignored(&plain, &pod).unwrap());
        for (value, ignored) in [
            ("true", true),
            ("T", true),
            ("1", true),
            ("yes", false),
            ("false", false),
        ] {
            pod.metadata.annotations =
                Some([(NO_PROTECT_ANNOTATION.to_owned(), value.to_owned())].into());
            assert_eq!(is_ignored(&plain, &pod).unwrap(), ignored, "{value}");
        }
        pod.metadata.annotations = None;
        let ignoring = budget(&json!({"ignoredPodSelector": {"matchLabels": {"app": "web"}}}));
        assert!(is_ignored(&ignoring, &pod).unwrap());
    }
}
