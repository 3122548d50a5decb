//! A serving certificate shared by every manager replica through a Secret (`kubernetes.io/tls`, with
//! `ca.crt`): the first replica generates and creates it, the others read it, so the caBundle written into
//! the webhook configuration is valid whichever replica the Service picks. A Secret made for other host
//! names is replaced (with its `resourceVersion`, so two replicas never overwrite each other blindly).

use kruise_runtime::actions::is_conflict;
use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};

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

/// Reads the material from the Secret when it fits `hosts`; otherwise generates it and writes it.
///
/// # Errors
/// API failures other than the races this resolves (409 on create or replace: read again).
pub async fn load_or_create(
    client: &Client,
    namespace: &str,
    name: &str,
    hosts: &[String],
) -> Result<TlsMaterial, CertSecretError> {
    let api: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let kube_error = |source| CertSecretError::Kube {
        namespace: namespace.to_owned(),
        name: name.to_owned(),
        source,
    };
    let wanted_hosts = hosts.join(",");
    for _attempt in 0..5 {
        let existing = api.get_opt(name).await.map_err(kube_error)?;
        if let Some(secret) = &existing
            && let Some(material) = material_of(secret, &wanted_hosts)
        {
            return Ok(material);
        }
        let material = TlsMaterial::generate(hosts)?;
        let mut secret = secret_of(namespace, name, &wanted_hosts, &material);
        let result = match existing {
            None => api.create(&PostParams::default(), &secret).await,
            Some(old) => {
                secret.metadata.resource_version = old.metadata.resource_version;
                api.replace(name, &PostParams::default(), &secret).await
            }
        };
        match result {
            Ok(_) => {
                tracing::info!(secret = %format!("{namespace}/{name}"), hosts = %wanted_hosts, "wrote the webhook certificate");
                return Ok(material);
            }
            Err(error) if is_conflict(&error) => continue,
            Err(error) => return Err(kube_error(error)),
        }
    }
    // Five lost races in a row: someone else keeps writing it; use what is there now.
    let secret = api.get(name).await.map_err(kube_error)?;
    material_of(&secret, &wanted_hosts).ok_or_else(|| {
        kube_error(kube::Error::Service(
            format!("the Secret keeps changing and never fits hosts {wanted_hosts}").into(),
        ))
    })
}

fn material_of(secret: &Secret, wanted_hosts: &str) -> Option<TlsMaterial> {
    let hosts = secret
        .metadata
        .annotations
        .as_ref()?
        .get(HOSTS_ANNOTATION)?;
    if hosts != wanted_hosts {
        return None;
    }
    let data = secret.data.as_ref()?;
    let text = |key: &str| {
        data.get(key)
            .and_then(|bytes| String::from_utf8(bytes.0.clone()).ok())
    };
    Some(TlsMaterial {
        cert_pem: text("tls.crt")?,
        key_pem: text("tls.key")?,
        ca_pem: text("ca.crt")?,
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
        data: Some(BTreeMap::from([
            ("tls.crt".to_owned(), bytes(&material.cert_pem)),
            ("tls.key".to_owned(), bytes(&material.key_pem)),
            ("ca.crt".to_owned(), bytes(&material.ca_pem)),
        ])),
        ..Secret::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_round_trip_and_other_hosts_do_not_fit() {
        let material = TlsMaterial::generate(&["a.example".into()]).unwrap();
        let secret = secret_of("ns", "certs", "a.example", &material);
        let read = material_of(&secret, "a.example").unwrap();
        assert_eq!(
            (read.cert_pem, read.ca_pem),
            (material.cert_pem, material.ca_pem)
        );
        assert!(material_of(&secret, "b.example").is_none());
        assert!(material_of(&Secret::default(), "a.example").is_none());
    }
}
