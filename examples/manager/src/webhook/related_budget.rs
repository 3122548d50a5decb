//! The `pub.kruise.io/related-pub` annotation (and its legacy twin `kruise.io/related-pub`) of a pod
//! CREATE: the name of the PodUnavailableBudget that covers the new pod (upstream's pod mutating webhook
//! writes both). The pod mutating webhook adds it when a PodUnavailableBudget gate is on.

use k8s_openapi::api::core::v1::Pod;
use kruise_api::keys::pub_policy::{LEGACY_RELATED_PUB_ANNOTATION, RELATED_PUB_ANNOTATION};
use serde_json::{Value, json};

use crate::unavailable_budget::BudgetStores;

/// The JSON patch operations that set both annotations on `pod` to the name of the budget covering it;
/// none when no budget covers it or both already say so.
#[must_use]
pub fn patch(pod: &Pod, budgets: &BudgetStores) -> Vec<Value> {
    let Some(budget) = budgets.covering(pod) else {
        return Vec::new();
    };
    let name = budget.stored.metadata.name.clone().unwrap_or_default();
    operations(pod, &name)
}

/// The operations that set both annotations of `pod` to `name`.
#[must_use]
pub fn operations(pod: &Pod, name: &str) -> Vec<Value> {
    let keys = [RELATED_PUB_ANNOTATION, LEGACY_RELATED_PUB_ANNOTATION];
    match &pod.metadata.annotations {
        None => vec![json!({"op": "add", "path": "/metadata/annotations",
            "value": {RELATED_PUB_ANNOTATION: name, LEGACY_RELATED_PUB_ANNOTATION: name}})],
        Some(annotations) => keys
            .into_iter()
            .filter(|key| annotations.get(*key).map(String::as_str) != Some(name))
            .map(|key| {
                json!({"op": "add", "path": format!("/metadata/annotations/{}", key.replace('~', "~0").replace('/', "~1")),
                    "value": name})
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_annotations_are_added_escaped_or_with_the_map() {
        let bare = Pod::default();
        assert_eq!(
            operations(&bare, "web-pub"),
            vec![json!({"op": "add", "path": "/metadata/annotations",
                "value": {"pub.kruise.io/related-pub": "web-pub", "kruise.io/related-pub": "web-pub"}})]
        );
        let mut annotated = Pod::default();
        annotated.metadata.annotations =
            Some([("kruise.io/related-pub".to_owned(), "web-pub".to_owned())].into());
        assert_eq!(
            operations(&annotated, "web-pub"),
            vec![
                json!({"op": "add", "path": "/metadata/annotations/pub.kruise.io~1related-pub", "value": "web-pub"})
            ]
        );
    }
}
