//! Making the webhook's certificates: a CA and the serving certificates it signs, with the bounded
//! validities of a [`RenewalPolicy`]; and carrying out a [`Renewal`] on existing material.
//!
//! ```
//! use chrono::{TimeDelta, Utc};
//! use kruise_manager::webhook::certificate_authority::{generate, renew};
//! use kruise_manager::webhook::certificate_renewal::{Renewal, RenewalPolicy};
//!
//! let policy = RenewalPolicy::default();
//! let hosts = ["kruise-webhook.kruise-system.svc".to_owned()];
//! let material = generate(&hosts, Utc::now(), &policy).unwrap();
//! let renewed = renew(&material, Renewal::RenewServing, &hosts, Utc::now(), &policy).unwrap();
//! assert_eq!(renewed.ca_pem, material.ca_pem);
//! assert_ne!(renewed.cert_pem, material.cert_pem);
//! ```

use chrono::{DateTime, Utc};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, PublicKeyData,
};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;

use super::certificate_inspection::{bundle_certificates, validity_of};
use super::certificate_renewal::{BACKDATE, Renewal, RenewalPolicy};
use super::tls::{TlsError, TlsMaterial};

/// At most this many CAs stay in a bundle (the signing CA and the ones before it).
const MAX_BUNDLE_CAS: usize = 3;

/// A fresh CA and a serving certificate for `hosts` (DNS names or IP addresses) it signed.
///
/// # Errors
/// A host name rcgen refuses, or a key generation failure.
pub fn generate(
    hosts: &[String],
    now: DateTime<Utc>,
    policy: &RenewalPolicy,
) -> Result<TlsMaterial, TlsError> {
    let (ca_pem, ca_key_pem) = new_ca(now, policy)?;
    let (cert_pem, key_pem) = issue_serving(&ca_pem, &ca_key_pem, hosts, now, policy)?;
    Ok(TlsMaterial {
        cert_pem,
        key_pem,
        ca_pem,
        ca_key_pem: Some(ca_key_pem),
    })
}

/// `material` after `renewal` at `now`. A new CA goes first in the bundle, followed by the unexpired CAs
/// that were there (at most three in all), so certificates they signed stay trusted.
///
/// # Errors
/// A renewal of the serving certificate without a signing CA, or a generation failure.
pub fn renew(
    material: &TlsMaterial,
    renewal: Renewal,
    hosts: &[String],
    now: DateTime<Utc>,
    policy: &RenewalPolicy,
) -> Result<TlsMaterial, TlsError> {
    match renewal {
        Renewal::Keep => Ok(material.clone()),
        Renewal::RenewServing => {
            let (Some(ca_key), Some(ca)) = (
                material.ca_key_pem.as_deref(),
                bundle_certificates(&material.ca_pem).into_iter().next(),
            ) else {
                return Err(TlsError::Renew(
                    "no signing CA (certificate and key) to renew the serving certificate with"
                        .into(),
                ));
            };
            let (cert_pem, key_pem) = issue_serving(&ca, ca_key, hosts, now, policy)?;
            Ok(TlsMaterial {
                cert_pem,
                key_pem,
                ..material.clone()
            })
        }
        Renewal::RotateCa => {
            let (ca_pem, ca_key_pem) = new_ca(now, policy)?;
            Ok(TlsMaterial {
                ca_pem: bundle_with(&ca_pem, &material.ca_pem, now),
                ca_key_pem: Some(ca_key_pem),
                ..material.clone()
            })
        }
        Renewal::Regenerate => {
            let fresh = generate(hosts, now, policy)?;
            Ok(TlsMaterial {
                ca_pem: bundle_with(&fresh.ca_pem, &material.ca_pem, now),
                ..fresh
            })
        }
    }
}

/// `new_ca` followed by the unexpired certificates of `old_bundle`, at most [`MAX_BUNDLE_CAS`].
fn bundle_with(new_ca: &str, old_bundle: &str, now: DateTime<Utc>) -> String {
    let old = bundle_certificates(old_bundle).into_iter().filter(|ca| {
        ca.as_str() != new_ca && validity_of(ca).is_some_and(|validity| validity.not_after > now)
    });
    std::iter::once(new_ca.to_owned())
        .chain(old)
        .take(MAX_BUNDLE_CAS)
        .collect()
}

/// A self-signed CA valid from `now` (backdated) for the policy's CA validity: (certificate, key) PEM.
fn new_ca(now: DateTime<Utc>, policy: &RenewalPolicy) -> Result<(String, String), TlsError> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    // A fingerprint of its key in the name tells CAs apart: the serving certificate's issuer names its CA.
    let fingerprint = Sha256::digest(key.der_bytes());
    let fingerprint: String = fingerprint
        .iter()
        .take(8)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    params.distinguished_name = name(&format!("kruise-rs webhook CA {fingerprint}"));
    params.not_before = offset(now - BACKDATE)?;
    params.not_after = offset(now + policy.ca_validity)?;
    let cert = params.self_signed(&key)?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// A serving certificate for `hosts` signed by the CA `ca_pem` (first certificate) / `ca_key_pem`, valid
