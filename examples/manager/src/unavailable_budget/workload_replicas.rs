//! The replicas of a budget's `targetRef`, read from the workload's `scale` subresource (so any kind with
//! one works). The five kinds upstream names (CloneSet, Advanced StatefulSet, Deployment, ReplicaSet,
//! StatefulSet) are known here; any other kind is looked up in the API server's discovery.

use kruise_api::policy::v1beta1::TargetReference;
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::{Api, Client};

use super::controller::ReconcileError;
use crate::actions::{ActionError, is_not_found};

/// The workload's `spec.replicas` from its scale subresource; `None` when the workload does not exist.
///
/// # Errors
/// The reference does not name an `apiVersion`, kind and name ([`ReconcileError::InvalidTarget`]), or
/// discovery or the read failed.
pub async fn workload_replicas(
    client: &Client,
    budget: &str,
    namespace: &str,
    target: &TargetReference,
) -> Result<Option<i32>, ReconcileError> {
    let subject = format!(
        "{} {namespace}/{} ({})",
        target.kind, target.name, target.api_version
    );
    let (group, version) = match target.api_version.rsplit_once('/') {
        Some((group, version)) => (group, version),
        None => ("", target.api_version.as_str()),
    };
    if version.is_empty() || target.kind.is_empty() || target.name.is_empty() {
        return Err(ReconcileError::InvalidTarget {
            budget: budget.to_owned(),
            value: format!(
                "apiVersion {:?}, kind {:?}, name {:?}",
                target.api_version, target.kind, target.name
            ),
        });
    }
    let gvk = GroupVersionKind::gvk(group, version, &target.kind);
    let resource = match known_plural(group, &target.kind) {
        Some(plural) => ApiResource::from_gvk_with_plural(&gvk, plural),
        None => kube::discovery::pinned_kind(client, &gvk)
            .await
            .map(|(resource, _)| resource)
            .map_err(|source| ActionError::Api {
                object: subject.clone(),
                source,
            })?,
    };
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    match api.get_scale(&target.name).await {
        Ok(scale) => Ok(Some(
            scale
                .spec
                .and_then(|spec| spec.replicas)
                .unwrap_or_default(),
        )),
        Err(error) if is_not_found(&error) => Ok(None),
        Err(source) => Err(ActionError::Api {
            object: subject,
            source,
        }
        .into()),
    }
}

/// The plural of the kinds upstream's budget knows.
fn known_plural(group: &str, kind: &str) -> Option<&'static str> {
    match (group, kind) {
        ("apps.kruise.io", "CloneSet") => Some("clonesets"),
        ("apps.kruise.io" | "apps", "StatefulSet") => Some("statefulsets"),
        ("apps", "Deployment") => Some("deployments"),
        ("apps", "ReplicaSet") => Some("replicasets"),
        _ => None,
    }
}
