//! The replicas of a WorkloadSpread's target workload, for a percentage `maxReplicas`: `spec.replicas`
//! (default 1) of a CloneSet, Deployment, ReplicaSet or (Advanced) StatefulSet, `spec.parallelism`
//! (default 1) of a Job. Another kind has no known replicas (a percentage is then reported as an error).
//!
//! ```
//! use kruise_manager::workload_spread::target_replicas::{replicas_in, resource_of};
//!
//! let resource = resource_of("apps.kruise.io/v1alpha1", "CloneSet").unwrap();
//! assert_eq!(resource.plural, "clonesets");
//! assert_eq!(replicas_in("CloneSet", &serde_json::json!({"spec": {"replicas": 6}})), 6);
//! assert_eq!(replicas_in("Job", &serde_json::json!({"spec": {}})), 1);
//! ```

use kruise_api::apps::v1beta1::TargetReference;
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::{Api, Client};
use serde_json::Value;

/// The API resource of a target kind, `None` for kinds WorkloadSpread does not support.
#[must_use]
pub fn resource_of(api_version: &str, kind: &str) -> Option<ApiResource> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let plural = match (group, kind) {
        ("apps.kruise.io", "CloneSet") => "clonesets",
        ("apps.kruise.io" | "apps", "StatefulSet") => "statefulsets",
        ("apps", "Deployment") => "deployments",
        ("apps", "ReplicaSet") => "replicasets",
        ("batch", "Job") => "jobs",
        _ => return None,
    };
    Some(ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(group, version, kind),
        plural,
    ))
}

/// The replicas a workload object asks for.
#[must_use]
pub fn replicas_in(kind: &str, object: &Value) -> i32 {
    let field = if kind == "Job" {
        "/spec/parallelism"
    } else {
        "/spec/replicas"
    };
    object
        .pointer(field)
        .and_then(Value::as_i64)
        .and_then(|replicas| i32::try_from(replicas).ok())
        .unwrap_or(1)
}

/// Reads the target's replicas: `Ok(None)` for an unsupported kind or a missing workload.
///
/// # Errors
/// The API server's error, as text.
pub async fn target_replicas(
    client: &Client,
    namespace: &str,
    target: &TargetReference,
) -> Result<Option<i32>, String> {
    let Some(resource) = resource_of(&target.api_version, &target.kind) else {
        return Ok(None);
    };
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    let Some(object) = api
        .get_opt(&target.name)
        .await
        .map_err(|error| error.to_string())?
    else {
        return Ok(None);
    };
    Ok(Some(replicas_in(&target.kind, &object.data)))
}
