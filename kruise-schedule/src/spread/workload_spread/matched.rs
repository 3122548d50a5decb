//! The `apps.kruise.io/matched-workloadspread` annotation of a pod: which WorkloadSpread and subset admitted
//! it, and, for a pod admitted before it had a name, the id it is recorded under in `creatingPods`.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_schedule::spread::workload_spread::matched::{matched_of, pod_key};
//!
//! let pod: Pod = serde_json::from_value(serde_json::json!({"metadata": {"name": "web-1", "annotations": {
//!     "apps.kruise.io/matched-workloadspread": "{\"name\":\"ws\",\"subset\":\"a\"}"}}})).unwrap();
//! let matched = matched_of(&pod).unwrap().unwrap();
//! assert_eq!((matched.name.as_str(), matched.subset.as_str()), ("ws", "a"));
//! assert_eq!(pod_key(&pod, Some(&matched)), "web-1");
//! ```

use k8s_openapi::api::core::v1::Pod;
use kruise_api::annotations::MatchedWorkloadSpread;
use kruise_api::keys::workloadspread::MATCHED_WORKLOADSPREAD_ANNOTATION;

use super::WorkloadSpreadError;

/// The pod's annotation, `None` without one.
///
/// # Errors
/// The annotation is not the JSON object upstream writes.
pub fn matched_of(pod: &Pod) -> Result<Option<MatchedWorkloadSpread>, WorkloadSpreadError> {
    let Some(value) = kruise_api::pod::annotation(pod, MATCHED_WORKLOADSPREAD_ANNOTATION) else {
        return Ok(None);
    };
    serde_json::from_str(value)
        .map(Some)
        .map_err(|error| WorkloadSpreadError::InvalidAnnotation {
            pod: format!(
                "{}/{}",
                pod.metadata.namespace.as_deref().unwrap_or_default(),
                pod.metadata.name.as_deref().unwrap_or_default()
            ),
            value: value.to_owned(),
            reason: error.to_string(),
        })
}

/// The key a pod is recorded under in `creatingPods` / `deletingPods`: the generated id of the annotation
/// when it has one (the pod had only a `generateName` at admission), else the pod's name.
#[must_use]
pub fn pod_key<'a>(pod: &'a Pod, matched: Option<&'a MatchedWorkloadSpread>) -> &'a str {
    match matched.map(|matched| matched.uid.as_str()) {
        Some(uid) if !uid.is_empty() => uid,
        _ => pod.metadata.name.as_deref().unwrap_or_default(),
    }
}
