//! How long a webhook connection may take for each step, and how many connections are served at once.
//!
//! Every limit closes the connection when it runs out, so a client that opens a connection and then
//! stalls (slowloris) holds it for a bounded time only. The defaults sit below kube-apiserver's webhook
//! timeout (10 s unless the configuration says otherwise): a stalled client frees its slot before a real
//! review waiting behind it gives up.
//!
//! ```
//! use std::time::Duration;
//! use kruise_manager::webhook::connection_limits::ConnectionLimits;
//!
//! let limits = ConnectionLimits::default();
//! assert_eq!(limits.header_read_timeout, Duration::from_secs(5));
//! assert!(limits.max_connections > 0);
//! ```

use std::time::Duration;

/// The limits of the webhook server's connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// From accepting the TCP connection to the end of the TLS handshake.
    pub handshake_timeout: Duration,
    /// From the end of the handshake (or the first byte of a further request on a kept-alive connection) to
    /// the end of the request's headers.
    pub header_read_timeout: Duration,
    /// From the end of the headers to the answer being ready: reading the body, then answering (answers are
    /// computed in memory, so this bounds the body).
    pub body_read_timeout: Duration,
    /// How long a kept-alive connection may wait for its next request.
    pub idle_timeout: Duration,
    /// Connections served at once (the TLS handshake included); further ones wait in the listen backlog.
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        Self {
            handshake_timeout: Duration::from_secs(5),
            header_read_timeout: Duration::from_secs(5),
            body_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            max_connections: 1000,
        }
    }
}
