//! Installs (or updates) the CustomResourceDefinitions kruise-manager serves, from `kruise-api`, with
//! server-side apply (field manager `kruise-manager`, forced: the manager owns its CRDs), then waits until
//! the API server reports each of them `Established`. Each CRD carries the version of the types it came from
//! (`kruise_api::schema_version::ANNOTATION`); a CRD written by a newer version is left as it is (with a
//! warning), so an older replica starting during a rolling upgrade does not prune the newer fields.
//!
//! With the webhook enabled the CRDs of kinds with two versions use the `Webhook` conversion strategy,
//! calling the manager's `/convert` ([`conversion_strategy`]); a manager outside the cluster puts them
//! back to `None` when it stops ([`reset_conversion_if_pointing_at`]), so the kinds stay readable.

use std::time::Duration;

use k8s_openapi::ByteString;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, WebhookClientConfig,
};
use kruise_api::crd::{ConversionStrategy, CrdOptions, all};
use kruise_api::schema_version::{self, Install};
use kube::api::{Patch, PatchParams};
use kube::{Api, Client, ResourceExt};

use crate::webhook::configuration::{ClientTarget, FIELD_MANAGER};
use crate::webhook::server::CONVERT_PATH;

/// The conversion strategy that sends ConversionReviews to the manager: `url` when the pod webhook is
/// reached by URL (the conversion URL is derived from it), else the webhook Service at `/convert`.
#[must_use]
pub fn conversion_strategy(target: &ClientTarget, ca_bundle: &[u8]) -> ConversionStrategy {
    match target {
        ClientTarget::Url(url) => ConversionStrategy::Webhook(WebhookClientConfig {
            ca_bundle: Some(ByteString(ca_bundle.to_vec())),
            service: None,
            url: Some(super::options::conversion_url(url)),
        }),
        ClientTarget::Service {
            namespace,
            name,
            port,
        } => ConversionStrategy::service(namespace, name, CONVERT_PATH, *port, ca_bundle.to_vec()),
    }
}

/// Writes `ca_bundle` (PEM) into the conversion webhook of every CRD of ours whose conversion calls
/// `target` (a merge patch of that one field, only where it differs; CRDs that do not call `target` are
/// left alone). Failures are logged.
pub async fn update_conversion_ca_bundle(client: &Client, target: &ClientTarget, ca_bundle: &[u8]) {
    let ConversionStrategy::Webhook(wanted) = conversion_strategy(target, ca_bundle) else {
        return;
    };
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let mut updated = 0_usize;
    for crd in &all(&CrdOptions::default()) {
        let name = crd.name_any();
        let current = match api.get_opt(&name).await {
            Ok(Some(current)) => current,
            Ok(None) => continue,
            Err(error) => {
                tracing::warn!(%error, crd = %name, "cannot read the CRD to update its conversion caBundle");
                continue;
            }
        };
        let Some(config) = current
            .spec
            .conversion
            .and_then(|conversion| conversion.webhook)
            .and_then(|webhook| webhook.client_config)
        else {
            continue;
        };
        let same_service =
            |a: &WebhookClientConfig, b: &WebhookClientConfig| match (&a.service, &b.service) {
                (Some(a), Some(b)) => {
                    (&a.namespace, &a.name, &a.path) == (&b.namespace, &b.name, &b.path)
                }
                (None, None) => true,
                _ => false,
            };
        if config.url != wanted.url
            || !same_service(&config, &wanted)
            || config.ca_bundle == wanted.ca_bundle
        {
            continue;
        }
        let patch = serde_json::json!({
            "spec": {"conversion": {"webhook": {"clientConfig": {"caBundle": wanted.ca_bundle}}}},
        });
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_owned()),
            ..PatchParams::default()
        };
        match api.patch(&name, &params, &Patch::Merge(&patch)).await {
            Ok(_) => updated += 1,
            Err(error) => {
                tracing::warn!(%error, crd = %name, "updating the conversion caBundle failed");
            }
        }
    }
    if updated > 0 {
        tracing::info!(count = updated, "updated the CRDs' conversion caBundle");
    }
}

