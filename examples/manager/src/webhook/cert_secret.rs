//! A serving certificate shared by every manager replica through a Secret (`kubernetes.io/tls`, with
//! `ca.crt` and the signing CA's `ca.key`): the first replica generates and creates it, the others read it,
//! so the caBundle written into the webhook configuration is valid whichever replica the Service picks.
//! Every replica checks it periodically ([`maintain`]): whichever finds a renewal due
//! ([`super::certificate_renewal`]) writes the renewed material with the `resourceVersion` it read, so
//! two replicas never overwrite each other blindly (the loser reads again and finds nothing left to do). A
//! Secret made for other host names is replaced the same way.

use chrono::{DateTime, Utc};
use kruise_runtime::actions::is_conflict;
use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};

use super::certificate_authority::{generate, renew};
use super::certificate_inspection::inspect;
use super::certificate_renewal::{Renewal, RenewalPolicy, decide};
use super::tls::{TlsError, TlsMaterial};

/// Annotation on the Secret listing the host names the certificate is valid for (comma-separated).
pub const HOSTS_ANNOTATION: &str = "kruise-rs.io/webhook-hosts";

/// Why the Secret could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CertSecretError {
    /// A call to the API server failed.
    #[error("webhook certificate Secret {namespace}/{name}: {source}")]
    Kube {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The failure.
        #[source]
        source: kube::Error,
    },
    /// Generating the certificate failed.
    #[error(transparent)]
    Tls(#[from] TlsError),
}

/// The Secret `namespace/name` and the host names its certificate must be valid for.
#[derive(Clone, Debug)]
pub struct CertSecret {
    /// Its namespace.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// The host names (or IPs) of the serving certificate.
    pub hosts: Vec<String>,
}

/// Reads the Secret and returns its material, after generating it (no Secret yet, or one that does not
/// fit) or renewing it when [`decide`] says so at `now`; what it generates or renews is written back
/// (create, or replace conditional on the `resourceVersion` read; on a conflict it reads again).
///
/// # Errors
/// API failures other than the races this resolves.
pub async fn maintain(
    client: &Client,
    secret: &CertSecret,
    now: DateTime<Utc>,
    policy: &RenewalPolicy,
) -> Result<TlsMaterial, CertSecretError> {
    let CertSecret {
        namespace,
        name,
        hosts,
    } = secret;
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let kube_error = |source| CertSecretError::Kube {
        namespace: namespace.clone(),
        name: name.clone(),
        source,
    };
    let wanted_hosts = hosts.join(",");
    for _attempt in 0..5 {
        let existing = api.get_opt(name).await.map_err(kube_error)?;
        let current = existing.as_ref().and_then(material_of);
        let renewal = match &current {
            Some(material) => {
                let hosts_fit = existing.as_ref().and_then(hosts_of) == Some(wanted_hosts.as_str());
                decide(now, &inspect(material, hosts_fit), policy)
            }
            None => Renewal::Regenerate,
        };
        let renewed = match (&current, renewal) {
            (Some(material), Renewal::Keep) => return Ok(material.clone()),
            (Some(material), renewal) => renew(material, renewal, hosts, now, policy)?,
            (None, _) => generate(hosts, now, policy)?,
        };
        let mut written = secret_of(namespace, name, &wanted_hosts, &renewed);
        let result = match existing {
            None => api.create(&PostParams::default(), &written).await,
            Some(old) => {
                written.metadata.resource_version = old.metadata.resource_version;
                api.replace(name, &PostParams::default(), &written).await
            }
        };
        match result {
            Ok(_) => {
                tracing::info!(secret = %format!("{namespace}/{name}"), hosts = %wanted_hosts, ?renewal, "wrote the webhook certificate");
                return Ok(renewed);
            }
            Err(error) if is_conflict(&error) => continue,
            Err(error) => return Err(kube_error(error)),
        }
    }
    // Five lost races in a row: someone else keeps writing it; use what is there now.
    let secret = api.get(name).await.map_err(kube_error)?;
    material_of(&secret)
        .filter(|_| hosts_of(&secret) == Some(wanted_hosts.as_str()))
        .ok_or_else(|| {
            kube_error(kube::Error::Service(
                format!("the Secret keeps changing and never fits hosts {wanted_hosts}").into(),
            ))
        })
}

fn hosts_of(secret: &Secret) -> Option<&str> {
    secret
        .metadata
        .annotations
        .as_ref()?
        .get(HOSTS_ANNOTATION)
        .map(String::as_str)
}

fn material_of(secret: &Secret) -> Option<TlsMaterial> {
    let data = secret.data.as_ref()?;
    let text = |key: &str| {
        data.get(key)
            .and_then(|bytes| String::from_utf8(bytes.0.clone()).ok())
    };
    Some(TlsMaterial {
        cert_pem: text("tls.crt")?,
        key_pem: text("tls.key")?,
        ca_pem: text("ca.crt")?,
        ca_key_pem: text("ca.key"),
    })
}

fn secret_of(namespace: &str, name: &str, hosts: &str, material: &TlsMaterial) -> Secret {
    let bytes = |text: &str| ByteString(text.as_bytes().to_vec());
    Secret {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(namespace.to_owned()),
            annotations: Some(BTreeMap::from([(
                HOSTS_ANNOTATION.to_owned(),
                hosts.to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        type_: Some("kubernetes.io/tls".to_owned()),
        data: Some(
            [
                ("tls.crt", Some(&material.cert_pem)),
                ("tls.key", Some(&material.key_pem)),
                ("ca.crt", Some(&material.ca_pem)),
                ("ca.key", material.ca_key_pem.as_ref()),
            ]
            .into_iter()
            .filter_map(|(key, value)| Some((key.to_owned(), bytes(value?))))
            .collect(),
        ),
        ..Secret::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_round_trip_with_their_hosts() {
        let material = TlsMaterial::generate(&["a.example".into()], Utc::now()).unwrap();
        let secret = secret_of("ns", "certs", "a.example", &material);
        assert_eq!(material_of(&secret).unwrap(), material);
        assert_eq!(hosts_of(&secret), Some("a.example"));
        assert!(material_of(&Secret::default()).is_none());
        assert_eq!(hosts_of(&Secret::default()), None);
    }

    #[test]
    fn secrets_of_older_managers_have_no_ca_key() {
        let mut material = TlsMaterial::generate(&["a.example".into()], Utc::now()).unwrap();
        material.ca_key_pem = None;
        let secret = secret_of("ns", "certs", "a.example", &material);
        assert!(!secret.data.as_ref().unwrap().contains_key("ca.key"));
        assert_eq!(material_of(&secret).unwrap().ca_key_pem, None);
    }
}
