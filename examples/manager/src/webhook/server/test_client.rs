//! A webhook server on 127.0.0.1:0 and a TLS client for the server tests.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, RootCertStore};
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use super::{ConnectionLimits, Mutator, ServingCertificate, router, serve_tls};
use kruise_runtime::metrics::Metrics;
use kruise_runtime::shutdown::{self, Trigger};

/// How long the tests wait for something the server must do (the machine may be very busy).
pub(super) const PATIENCE: Duration = Duration::from_secs(60);

/// A running server; stopped when dropped.
pub(super) struct TestServer {
    pub(super) address: SocketAddr,
    pub(super) metrics: Metrics,
    _stop: Trigger,
}

/// Serves the webhook routes with `tls` within `limits`.
pub(super) async fn start_server(
    limits: ConnectionLimits,
    tls: watch::Receiver<ServingCertificate>,
) -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let metrics = Metrics::new();
    let (stop, stopped) = shutdown::channel();
    tokio::spawn(serve_tls(
        listener,
        tls,
        router(Mutator::default(), None),
        limits,
        Some(metrics.clone()),
        stopped,
    ));
    TestServer {
        address,
        metrics,
        _stop: stop,
    }
}

/// A TLS client trusting the CAs of `bundles` (PEM).
pub(super) fn trusting(bundles: &[&str]) -> TlsConnector {
    let mut roots = RootCertStore::empty();
    for bundle in bundles {
        for certificate in CertificateDer::pem_slice_iter(bundle.as_bytes()) {
            roots.add(certificate.unwrap()).unwrap();
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    TlsConnector::from(Arc::new(config))
}

/// A finished TLS handshake with the server.
pub(super) async fn handshake(address: SocketAddr, client: &TlsConnector) -> TlsStream<TcpStream> {
    let tcp = TcpStream::connect(address).await.unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    client.connect(name, tcp).await.unwrap()
}

/// A ConversionReview request, keeping the connection open.
pub(super) fn conversion_request() -> Vec<u8> {
    conversion_request_with("keep-alive")
}

/// A ConversionReview request with the `Connection` header `connection`.
fn conversion_request_with(connection: &str) -> Vec<u8> {
    let body = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "1", "desiredAPIVersion": "apps.kruise.io/v1beta1", "objects": []}
    })
    .to_string();
    format!(
        "POST /convert HTTP/1.1\r\nHost: localhost\r\nConnection: {connection}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Sends a ConversionReview on `stream` and returns the response once its body is complete.
pub(super) async fn review_on<S>(stream: &mut S) -> String
where
    S: AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    stream.write_all(&conversion_request()).await.unwrap();
    let mut response = Vec::new();
    let mut buffer = [0_u8; 4096];
    tokio::time::timeout(PATIENCE, async {
        loop {
            let read = stream.read(&mut buffer).await.unwrap();
            assert_ne!(read, 0, "the server closed the connection before answering");
            response.extend_from_slice(&buffer[..read]);
            let text = String::from_utf8_lossy(&response);
            if let Some((head, body)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|line| line.strip_prefix("content-length: "))
                    .and_then(|length| length.parse::<usize>().ok())
                    .unwrap();
                if body.len() >= length {
                    return text.into_owned();
                }
            }
        }
    })
    .await
    .expect("no answer in time")
}

/// A fresh connection's answer to a ConversionReview (its status line). A connection that fails (one of
/// the short limits of a test ran out on a very busy machine) is tried again, until [`PATIENCE`].
pub(super) async fn review(address: SocketAddr, client: &TlsConnector) -> String {
    let attempt = || async {
        let tcp = TcpStream::connect(address).await.ok()?;
        let name = ServerName::try_from("localhost").ok()?;
        let mut stream = client.connect(name, tcp).await.ok()?;
        stream
            .write_all(&conversion_request_with("close"))
            .await
            .ok()?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.ok();
        let response = String::from_utf8_lossy(&response).into_owned();
        response.lines().next().map(str::to_owned)
    };
    tokio::time::timeout(PATIENCE, async {
        loop {
            if let Some(status) = attempt().await {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("no review answered")
}

/// Waits until the server closes `stream` (end of file or a reset); panics after [`PATIENCE`].
pub(super) async fn closed_by_server<S: AsyncRead + Unpin>(stream: &mut S) {
    let mut buffer = [0_u8; 1024];
    tokio::time::timeout(PATIENCE, async {
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .expect("the server kept the connection open");
}

/// Waits until `condition` holds; panics after [`PATIENCE`].
pub(super) async fn eventually(what: &str, condition: impl Fn() -> bool) {
    tokio::time::timeout(PATIENCE, async {
        while !condition() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("never: {what}"));
}
