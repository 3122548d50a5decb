//! Registering the manager's webhook configurations with the API server: written with server-side apply
//! while leading (caBundle included), removed at a clean shutdown if they still call this manager.

use std::fmt;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use kube::core::ClusterResourceScope;
use kube::{Api, Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::configuration::FIELD_MANAGER;

/// A webhook configuration object the manager writes.
pub trait WebhookRegistration:
    Resource<DynamicType = (), Scope = ClusterResourceScope>
    + Clone
    + Serialize
    + DeserializeOwned
    + fmt::Debug
{
    /// The URLs its webhooks call (webhooks behind a Service have none).
    fn urls(&self) -> Vec<&str>;
}

impl WebhookRegistration for MutatingWebhookConfiguration {
    fn urls(&self) -> Vec<&str> {
        self.webhooks
            .iter()
            .flatten()
            .filter_map(|webhook| webhook.client_config.url.as_deref())
            .collect()
    }
}

impl WebhookRegistration for ValidatingWebhookConfiguration {
    fn urls(&self) -> Vec<&str> {
        self.webhooks
            .iter()
            .flatten()
            .filter_map(|webhook| webhook.client_config.url.as_deref())
            .collect()
    }
}

/// Writes `configuration` (server-side apply, field manager `kruise-manager`, forced).
///
/// # Errors
/// The API server refused it.
pub async fn apply<K: WebhookRegistration>(
    client: &Client,
    configuration: &K,
) -> Result<(), kube::Error> {
    let api: Api<K> = Api::all(client.clone());
    let mut object = configuration.clone();
    object.meta_mut().managed_fields = None;
    let name = object.meta().name.clone().unwrap_or_default();
    let mut value = serde_json::to_value(&object).map_err(kube::Error::SerdeError)?;
    if let Some(fields) = value.as_object_mut() {
        fields.insert("apiVersion".into(), K::api_version(&()).into());
        fields.insert("kind".into(), K::kind(&()).into());
    }
    api.patch(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&value),
    )
    .await?;
    Ok(())
}

/// Deletes the configuration `name` of kind `K` if one of its webhooks still calls `url` (guarded by its
/// `resourceVersion`, so a configuration another manager has just rewritten stays). Failures are logged.
pub async fn remove_if_calling<K: WebhookRegistration>(client: &Client, name: &str, url: &str) {
    let api: Api<K> = Api::all(client.clone());
    let kind = K::kind(&());
    let current = match api.get_opt(name).await {
        Ok(Some(current)) => current,
        Ok(None) => return,
        Err(error) => {
            tracing::warn!(%kind, %name, %error, "cannot read the webhook configuration to remove it");
            return;
        }
    };
    if !current.urls().contains(&url) {
        return;
    }
    let params = DeleteParams {
        preconditions: Some(Preconditions {
            uid: current.meta().uid.clone(),
            resource_version: current.meta().resource_version.clone(),
        }),
        ..DeleteParams::default()
    };
    match api.delete(name, &params).await {
        Ok(_) => {
            tracing::info!(%kind, %name, %url, "removed the webhook configuration calling this manager");
        }
        Err(error) => {
            tracing::warn!(%kind, %name, %error, "removing the webhook configuration failed");
        }
    }
}
