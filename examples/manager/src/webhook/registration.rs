//! Registering the manager's webhook configurations with the API server: written with server-side apply
//! while leading (caBundle included), removed at a clean shutdown if they still call this manager. While
//! leading, [`Registration::follow`] writes the caBundle again wherever it is (both configurations and the
//! CRDs' conversion webhook) when the served certificate's bundle changes, and every ten minutes in case
//! something else wrote an older one.

use std::fmt;
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use kube::core::ClusterResourceScope;
use kube::{Api, Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::watch;

use super::configuration::{self, FIELD_MANAGER, WebhookOptions};
use super::tls::ServingCertificate;
use super::validating_configuration;
use crate::crds;
use crate::leading::{LeadError, write_webhook_configuration};
use kruise_runtime::shutdown::Shutdown;

/// How often the leader writes the caBundles again although the bundle did not change.
const CA_BUNDLE_RESYNC: Duration = Duration::from_secs(600);

/// What the leader keeps written: both webhook configurations and (when the manager installs the CRDs)
/// the CRDs' conversion webhook, with the caBundle of the certificate being served.
#[derive(Clone, Debug)]
pub struct Registration {
    /// Where the webhooks are reached, failure policy, exclusions.
    pub webhook: WebhookOptions,
    /// The served certificate (its `ca_pem` is the caBundle).
    pub certificates: watch::Receiver<ServingCertificate>,
    /// Whether the CRDs' conversion caBundle is the manager's to write.
    pub conversion_crds: bool,
}

impl Registration {
    /// Writes both configurations with the current caBundle, retrying every 5 s until it works or
    /// `leading` ends, and the CRDs' conversion caBundle where it differs (a replica that starts leading
    /// may have installed the CRDs with an older one).
    ///
    /// # Errors
    /// A configuration still refused after `within` of retries
    /// ([`crate::leading::write_webhook_configuration`]).
    pub async fn write(
        &self,
        client: &Client,
        leading: &Shutdown,
        within: Duration,
    ) -> Result<(), LeadError> {
        let bundle = self.certificates.borrow().material.ca_pem.clone();
        let mutating =
            configuration::mutating_webhook_configuration(&self.webhook, bundle.as_bytes());
        let validating = validating_configuration::validating_webhook_configuration(
            &self.webhook,
            bundle.as_bytes(),
        );
        write_webhook_configuration(client, &mutating, leading, within).await?;
        write_webhook_configuration(client, &validating, leading, within).await?;
        if self.conversion_crds {
            crds::update_conversion_ca_bundle(client, &self.webhook.target, bundle.as_bytes())
                .await;
        }
        Ok(())
    }

    /// Until `leading` ends: when the caBundle changes (and every ten minutes), writes it into both
    /// configurations and the CRDs' conversion webhook. Failures are logged and retried at the next round.
    pub async fn follow(mut self, client: Client, leading: Shutdown) {
        loop {
            tokio::select! {
                changed = self.certificates.changed() => {
                    if changed.is_err() {
                        return;
                    }
                }
                () = tokio::time::sleep(CA_BUNDLE_RESYNC) => {}
                () = leading.clone().wait() => return,
            }
            let bundle = self
                .certificates
                .borrow_and_update()
                .material
                .ca_pem
                .clone();
            let mutating =
                configuration::mutating_webhook_configuration(&self.webhook, bundle.as_bytes());
            let validating = validating_configuration::validating_webhook_configuration(
                &self.webhook,
                bundle.as_bytes(),
            );
            log_failure(apply(&client, &mutating).await, &mutating);
            log_failure(apply(&client, &validating).await, &validating);
            if self.conversion_crds {
                crds::update_conversion_ca_bundle(&client, &self.webhook.target, bundle.as_bytes())
                    .await;
            }
        }
    }
}

fn log_failure<K: WebhookRegistration>(result: Result<(), kube::Error>, configuration: &K) {
    if let Err(error) = result {
        let kind = K::kind(&());
        let name = configuration.meta().name.as_deref().unwrap_or_default();
        tracing::warn!(%kind, %name, %error, "writing the caBundle failed; retrying later");
    }
}

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