/// Sets `spec.conversion` back to `strategy: None` on every CRD whose conversion webhook calls `url`
/// (a manager outside the cluster that stops), so objects stay readable without it. Failures are logged.
pub async fn reset_conversion_if_pointing_at(client: &Client, url: &str) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crds = all(&CrdOptions::default());
    let mut reset = 0_usize;
    for crd in &crds {
        let name = crd.name_any();
        let current = match api.get_opt(&name).await {
            Ok(Some(current)) => current,
            Ok(None) => continue,
            Err(error) => {
                tracing::warn!(%error, crd = %name, "cannot read the CRD to reset its conversion");
                continue;
            }
        };
        let ours = current
            .spec
            .conversion
            .as_ref()
            .and_then(|conversion| conversion.webhook.as_ref())
            .and_then(|webhook| webhook.client_config.as_ref())
            .and_then(|config| config.url.as_deref())
            == Some(url);
        if !ours {
            continue;
        }
        let patch = serde_json::json!({
            "metadata": {"resourceVersion": current.metadata.resource_version},
            "spec": {"conversion": {"strategy": "None", "webhook": null}},
        });
        match api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => reset += 1,
            Err(error) => tracing::warn!(%error, crd = %name, "resetting the conversion failed"),
        }
    }
    if reset > 0 {
        tracing::info!(count = reset, %url, "set the CRD conversion back to None");
    }
}

/// Why the CRDs could not be installed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CrdError {
    /// The API server refused a CRD.
    #[error("applying CRD {name}: {source}")]
    Apply {
        /// The CRD.
        name: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
    /// A CRD did not become Established in time.
    #[error("CRD {name} not Established after {timeout:?}: {reason}")]
    NotEstablished {
        /// The CRD.
        name: String,
        /// How long was waited.
        timeout: Duration,
        /// The last condition seen.
        reason: String,
    },
}

/// Applies every CRD of `options` and waits (at most `timeout`) until all are Established. Returns their
/// names.
///
/// # Errors
/// A CRD that the server refuses or that does not become Established.
pub async fn install(
    client: &Client,
    options: &CrdOptions,
    timeout: Duration,
) -> Result<Vec<String>, CrdError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let crds = all(options);
    let mut names = Vec::with_capacity(crds.len());
    for crd in &crds {
        let name = crd.name_any();
        // The schema version of what is installed: a GET by name (the ClusterRole grants `get` on each of
        // its own CRDs by name only, so no list of every CRD in the cluster).
        let installed_version = api
            .get_metadata_opt(&name)
            .await
            .map_err(|source| CrdError::Apply {
                name: name.clone(),
                source,
            })?
            .and_then(|installed| {
                installed
                    .annotations()
                    .get(schema_version::ANNOTATION)
                    .cloned()
            });
        if let Install::KeepNewer { installed } =
            schema_version::decide(installed_version.as_deref(), schema_version::CURRENT)
        {
            tracing::warn!(
                crd = %name,
                installed = %installed,
                ours = schema_version::CURRENT,
                "the CRD was written by a newer kruise-manager; leaving its schema as it is"
            );
            names.push(name);
            continue;
        }
        let mut crd = crd.clone();
        crd.annotations_mut().insert(
            schema_version::ANNOTATION.to_owned(),
            schema_version::CURRENT.to_owned(),
        );
        let mut object = serde_json::to_value(&crd).map_err(|error| CrdError::Apply {
            name: name.clone(),
            source: kube::Error::SerdeError(error),
        })?;
        if let Some(map) = object.as_object_mut() {
            map.insert("apiVersion".into(), "apiextensions.k8s.io/v1".into());
            map.insert("kind".into(), "CustomResourceDefinition".into());
            map.remove("status");
        }
        api.patch(&name, &params, &Patch::Apply(&object))
            .await
            .map_err(|source| CrdError::Apply {
                name: name.clone(),
                source,
            })?;
        names.push(name);
    }
    let deadline = tokio::time::Instant::now() + timeout;
    for name in &names {
        wait_established(&api, name, deadline, timeout).await?;
    }
    tracing::info!(count = names.len(), "CRDs installed and Established");
    Ok(names)
}

async fn wait_established(
    api: &Api<CustomResourceDefinition>,
    name: &str,
    deadline: tokio::time::Instant,
    timeout: Duration,
) -> Result<(), CrdError> {
    let mut reason = String::from("no status yet");
    loop {
        match api.get_opt(name).await {
            Ok(Some(crd)) => {
                let conditions = crd
                    .status
                    .and_then(|status| status.conditions)
                    .unwrap_or_default();
                if conditions
                    .iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
                {
                    return Ok(());
                }
                if let Some(condition) = conditions.iter().find(|c| c.status != "True") {
                    reason = format!(
                        "{}={}: {}",
                        condition.type_,
                        condition.status,
                        condition.message.as_deref().unwrap_or_default()
                    );
                }
            }
            Ok(None) => reason = "not found".into(),
            Err(error) => reason = error.to_string(),
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(CrdError::NotEstablished {
                name: name.to_owned(),
                timeout,
                reason,
            });
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
