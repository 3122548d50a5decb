//! Whether an UPDATE of a pod makes it unavailable, and as which protected operation (upstream's
//! `IsPodUnavailableChanged`: a pod whose spec changes is about to be updated in place, its containers
//! restarted, so it goes unavailable; changes of metadata or status alone do not).
//!
//! * spec unchanged: `None` (labels, annotations, finalizers, conditions: nothing to protect);
//! * only container `resources` changed: [`PubOperation::Resize`] (an in-place vertical scaling, protected
//!   only when the budget names `RESIZE`);
//! * any other spec change (an image, what the in-place update of CloneSet, Advanced StatefulSet, Advanced
//!   DaemonSet and SidecarSet writes): [`PubOperation::Update`].
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_api::policy::v1beta1::PubOperation;
//! use kruise_schedule::protection::unavailable_budget::update_operation;
//!
//! let pod = |image: &str| -> Pod {
//!     serde_json::from_value(serde_json::json!({"spec": {"containers": [{"name": "main", "image": image}]}})).unwrap()
//! };
//! assert_eq!(update_operation(&pod("nginx:1"), &pod("nginx:2")), Some(PubOperation::Update));
//! assert_eq!(update_operation(&pod("nginx:1"), &pod("nginx:1")), None);
//! ```

use k8s_openapi::api::core::v1::{Pod, PodSpec};
use kruise_api::policy::v1beta1::PubOperation;

/// The operation an update from `old` to `new` is, for a budget; `None` when it leaves the spec alone.
#[must_use]
pub fn update_operation(old: &Pod, new: &Pod) -> Option<PubOperation> {
    if old.spec == new.spec {
        return None;
    }
    let without_resources = |spec: Option<&PodSpec>| {
        spec.cloned().map(|mut spec| {
            for container in &mut spec.containers {
                container.resources = None;
            }
            spec
        })
    };
    if without_resources(old.spec.as_ref()) == without_resources(new.spec.as_ref()) {
        Some(PubOperation::Resize)
    } else {
        Some(PubOperation::Update)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn pod(container: &serde_json::Value, labels: &serde_json::Value) -> Pod {
        serde_json::from_value(
            json!({"metadata": {"labels": labels}, "spec": {"containers": [container]}}),
        )
        .unwrap()
    }

    #[test]
    fn spec_changes_are_updates_and_resource_changes_resizes() {
        let base = json!({"name": "main", "image": "nginx:1"});
        let table = [
            (
                json!({"name": "main", "image": "nginx:1"}),
                json!({"app": "x"}),
                None,
            ),
            (
                json!({"name": "main", "image": "nginx:2"}),
                json!({}),
                Some(PubOperation::Update),
            ),
            (
                json!({"name": "main", "image": "nginx:1", "resources": {"limits": {"cpu": "2"}}}),
                json!({}),
                Some(PubOperation::Resize),
            ),
            (
                json!({"name": "main", "image": "nginx:2", "resources": {"limits": {"cpu": "2"}}}),
                json!({}),
                Some(PubOperation::Update),
            ),
        ];
        for (container, labels, expected) in table {
            assert_eq!(
                update_operation(&pod(&base, &json!({})), &pod(&container, &labels)),
                expected,
                "{container}"
            );
        }
    }
}
