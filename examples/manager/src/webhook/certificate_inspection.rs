//! Reading what [`super::certificate_renewal::decide`] needs from PEM material: validities, and whether
//! the signing CA issued the serving certificate; and splitting a CA bundle into its certificates.
//!
//! ```
//! use chrono::Utc;
//! use kruise_manager::webhook::certificate_inspection::inspect;
//! use kruise_manager::webhook::tls::TlsMaterial;
//!
//! let material = TlsMaterial::generate(&["localhost".into()], Utc::now()).unwrap();
//! let inspection = inspect(&material, true);
//! assert!(inspection.issued_by_signing_ca);
//! assert!(inspection.serving.unwrap().contains(Utc::now()));
//! ```

use chrono::{DateTime, Utc};
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use x509_parser::certificate::X509Certificate;

use super::certificate_renewal::{Inspection, Validity};
use super::tls::TlsMaterial;

const BEGIN: &str = "-----BEGIN CERTIFICATE-----";
const END: &str = "-----END CERTIFICATE-----";

/// What the renewal decision needs to know about `material`; `hosts_fit` says whether it was made for
/// the host names wanted now.
#[must_use]
pub fn inspect(material: &TlsMaterial, hosts_fit: bool) -> Inspection {
    let serving = first_der(&material.cert_pem);
    let serving = serving.as_ref().and_then(|der| parse(der));
    let signing_ca = material
        .ca_key_pem
        .as_ref()
        .and_then(|_| first_der(&material.ca_pem));
    let signing_ca = signing_ca.as_ref().and_then(|der| parse(der));
    let issued_by_signing_ca = match (&serving, &signing_ca) {
        (Some(serving), Some(ca)) => serving.issuer().to_string() == ca.subject().to_string(),
        _ => false,
    };
    Inspection {
        serving: serving.as_ref().and_then(validity),
        hosts_fit,
        signing_ca: signing_ca.as_ref().and_then(validity),
        issued_by_signing_ca,
    }
}

/// The validity of the first certificate of `pem` (`None`: no readable certificate).
#[must_use]
pub fn validity_of(pem: &str) -> Option<Validity> {
    let der = first_der(pem)?;
    validity(&parse(&der)?)
}

/// The certificates of a PEM bundle, each as its own PEM block (text outside the blocks dropped).
#[must_use]
pub fn bundle_certificates(pem: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut rest = pem;
    while let Some(start) = rest.find(BEGIN) {
        let Some(length) = rest.get(start..).and_then(|tail| tail.find(END)) else {
            break;
        };
        let end = start + length + END.len();
        if let Some(block) = rest.get(start..end) {
            blocks.push(format!("{block}\n"));
        }
        rest = rest.get(end..).unwrap_or_default();
    }
    blocks
}

fn first_der(pem: &str) -> Option<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem.as_bytes()).next()?.ok()
}

fn parse<'a>(der: &'a CertificateDer<'_>) -> Option<X509Certificate<'a>> {
    x509_parser::parse_x509_certificate(der)
        .ok()
        .map(|(_, certificate)| certificate)
}

fn validity(certificate: &X509Certificate<'_>) -> Option<Validity> {
    let at = |timestamp: i64| DateTime::<Utc>::from_timestamp(timestamp, 0);
    let validity = certificate.validity();
    Some(Validity {
        not_before: at(validity.not_before.timestamp())?,
        not_after: at(validity.not_after.timestamp())?,
    })
}

#[cfg(test)]
mod tests {
    use chrono::TimeDelta;

    use super::*;

    #[test]
    fn generated_material_has_bounded_validities() {
        let now = Utc::now();
        let material = TlsMaterial::generate(&["localhost".into()], now).unwrap();
        let inspection = inspect(&material, true);
        let serving = inspection.serving.unwrap();
        let ca = inspection.signing_ca.unwrap();
        assert!(
            serving.not_after <= now + TimeDelta::days(366),
            "{serving:?}"
        );
        assert!(ca.not_after <= now + TimeDelta::days(731), "{ca:?}");
        assert!(serving.not_after <= ca.not_after);
        assert!(inspection.issued_by_signing_ca);
    }

    #[test]
    fn without_a_ca_key_there_is_no_signing_ca() {
        let mut material = TlsMaterial::generate(&["localhost".into()], Utc::now()).unwrap();
        material.ca_key_pem = None;
        let inspection = inspect(&material, true);
        assert!(inspection.signing_ca.is_none());
        assert!(!inspection.issued_by_signing_ca);
        assert!(inspection.serving.is_some());
    }

    #[test]
    fn garbage_has_no_validity() {
        assert!(validity_of("garbage").is_none());
        let inspection = inspect(
            &TlsMaterial {
                cert_pem: "garbage".into(),
                key_pem: String::new(),
                ca_pem: String::new(),
                ca_key_pem: Some(String::new()),
            },
            true,
        );
        assert!(inspection.serving.is_none() && inspection.signing_ca.is_none());
    }

    #[test]
    fn bundles_split_into_certificates() {
        let one = TlsMaterial::generate(&["a".into()], Utc::now()).unwrap();
        let two = TlsMaterial::generate(&["b".into()], Utc::now()).unwrap();
        let bundle = format!("# comment\n{}{}", one.ca_pem, two.ca_pem);
        let blocks = bundle_certificates(&bundle);
        assert_eq!(blocks, [one.ca_pem.clone(), two.ca_pem.clone()]);
        assert!(bundle_certificates("-----BEGIN CERTIFICATE-----\nabc").is_empty());
    }
}
