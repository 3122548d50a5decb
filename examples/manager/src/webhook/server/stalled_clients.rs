//! Clients that stall at every step against the real TLS server: each connection is closed by the server,
//! connections over the cap wait, and a normal review is answered afterwards.

use std::time::Duration;

use chrono::Utc;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::test_client::{
    TestServer, closed_by_server, conversion_request, eventually, handshake, review, review_on,
    start_server, trusting,
};
use super::*;
use crate::webhook::tls::TlsMaterial;

/// How long the limit under test allows (the others are generous, so a busy machine does not trip them).
const SHORT: Duration = Duration::from_millis(500);

/// Generous limits; each test shortens the one it stalls on.
fn generous_limits() -> ConnectionLimits {
    ConnectionLimits {
        handshake_timeout: Duration::from_secs(30),
        header_read_timeout: Duration::from_secs(30),
        body_read_timeout: Duration::from_secs(30),
        idle_timeout: Duration::from_secs(30),
        max_connections: 4,
    }
}

async fn server(limits: ConnectionLimits) -> (TestServer, tokio_rustls::TlsConnector) {
    let material = TlsMaterial::generate(&["localhost".into()], Utc::now()).unwrap();
    let client = trusting(&[&material.ca_pem]);
    let (_sender, tls) = watch::channel(ServingCertificate::new(material).unwrap());
    (start_server(limits, tls).await, client)
}

/// Waits until the server counted one connection closed for `reason` (it counts after closing).
async fn counted_closed(server: &TestServer, reason: &str) {
    let series =
        format!("kruise_manager_webhook_connections_closed_total{{reason=\"{reason}\"}} 1");
    eventually(&series.clone(), || {
        server.metrics.encode().contains(&series)
    })
    .await;
}

#[tokio::test]
async fn a_connection_that_never_finishes_the_handshake_is_closed() {
    let (server, client) = server(ConnectionLimits {
        handshake_timeout: SHORT,
        ..generous_limits()
    })
    .await;
    let mut stalled = TcpStream::connect(server.address).await.unwrap();
    // The start of a TLS record, and nothing more.
    stalled.write_all(&[0x16, 0x03, 0x01]).await.unwrap();
    closed_by_server(&mut stalled).await;
    counted_closed(&server, "handshake_timeout").await;
    assert_eq!(review(server.address, &client).await, "HTTP/1.1 200 OK");
}

#[tokio::test]
async fn half_a_header_is_closed() {
    let (server, client) = server(ConnectionLimits {
        header_read_timeout: SHORT,
        ..generous_limits()
    })
    .await;
    let mut stalled = handshake(server.address, &client).await;
    stalled
        .write_all(b"POST /convert HTTP/1.1\r\nHost: loc")
        .await
        .unwrap();
    stalled.flush().await.unwrap();
    closed_by_server(&mut stalled).await;
    counted_closed(&server, "header_timeout").await;
    assert_eq!(review(server.address, &client).await, "HTTP/1.1 200 OK");
}

#[tokio::test]
async fn a_stalled_body_is_closed() {
    let (server, client) = server(ConnectionLimits {
        body_read_timeout: SHORT,
        ..generous_limits()
    })
    .await;
    let mut stalled = handshake(server.address, &client).await;
    let request = conversion_request();
    // Everything but the last byte of the body.
    stalled
        .write_all(&request[..request.len() - 1])
        .await
        .unwrap();
    stalled.flush().await.unwrap();
    closed_by_server(&mut stalled).await;
    counted_closed(&server, "body_timeout").await;
    assert_eq!(review(server.address, &client).await, "HTTP/1.1 200 OK");
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed() {
    let (server, client) = server(ConnectionLimits {
        idle_timeout: SHORT,
        ..generous_limits()
    })
    .await;
    let mut idle = handshake(server.address, &client).await;
    let response = review_on(&mut idle).await;
    assert!(response.starts_with("HTTP/1.1 200 OK"), "{response}");
    closed_by_server(&mut idle).await;
    counted_closed(&server, "idle_timeout").await;
    assert_eq!(review(server.address, &client).await, "HTTP/1.1 200 OK");
}

#[tokio::test]
async fn an_idle_limit_longer_than_the_header_limit_keeps_the_connection_for_more_requests() {
    let limits = ConnectionLimits {
        header_read_timeout: SHORT,
        idle_timeout: Duration::from_secs(3600),
        ..generous_limits()
    };
    let (server, client) = server(limits).await;
    let mut kept = handshake(server.address, &client).await;
    assert!(review_on(&mut kept).await.starts_with("HTTP/1.1 200 OK"));
    // Longer than the header limit: hyper's own header timer would have closed it by now.
    tokio::time::sleep(SHORT * 2).await;
    assert!(review_on(&mut kept).await.starts_with("HTTP/1.1 200 OK"));
}

#[tokio::test]
async fn more_stalled_connections_than_the_cap_are_all_closed() {
    let (server, client) = server(ConnectionLimits {
        handshake_timeout: SHORT,
        ..generous_limits()
    })
    .await;
    let mut stalled = Vec::new();
    for _ in 0..10 {
        stalled.push(TcpStream::connect(server.address).await.unwrap());
    }
    for connection in &mut stalled {
        closed_by_server(connection).await;
    }
    assert_eq!(review(server.address, &client).await, "HTTP/1.1 200 OK");
    eventually("every connection ended", || {
        server.metrics.webhook_open_connections() == 0
    })
    .await;
}

#[tokio::test]
async fn connections_over_the_cap_wait_for_a_slot() {
    let limits = ConnectionLimits {
        handshake_timeout: Duration::from_secs(3600),
        max_connections: 2,
        ..generous_limits()
    };
    let (server, client) = server(limits).await;
    let stalled = [
        TcpStream::connect(server.address).await.unwrap(),
        TcpStream::connect(server.address).await.unwrap(),
    ];
    eventually("both stalled connections are served", || {
        server.metrics.webhook_open_connections() == 2
    })
    .await;
    let address = server.address;
    let waiting = tokio::spawn(async move { review(address, &client).await });
    // However long this takes, the third connection gets no slot while the two stall.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !waiting.is_finished(),
        "a connection over the cap was served"
    );
    assert_eq!(server.metrics.webhook_open_connections(), 2);
    drop(stalled);
    let answer = tokio::time::timeout(super::test_client::PATIENCE, waiting)
        .await
        .expect("the waiting connection was never served")
        .unwrap();
    assert_eq!(answer, "HTTP/1.1 200 OK");
}
