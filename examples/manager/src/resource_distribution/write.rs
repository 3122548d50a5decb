//! Carrying out one namespace's decision: create, replace or delete the copy. Each write names the object
//! (`Secret ns/name`) and the API server's answer; a failure becomes a [`Failure`] of the matching
//! condition type instead of ending the reconcile, so one bad namespace does not hold up the others.

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kruise_api::apps::v1alpha1::{ResourceDistribution, ResourceDistributionConditionType as Type};
use kruise_runtime::actions::{is_conflict, is_not_found};
use kruise_schedule::resource_distribution::copy::{CopyDecision, CopyMeta, copy_object, decide};
use kruise_schedule::resource_distribution::status::Failure;
use kube::api::{DeleteParams, PostParams, Preconditions};
use kube::core::{ApiResource, DynamicObject};
use kube::{Api, Client};

/// What one namespace's write came to.
#[derive(Debug)]
pub(super) enum Outcome {
    /// Nothing to do, or done.
    Done,
    /// The cluster moved on since the observation (a copy appeared or changed): look again soon.
    Stale,
    /// It failed.
    Failed(Failure),
}

/// The resource to write: its kind and name, and the distributor's hash of it.
pub(super) struct Source<'a> {
    pub(super) distributor: &'a ResourceDistribution,
    pub(super) distributor_name: &'a str,
    pub(super) kind: &'a str,
    pub(super) name: &'a str,
    pub(super) hash: &'a str,
}

impl Source<'_> {
    fn api(&self, client: &Client, namespace: &str) -> Api<DynamicObject> {
        let resource = if self.kind == "Secret" {
            ApiResource::erase::<Secret>(&())
        } else {
            ApiResource::erase::<ConfigMap>(&())
        };
        Api::namespaced_with(client.clone(), namespace, &resource)
    }

    fn subject(&self, namespace: &str) -> String {
        format!("{} {namespace}/{}", self.kind, self.name)
    }

    fn conflict(&self, namespace: &str, existing: CopyMeta<'_>) -> Failure {
        let from = existing.from.map_or_else(
            || "no kruise.io/resourcedistribution.resource.from annotation".to_owned(),
            |from| format!("kruise.io/resourcedistribution.resource.from={from:?}"),
        );
        Failure::new(
            namespace,
            Type::ConflictOccurred,
            format!(
                "{} exists and was not distributed by ResourceDistribution {} ({from})",
                self.subject(namespace),
                self.distributor_name
            ),
        )
    }

    /// The copy for `namespace` as a dynamic object (with `resource_version` for a replace).
    fn object(
        &self,
        namespace: &str,
        resource_version: Option<String>,
    ) -> Result<DynamicObject, String> {
        let value = copy_object(self.distributor, namespace, self.hash)
            .map_err(|error| error.to_string())?;
        let mut object: DynamicObject = serde_json::from_value(value)
            .map_err(|error| format!("spec.resource is not an object: {error}"))?;
        object.metadata.resource_version = resource_version;
        Ok(object)
    }
}

/// Decides and writes for `namespace`, whose object of the distributed kind and name is `existing`.
pub(super) async fn sync_namespace(
    client: &Client,
    source: &Source<'_>,
    namespace: &str,
    targeted: bool,
    existing: Option<&ObjectMeta>,
) -> Outcome {
    let meta = existing.map(CopyMeta::of);
    match decide(source.distributor_name, targeted, meta, source.hash) {
        CopyDecision::Unchanged | CopyDecision::Leave => Outcome::Done,
        CopyDecision::Conflict => {
            Outcome::Failed(source.conflict(namespace, meta.unwrap_or_default()))
        }
        CopyDecision::Create => create(client, source, namespace).await,
        CopyDecision::Update => {
            let version = existing.and_then(|meta| meta.resource_version.clone());
            replace(client, source, namespace, version).await
        }
        CopyDecision::Delete => {
            let uid = existing.and_then(|meta| meta.uid.clone());
            delete(client, source, namespace, uid).await
        }
    }
}

async fn create(client: &Client, source: &Source<'_>, namespace: &str) -> Outcome {
    let failed = |message: String| {
        Outcome::Failed(Failure::new(
            namespace,
            Type::CreateResourceFailed,
            format!("creating {}: {message}", source.subject(namespace)),
        ))
    };
    let object = match source.object(namespace, None) {
        Ok(object) => object,
        Err(message) => return failed(message),
    };
    let api = source.api(client, namespace);
    match api.create(&PostParams::default(), &object).await {
        Ok(_) => {
            tracing::info!(distributor = %source.distributor_name, object = %source.subject(namespace), "created the copy");
            Outcome::Done
        }
        // It exists after all (the metadata watch had not told yet): judge what is there.
        Err(error) if is_conflict(&error) => match api.get_metadata_opt(source.name).await {
            Ok(Some(existing)) => {
                let meta = CopyMeta::of(&existing.metadata);
                if meta.is_from(source.distributor_name) {
                    Outcome::Stale
                } else {
                    Outcome::Failed(source.conflict(namespace, meta))
                }
            }
            Ok(None) => Outcome::Stale,
            Err(error) => Outcome::Failed(Failure::new(
                namespace,
                Type::GetResourceFailed,
                format!("reading {}: {error}", source.subject(namespace)),
            )),
        },
        Err(error) if is_not_found(&error) => Outcome::Stale,
        Err(error) => failed(error.to_string()),
    }
}

async fn replace(
    client: &Client,
    source: &Source<'_>,
    namespace: &str,
    resource_version: Option<String>,
) -> Outcome {
    let failed = |message: String| {
        Outcome::Failed(Failure::new(
            namespace,
            Type::UpdateResourceFailed,
            format!("replacing {}: {message}", source.subject(namespace)),
        ))
    };
    let object = match source.object(namespace, resource_version) {
        Ok(object) => object,
        Err(message) => return failed(message),
    };
    let api = source.api(client, namespace);
    match api
        .replace(source.name, &PostParams::default(), &object)
        .await
    {
        Ok(_) => {
            tracing::info!(distributor = %source.distributor_name, object = %source.subject(namespace), "updated the copy");
            Outcome::Done
        }
        Err(error) if is_conflict(&error) || is_not_found(&error) => Outcome::Stale,
        Err(error) => failed(error.to_string()),
    }
}

async fn delete(
    client: &Client,
    source: &Source<'_>,
    namespace: &str,
    uid: Option<String>,
) -> Outcome {
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid,
            resource_version: None,
        }),
        ..DeleteParams::default()
    };
    match source
        .api(client, namespace)
        .delete(source.name, &params)
        .await
    {
        Ok(_) => {
            tracing::info!(distributor = %source.distributor_name, object = %source.subject(namespace), "deleted the copy from a namespace no longer targeted");
            Outcome::Done
        }
        Err(error) if is_not_found(&error) => Outcome::Done,
        Err(error) if is_conflict(&error) => Outcome::Stale,
        Err(error) => Outcome::Failed(Failure::new(
            namespace,
            Type::DeleteResourceFailed,
            format!("deleting {}: {error}", source.subject(namespace)),
        )),
    }
}
