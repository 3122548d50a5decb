//! A certificate changed on disk is served on the next handshake, without a restart; a bad one is not.

use std::time::Duration;

use chrono::Utc;
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

use super::test_client::{PATIENCE, handshake, start_server, trusting};
use super::*;
use crate::webhook::certificate_reload::{CertificateSource, start};
use crate::webhook::tls::TlsMaterial;
use kruise_runtime::shutdown;

fn write(dir: &std::path::Path, material: &TlsMaterial) {
    std::fs::write(dir.join("tls.crt"), &material.cert_pem).unwrap();
    std::fs::write(dir.join("tls.key"), &material.key_pem).unwrap();
}

fn der(pem: &str) -> CertificateDer<'static> {
    CertificateDer::from_pem_slice(pem.as_bytes()).unwrap()
}

#[tokio::test]
async fn a_changed_certificate_file_is_served_on_the_next_handshake() {
    let dir = tempfile::tempdir().unwrap();
    let hosts = ["localhost".to_owned()];
    let old = TlsMaterial::generate(&hosts, Utc::now()).unwrap();
    let new = TlsMaterial::generate(&hosts, Utc::now()).unwrap();
    write(dir.path(), &old);
    let source = CertificateSource::Files {
        cert: dir.path().join("tls.crt"),
        key: dir.path().join("tls.key"),
        ca: None,
    };
    let (_stop, stopped) = shutdown::channel();
    let tls = start(
        source,
        Default::default(),
        Duration::from_millis(50),
        None,
        stopped,
    )
    .await
    .unwrap();
    let server = start_server(ConnectionLimits::default(), tls.clone()).await;
    let client = trusting(&[&old.ca_pem, &new.ca_pem]);
    let served = |stream: &tokio_rustls::client::TlsStream<tokio::net::TcpStream>| {
        stream.get_ref().1.peer_certificates().unwrap()[0].clone()
    };
    assert_eq!(
        served(&handshake(server.address, &client).await),
        der(&old.cert_pem)
    );

    // A file that is not a certificate is logged and the old certificate kept.
    std::fs::write(dir.path().join("tls.crt"), "garbage").unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        served(&handshake(server.address, &client).await),
        der(&old.cert_pem)
    );
    assert_eq!(tls.borrow().material.cert_pem, old.cert_pem);

    write(dir.path(), &new);
    tokio::time::timeout(PATIENCE, async {
        while served(&handshake(server.address, &client).await) != der(&new.cert_pem) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the new certificate was never served");
    assert_eq!(tls.borrow().material.ca_pem, new.cert_pem);
}