/// for the policy's serving validity but never beyond the CA.
fn issue_serving(
    ca_pem: &str,
    ca_key_pem: &str,
    hosts: &[String],
    now: DateTime<Utc>,
    policy: &RenewalPolicy,
) -> Result<(String, String), TlsError> {
    let ca_key = KeyPair::from_pem(ca_key_pem)?;
    let issuer = Issuer::from_ca_cert_pem(ca_pem, ca_key)?;
    let ca_expiry = validity_of(ca_pem)
        .map(|validity| validity.not_after)
        .ok_or_else(|| TlsError::Renew("the signing CA certificate cannot be read".into()))?;
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(hosts.to_vec())?;
    params.distinguished_name = name(hosts.first().map_or("kruise-rs webhook", String::as_str));
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.not_before = offset(now - BACKDATE)?;
    params.not_after = offset((now + policy.serving_validity).min(ca_expiry))?;
    let cert = params.signed_by(&key, &issuer)?;
    Ok((cert.pem(), key.serialize_pem()))
}

fn name(common_name: &str) -> DistinguishedName {
    let mut name = DistinguishedName::new();
    name.push(DnType::CommonName, common_name);
    name
}

fn offset(at: DateTime<Utc>) -> Result<OffsetDateTime, TlsError> {
    OffsetDateTime::from_unix_timestamp(at.timestamp())
        .map_err(|error| TlsError::Renew(format!("the time {at}: {error}")))
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;

    use super::*;
    use crate::webhook::certificate_inspection::inspect;
    use crate::webhook::tls::ServingCertificate;

    fn hosts() -> Vec<String> {
        vec!["localhost".into(), "127.0.0.1".into()]
    }

    #[test]
    fn a_renewed_serving_certificate_keeps_the_ca() {
        let policy = RenewalPolicy::default();
        let now = Utc::now();
        let material = generate(&hosts(), now, &policy).unwrap();
        let later = now + TimeDelta::days(500);
        let renewed = renew(&material, Renewal::RenewServing, &hosts(), later, &policy).unwrap();
        assert_eq!(renewed.ca_pem, material.ca_pem);
        let inspection = inspect(&renewed, true);
        assert!(inspection.issued_by_signing_ca);
        // Never beyond the CA: two years from `now`, not a year from `later`.
        let serving = inspection.serving.unwrap();
        assert_eq!(
            serving.not_after,
            inspection.signing_ca.unwrap().not_after,
            "{serving:?}"
        );
        ServingCertificate::new(renewed).unwrap();
    }

    #[test]
    fn a_rotated_ca_joins_the_bundle_before_it_signs() {
        let policy = RenewalPolicy::default();
        let now = Utc::now();
        let material = generate(&hosts(), now, &policy).unwrap();
        let rotated = renew(&material, Renewal::RotateCa, &hosts(), now, &policy).unwrap();
        assert_eq!(rotated.cert_pem, material.cert_pem);
        let bundle = bundle_certificates(&rotated.ca_pem);
        assert_eq!(bundle.len(), 2);
        assert_eq!(bundle[1], material.ca_pem);
        assert!(!inspect(&rotated, true).issued_by_signing_ca);
        let renewed = renew(&rotated, Renewal::RenewServing, &hosts(), now, &policy).unwrap();
        assert!(inspect(&renewed, true).issued_by_signing_ca);
        // The bundle never grows past three CAs.
        let mut many = renewed;
        for _ in 0..4 {
            many = renew(&many, Renewal::Regenerate, &hosts(), now, &policy).unwrap();
        }
        assert_eq!(bundle_certificates(&many.ca_pem).len(), MAX_BUNDLE_CAS);
    }

    #[test]
    fn expired_cas_leave_the_bundle() {
        let policy = RenewalPolicy::default();
        let then = Utc::now() - TimeDelta::days(800);
        let old = generate(&hosts(), then, &policy).unwrap();
        let fresh = renew(&old, Renewal::Regenerate, &hosts(), Utc::now(), &policy).unwrap();
        assert_eq!(bundle_certificates(&fresh.ca_pem).len(), 1);
        assert_ne!(fresh.ca_pem, old.ca_pem);
    }

    #[test]
    fn renewing_without_a_ca_key_is_an_error() {
        let policy = RenewalPolicy::default();
        let mut material = generate(&hosts(), Utc::now(), &policy).unwrap();
        material.ca_key_pem = None;
        let error = renew(
            &material,
            Renewal::RenewServing,
            &hosts(),
            Utc::now(),
            &policy,
        )
        .unwrap_err();
        assert!(error.to_string().contains("signing CA"), "{error}");
    }
}
