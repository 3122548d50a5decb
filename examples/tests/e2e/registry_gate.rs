//! A gate in front of a local image registry: a TCP proxy on a free loopback port that accepts connections
//! and holds each one, sending nothing either way, until the gate is opened; from then on every held and new
//! connection is relayed to the registry. An image named through the gate's address (`127.0.0.1:PORT/...`,
//! which containerd pulls over plain HTTP) is pulled only once the gate opens, so a pull can be observed in
//! progress (the runtime's connection arrived and waits) for as long as a scenario needs.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A running gate (closed when started); the proxy stops when it is dropped.
pub struct RegistryGate {
    address: String,
    open: watch::Sender<bool>,
    connections: Arc<AtomicUsize>,
    accepting: JoinHandle<()>,
}

impl RegistryGate {
    /// Starts a closed gate in front of `registry` (`HOST:PORT`).
    pub async fn start(registry: &str) -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?.to_string();
        let (open, opened) = watch::channel(false);
        let connections = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&connections);
        let upstream = registry.to_owned();
        let accepting = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(relay_once_open(client, upstream.clone(), opened.clone()));
            }
        });
        Ok(Self {
            address,
            open,
            connections,
            accepting,
        })
    }

    /// `127.0.0.1:PORT`, the registry host to name images by.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// How many connections the gate accepted so far (held or relayed).
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Opens the gate: held connections and new ones are relayed to the registry.
    pub fn open(&self) {
        self.open.send_replace(true);
    }
}

impl Drop for RegistryGate {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

/// Holds `client` until the gate opens, then relays it to `upstream` until either side closes.
async fn relay_once_open(
    mut client: TcpStream,
    upstream: String,
    mut opened: watch::Receiver<bool>,
) {
    if opened.wait_for(|open| *open).await.is_err() {
        return;
    }
    let Ok(mut server) = TcpStream::connect(&upstream).await else {
        return;
    };
    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
}
