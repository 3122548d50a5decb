//! The webhook's serving certificate: generated (a private CA and a serving certificate for the
//! webhook's host names and IP addresses, see [`super::certificate_authority`]) or read from PEM files,
//! and the rustls server configuration.
//!
//! ```
//! use kruise_manager::webhook::tls::{ServingCertificate, TlsMaterial};
//!
//! let hosts = ["127.0.0.1".into(), "kruise-webhook.kruise-system.svc".into()];
//! let material = TlsMaterial::generate(&hosts, chrono::Utc::now()).unwrap();
//! assert!(material.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
//! ServingCertificate::new(material).unwrap();
//! ```

use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// Generating a key or certificate failed.
    #[error("generating the serving certificate: {0}")]
    Generate(#[from] rcgen::Error),
    /// A PEM file could not be read.
    #[error("reading {path}: {message}")]
    Read {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The certificate or key was refused by rustls.
    #[error("TLS configuration: {0}")]
    Rustls(#[from] rustls::Error),
    /// The material cannot be renewed.
    #[error("renewing the serving certificate: {0}")]
    Renew(String),
}

/// A serving certificate chain, its key and the CA bundle that clients trust (all PEM).
#[derive(Clone, PartialEq, Eq)]
pub struct TlsMaterial {
    /// The serving certificate (first) and its chain.
    pub cert_pem: String,
    /// The private key of the serving certificate.
    pub key_pem: String,
    /// What goes into `caBundle`: the CA that signed the serving certificate (generated material: the
    /// signing CA first, then the CAs before it that are still valid).
    pub ca_pem: String,
    /// The key of the first CA of `ca_pem`, which signs renewed serving certificates (generated material
    /// only).
    pub ca_key_pem: Option<String>,
}

impl std::fmt::Debug for TlsMaterial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsMaterial")
            .field("cert_pem", &self.cert_pem)
            .field("key_pem", &"<redacted>")
            .field("ca_pem", &self.ca_pem)
            .field(
                "ca_key_pem",
                &self.ca_key_pem.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

impl TlsMaterial {
    /// A fresh CA and a serving certificate for `hosts` (DNS names or IP addresses), valid from `now` for
    /// the default [`RenewalPolicy`](super::certificate_renewal::RenewalPolicy).
    ///
    /// # Errors
    /// A host name rcgen refuses, or a key generation failure.
    pub fn generate(hosts: &[String], now: DateTime<Utc>) -> Result<Self, TlsError> {
        super::certificate_authority::generate(hosts, now, &Default::default())
    }

    /// Reads the certificate and key files; the CA bundle is `ca_file`, or the certificate file itself
    /// when none is given (a self-signed certificate).
    ///
    /// # Errors
    /// A file that cannot be read.
    pub fn read(
        cert_file: &Path,
        key_file: &Path,
        ca_file: Option<&Path>,
    ) -> Result<Self, TlsError> {
        let read = |path: &Path| {
            std::fs::read_to_string(path).map_err(|error| TlsError::Read {
                path: path.display().to_string(),
                message: error.to_string(),
            })
        };
        let cert_pem = read(cert_file)?;
        let ca_pem = match ca_file {
            Some(path) => read(path)?,
            None => cert_pem.clone(),
        };
        Ok(Self {
            cert_pem,
            key_pem: read(key_file)?,
            ca_pem,
            ca_key_pem: None,
        })
    }
}

/// Material that rustls accepted, with its server configuration: what the webhook server serves.
#[derive(Clone, Debug)]
pub struct ServingCertificate {
    /// The PEM material.
    pub material: TlsMaterial,
    /// The rustls configuration serving it.
    pub config: Arc<ServerConfig>,
}

impl ServingCertificate {
    /// Checks `material` by building its server configuration.
    ///
    /// # Errors
    /// See [`server_config`].
    pub fn new(material: TlsMaterial) -> Result<Self, TlsError> {
        let config = server_config(&material)?;
        Ok(Self { material, config })
    }
}

/// A rustls server configuration (ring provider, TLS 1.2 and 1.3, HTTP/1.1) for the material.
///
/// # Errors
/// The PEM does not hold a certificate or a key, or they do not match.
pub fn server_config(material: &TlsMaterial) -> Result<Arc<ServerConfig>, TlsError> {
    let pem_error = |what: &str, error: rustls_pki_types::pem::Error| TlsError::Read {
        path: what.to_owned(),
        message: error.to_string(),
    };
    let chain = CertificateDer::pem_slice_iter(material.cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| pem_error("the certificate PEM", error))?;
    let key = PrivateKeyDer::from_pem_slice(material.key_pem.as_bytes())
        .map_err(|error| pem_error("the key PEM", error))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_material_is_accepted_by_rustls() {
        let material =
            TlsMaterial::generate(&["localhost".into(), "127.0.0.1".into()], Utc::now()).unwrap();
        assert_eq!(material.cert_pem.matches("BEGIN CERTIFICATE").count(), 1);
        assert!(material.key_pem.contains("PRIVATE KEY"));
        assert!(
            material
                .ca_key_pem
                .as_ref()
                .unwrap()
                .contains("PRIVATE KEY")
        );
        assert_ne!(material.ca_pem, material.cert_pem);
        server_config(&material).unwrap();
        assert!(!format!("{material:?}").contains("PRIVATE KEY"));
    }

    #[test]
    fn files_round_trip_and_missing_files_are_named() {
        let material = TlsMaterial::generate(&["localhost".into()], Utc::now()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
        std::fs::write(&cert, &material.cert_pem).unwrap();
        std::fs::write(&key, &material.key_pem).unwrap();
        let read = TlsMaterial::read(&cert, &key, None).unwrap();
        assert_eq!(read.ca_pem, material.cert_pem);
        server_config(&read).unwrap();
        let missing = TlsMaterial::read(&dir.path().join("nope.crt"), &key, None).unwrap_err();
        assert!(missing.to_string().contains("nope.crt"));
    }

    #[test]
    fn garbage_is_an_error() {
        let material = TlsMaterial {
            cert_pem: "garbage".into(),
            key_pem: "garbage".into(),
            ca_pem: String::new(),
            ca_key_pem: None,
        };
        assert!(server_config(&material).is_err());
        assert!(ServingCertificate::new(material).is_err());
    }
}
