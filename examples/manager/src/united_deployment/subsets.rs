//! The subset workloads of a UnitedDeployment in the cluster: read from the informers' owner indexes
//! (StatefulSets, Deployments) or listed (CloneSets, Advanced StatefulSets), and created, replaced and
//! deleted through the API of their kind.

use std::fmt::Debug;

use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use kruise_api::apps::v1beta1::{CloneSet, StatefulSet as AdvancedStatefulSet};
use kruise_api::keys::united_deployment::SUBSET_NAME_LABEL;
use kruise_runtime::Indexed;
use kruise_runtime::actions::{self, ActionError};
use kruise_schedule::united_deployment::workload::{SubsetWorkload, WorkloadKind};
use kube::api::{DeleteParams, ListParams, PropagationPolicy};
use kube::{Api, Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::OWNER;

/// Where the subset workloads of a UnitedDeployment are found.
pub struct SubsetSources<'a> {
    /// The client CloneSets and Advanced StatefulSets are listed with.
    pub client: &'a Client,
    /// Kubernetes StatefulSets by controlling UnitedDeployment UID.
    pub statefulsets: &'a Indexed<StatefulSet>,
    /// Kubernetes Deployments by controlling UnitedDeployment UID.
    pub deployments: &'a Indexed<Deployment>,
}

impl SubsetSources<'_> {
    /// Every workload the UnitedDeployment `uid` in `namespace` controls, of any kind: StatefulSets and
    /// Deployments from the informers, CloneSets and Advanced StatefulSets listed from the API server
    /// (label `apps.kruise.io/subset-name`).
    ///
    /// # Errors
    /// A list fails.
    pub async fn controlled_by(
        &self,
        uid: &str,
        namespace: &str,
    ) -> Result<Vec<SubsetWorkload>, ActionError> {
        fn here<K: Resource>(object: &K, namespace: &str) -> bool {
            object.meta().namespace.as_deref() == Some(namespace)
        }
        let clonesets = list_owned::<CloneSet>(self.client, namespace, uid).await?;
        let advanced = list_owned::<AdvancedStatefulSet>(self.client, namespace, uid).await?;
        let statefulsets = self.statefulsets.get(uid);
        let deployments = self.deployments.get(uid);
        let workloads = clonesets
            .into_iter()
            .map(|set| SubsetWorkload::CloneSet(Box::new(set)))
            .chain(
                advanced
                    .into_iter()
                    .map(|set| SubsetWorkload::AdvancedStatefulSet(Box::new(set))),
            )
            .chain(
                statefulsets
                    .iter()
                    .filter(|set| here(set.as_ref(), namespace))
                    .map(|set| SubsetWorkload::StatefulSet(Box::new((**set).clone()))),
            )
            .chain(
                deployments
                    .iter()
                    .filter(|deployment| here(deployment.as_ref(), namespace))
                    .map(|deployment| SubsetWorkload::Deployment(Box::new((**deployment).clone()))),
            )
            .collect();
        Ok(workloads)
    }
}

/// The objects of `K` in `namespace` with a subset label whose controller is the UnitedDeployment `uid`.
async fn list_owned<K>(client: &Client, namespace: &str, uid: &str) -> Result<Vec<K>, ActionError>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Debug,
{
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    let listed = api
        .list(&ListParams::default().labels(SUBSET_NAME_LABEL))
        .await
        .map_err(|error| {
            ActionError::from_kube(format!("{namespace}/{}", K::plural(&())), error)
        })?;
    Ok(listed
        .items
        .into_iter()
        .filter(|object| {
            OWNER
                .controller_of(object)
                .is_some_and(|(_, owner)| owner == uid)
        })
        .collect())
}

/// Creates `workload` in `namespace`; returns the name the API server gave it.
///
/// # Errors
/// See [`ActionError`].
pub async fn create(
    client: &Client,
    namespace: &str,
    workload: &SubsetWorkload,
) -> Result<String, ActionError> {
    write(client, namespace, workload, Write::Create).await
}

/// Replaces `workload` (conditional on the `resourceVersion` it was read at).
///
/// # Errors
/// See [`ActionError`].
pub async fn replace(
    client: &Client,
    namespace: &str,
    workload: &SubsetWorkload,
) -> Result<(), ActionError> {
    write(client, namespace, workload, Write::Replace)
        .await
        .map(|_| ())
}

/// How a subset workload is written.
#[derive(Clone, Copy, Debug)]
enum Write {
    Create,
    Replace,
}

/// Writes `workload` through the API of its kind; returns its name as the API server answered.
async fn write(
    client: &Client,
    namespace: &str,
    workload: &SubsetWorkload,
    how: Write,
) -> Result<String, ActionError> {
    match workload {
        SubsetWorkload::CloneSet(set) => write_as(client, namespace, set.as_ref(), how).await,
        SubsetWorkload::AdvancedStatefulSet(set) => {
            write_as(client, namespace, set.as_ref(), how).await
        }
        SubsetWorkload::StatefulSet(set) => write_as(client, namespace, set.as_ref(), how).await,
        SubsetWorkload::Deployment(deployment) => {
            write_as(client, namespace, deployment.as_ref(), how).await
        }
    }
}

/// Deletes the workload `name` of `kind` in the background (its pods go with it); a missing one counts
/// as deleted.
///
/// # Errors
/// See [`ActionError`].
pub async fn delete(
    client: &Client,
    namespace: &str,
    kind: WorkloadKind,
    name: &str,
) -> Result<(), ActionError> {
    match kind {
        WorkloadKind::CloneSet => delete_as::<CloneSet>(client, namespace, name).await,
        WorkloadKind::AdvancedStatefulSet => {
            delete_as::<AdvancedStatefulSet>(client, namespace, name).await
        }
        WorkloadKind::StatefulSet => delete_as::<StatefulSet>(client, namespace, name).await,
        WorkloadKind::Deployment => delete_as::<Deployment>(client, namespace, name).await,
    }
}

async fn write_as<K>(
    client: &Client,
    namespace: &str,
    object: &K,
    how: Write,
) -> Result<String, ActionError>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Serialize
        + Debug,
{
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    let written = match how {
        Write::Create => actions::create(&api, object).await?,
        Write::Replace => actions::replace(&api, object).await?,
    };
    Ok(written.name_any())
}

async fn delete_as<K>(client: &Client, namespace: &str, name: &str) -> Result<(), ActionError>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + DeserializeOwned
        + Debug,
{
    let api: Api<K> = Api::namespaced(client.clone(), namespace);
    let params = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        ..DeleteParams::default()
    };
    match api.delete(name, &params).await {
        Ok(_) => Ok(()),
        Err(error) => match ActionError::from_kube(format!("{namespace}/{name}"), error) {
            ActionError::NotFound { .. } => Ok(()),
            other => Err(other),
        },
    }
}
