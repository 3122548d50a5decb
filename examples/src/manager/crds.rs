//! Installs (or updates) the CustomResourceDefinitions kruise-manager serves, from `kruise-api`, with
//! server-side apply (field manager `kruise-manager`, forced: the manager owns its CRDs), then waits until
//! the API server reports each of them `Established`.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kruise_api::crd::{CrdOptions, all};
use kube::api::{Patch, PatchParams};
use kube::{Api, Client, ResourceExt};

use crate::webhook::configuration::FIELD_MANAGER;

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
        let mut object = serde_json::to_value(crd).map_err(|error| CrdError::Apply {
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
