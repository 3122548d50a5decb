//! The `spec` of Kubernetes StatefulSets and Deployments, optional up to Kubernetes 1.36 and required from
//! 1.37, read and built the same way whichever version the binary picks.

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, StatefulSet, StatefulSetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

k8s_openapi::k8s_if_le_1_36! {
    /// The StatefulSet's spec.
    pub(crate) fn stateful_set_spec(set: &StatefulSet) -> Option<&StatefulSetSpec> {
        set.spec.as_ref()
    }
    /// The StatefulSet's spec, to change.
    pub(crate) fn stateful_set_spec_mut(set: &mut StatefulSet) -> Option<&mut StatefulSetSpec> {
        set.spec.as_mut()
    }
    /// A StatefulSet of `metadata` and `spec`.
    pub(crate) fn stateful_set(metadata: ObjectMeta, spec: StatefulSetSpec) -> StatefulSet {
        StatefulSet { metadata, spec: Some(spec), status: None }
    }
    /// The Deployment's spec.
    pub(crate) fn deployment_spec(deployment: &Deployment) -> Option<&DeploymentSpec> {
        deployment.spec.as_ref()
    }
    /// A Deployment of `metadata` and `spec`.
    pub(crate) fn deployment(metadata: ObjectMeta, spec: DeploymentSpec) -> Deployment {
        Deployment { metadata, spec: Some(spec), status: None }
    }
}

k8s_openapi::k8s_if_ge_1_37! {
    /// The StatefulSet's spec.
    pub(crate) fn stateful_set_spec(set: &StatefulSet) -> Option<&StatefulSetSpec> {
        Some(&set.spec)
    }
    /// The StatefulSet's spec, to change.
    pub(crate) fn stateful_set_spec_mut(set: &mut StatefulSet) -> Option<&mut StatefulSetSpec> {
        Some(&mut set.spec)
    }
    /// A StatefulSet of `metadata` and `spec`.
    pub(crate) fn stateful_set(metadata: ObjectMeta, spec: StatefulSetSpec) -> StatefulSet {
        StatefulSet { metadata, spec, status: None }
    }
    /// The Deployment's spec.
    pub(crate) fn deployment_spec(deployment: &Deployment) -> Option<&DeploymentSpec> {
        Some(&deployment.spec)
    }
    /// A Deployment of `metadata` and `spec`.
    pub(crate) fn deployment(metadata: ObjectMeta, spec: DeploymentSpec) -> Deployment {
        Deployment { metadata, spec, status: None }
    }
}
