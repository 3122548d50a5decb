//! The deadlines of one webhook connection after its TLS handshake: the request headers must arrive
//! within the header timeout, the answer must be ready within the body timeout after them, and a kept-alive
//! connection may wait for its next request for the idle timeout. [`watch`] resolves when the deadline of
//! the phase the connection is in passes; the server then drops (closes) the connection.
//!
//! hyper has a header read timeout of its own, but its timer also runs while a kept-alive connection waits
//! between requests, so it cannot give the header and idle limits separately; this watchdog does all three.
//! The phase moves on from the service (a request starts when its headers are parsed, ends when its
//! answer is ready) and from the connection's reads ([`PhaseTrackingIo`]: the first byte of the next
//! request ends the idle wait).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! use std::time::Duration;
//! use kruise_manager::webhook::connection_limits::ConnectionLimits;
//! use kruise_manager::webhook::connection_watchdog::{Expired, PhaseTracker, watch};
//!
//! let limits = ConnectionLimits { idle_timeout: Duration::from_millis(1), ..ConnectionLimits::default() };
//! let (tracker, phases) = PhaseTracker::new();
//! tracker.request_started();
//! tracker.request_finished();
//! assert_eq!(watch(phases, limits).await, Expired::Idle);
//! # }
//! ```

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::watch as channel;
use tokio::time::Instant;

use super::connection_limits::ConnectionLimits;

/// Where a connection is in its request cycle, and since when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for (the rest of) a request's headers.
    AwaitingHeaders(Instant),
    /// Headers read: reading the body and answering.
    Answering(Instant),
    /// Answered; waiting for the next request on the kept-alive connection.
    Idle(Instant),
}

/// The limit that ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expired {
    /// The headers did not arrive in time.
    Header,
    /// The body did not arrive (or the answer was not ready) in time.
    Body,
    /// No further request in time.
    Idle,
}

impl Expired {
    /// The `reason` label of the closed-connections metric.
    #[must_use]
    pub fn reason(self) -> &'static str {
        match self {
            Self::Header => "header_timeout",
            Self::Body => "body_timeout",
            Self::Idle => "idle_timeout",
        }
    }
}

/// Moves a connection's [`Phase`] on; cheap to clone (one per connection, shared by its service and
/// its I/O).
#[derive(Clone, Debug)]
pub struct PhaseTracker {
    phase: Arc<channel::Sender<Phase>>,
}

impl PhaseTracker {
    /// A tracker of a connection that has just finished its handshake (awaiting headers from now), and the
    /// receiver [`watch`] reads.
    #[must_use]
    pub fn new() -> (Self, channel::Receiver<Phase>) {
        let (sender, receiver) = channel::channel(Phase::AwaitingHeaders(Instant::now()));
        (
            Self {
                phase: Arc::new(sender),
            },
            receiver,
        )
    }

    /// The headers of a request were read.
    pub fn request_started(&self) {
        self.phase.send_replace(Phase::Answering(Instant::now()));
    }

    /// The answer of the request is ready.
    pub fn request_finished(&self) {
        self.phase.send_replace(Phase::Idle(Instant::now()));
    }

    /// Bytes arrived: on an idle connection, the next request has begun.
    fn bytes_arrived(&self) {
        self.phase.send_if_modified(|phase| {
            if matches!(phase, Phase::Idle(_)) {
                *phase = Phase::AwaitingHeaders(Instant::now());
                true
            } else {
                false
            }
        });
    }
}

/// Resolves with the limit that ran out once the deadline of the connection's current phase passes (never,
/// if the tracker is gone).
pub async fn watch(mut phases: channel::Receiver<Phase>, limits: ConnectionLimits) -> Expired {
    loop {
        let (deadline, expired) = match *phases.borrow_and_update() {
            Phase::AwaitingHeaders(since) => (since + limits.header_read_timeout, Expired::Header),
            Phase::Answering(since) => (since + limits.body_read_timeout, Expired::Body),
            Phase::Idle(since) => (since + limits.idle_timeout, Expired::Idle),
        };
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => return expired,
            changed = phases.changed() => {
                if changed.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        }
    }
}

/// A connection's I/O that tells its [`PhaseTracker`] when bytes arrive.
#[derive(Debug)]
pub struct PhaseTrackingIo<T> {
    inner: T,
    tracker: PhaseTracker,
}

impl<T> PhaseTrackingIo<T> {
    /// Wraps `inner`.
    pub fn new(inner: T, tracker: PhaseTracker) -> Self {
        Self { inner, tracker }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for PhaseTrackingIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        ready!(Pin::new(&mut self.inner).poll_read(cx, buf))?;
        if buf.filled().len() > before {
            self.tracker.bytes_arrived();
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for PhaseTrackingIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    const LONG: Duration = Duration::from_secs(3600);
    const SHORT: Duration = Duration::from_millis(1);

    /// Limits where only the deadline of `phase` is short.
    fn short_for(expired: Expired) -> ConnectionLimits {
        let short = |which| if which == expired { SHORT } else { LONG };
        ConnectionLimits {
            header_read_timeout: short(Expired::Header),
            body_read_timeout: short(Expired::Body),
            idle_timeout: short(Expired::Idle),
            ..ConnectionLimits::default()
        }
    }

    async fn expires(phases: channel::Receiver<Phase>, limits: ConnectionLimits) -> Expired {
        tokio::time::timeout(Duration::from_secs(60), watch(phases, limits))
            .await
            .expect("the watchdog never fired")
    }

    #[tokio::test]
    async fn each_phase_has_its_own_deadline() {
        let (tracker, phases) = PhaseTracker::new();
        assert_eq!(
            expires(phases.clone(), short_for(Expired::Header)).await,
            Expired::Header
        );
        tracker.request_started();
        assert_eq!(
            expires(phases.clone(), short_for(Expired::Body)).await,
            Expired::Body
        );
        tracker.request_finished();
        assert_eq!(
            expires(phases, short_for(Expired::Idle)).await,
            Expired::Idle
        );
    }

    #[tokio::test]
    async fn a_phase_change_moves_the_deadline() {
        let (tracker, phases) = PhaseTracker::new();
        let watchdog = tokio::spawn(expires(phases, short_for(Expired::Body)));
        tokio::task::yield_now().await;
        tracker.request_started();
        assert_eq!(watchdog.await.unwrap(), Expired::Body);
    }

    #[tokio::test]
    async fn bytes_on_an_idle_connection_start_the_header_deadline() {
        let (tracker, phases) = PhaseTracker::new();
        tracker.request_started();
        tracker.request_finished();
        let (mut client, server) = tokio::io::duplex(64);
        let mut io = PhaseTrackingIo::new(server, tracker.clone());
        client.write_all(b"GET").await.unwrap();
        let mut buf = [0_u8; 8];
        assert_eq!(io.read(&mut buf).await.unwrap(), 3);
        assert!(matches!(*phases.borrow(), Phase::AwaitingHeaders(_)));
        // Bytes while answering (a pipelined request) leave the phase alone.
        tracker.request_started();
        client.write_all(b"x").await.unwrap();
        assert_eq!(io.read(&mut buf).await.unwrap(), 1);
        assert!(matches!(*phases.borrow(), Phase::Answering(_)));
        assert_eq!(Expired::Header.reason(), "header_timeout");
    }
}
