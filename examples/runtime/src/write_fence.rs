//! The write fence of a leadership term: the writes of a leader stop, judged on this process's monotonic
//! clock, once its term may be over.
//!
//! The elector opens the fence until "start of the last successful renewal + renew deadline" and pushes
//! that instant forward at each renewal; it closes the fence at once when leadership ends. A process that
//! was frozen (SIGSTOP, a stalled VM) and wakes after the instant has passed finds the fence shut before
//! any of its tasks can write, even before the elector has looked at the Lease again. A standby takes
//! over no sooner than a whole lease duration after it saw that renewal, and the renew deadline is
//! shorter than the lease duration, so the fence shuts before a standby can lead.
//!
//! The fence is checked twice on the way out:
//!
//! - per request, by [`WriteFence::guard`]: a client wrapper that refuses every write request (any method
//!   but `GET`, `HEAD` and `OPTIONS`) with a clear [`FencedWrite`] error before it is queued;
//! - per socket write, by the client's own connection pool ([`WriteFence::pool_client_builder`]): every
//!   TCP stream beneath TLS is a [`FencedStream`](fenced_stream::FencedStream) that checks the fence in
//!   `poll_write`/`poll_write_vectored`, right before the system call, and refuses with a
//!   [`ConnectionFenced`](fenced_stream::ConnectionFenced) I/O error once it is shut. A request that passed
//!   the first check just before the process froze is still being serialised, encrypted or queued when it
//!   wakes: its bytes meet the shut fence here instead of reaching the API server. No other client of the
//!   process (the elector's, the informers', the webhooks') shares these connections.
//!
//! What remains: the gap between the socket check and the `write` system call it guards (a few
//! instructions, nanoseconds, against the whole serialise-and-encrypt path the request-level check alone
//! left open), and bytes the kernel accepted before the freeze that are still in the socket's send buffer
//! or on the network (the kernel sends them while the process is frozen, so they arrive before a standby
//! can lead unless the network itself stalls for a lease duration). A process frozen exactly inside that
//! gap would still send one write when it wakes; the Kubernetes API has no fencing token a write could
//! carry to close it.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use kruise_runtime::write_fence::WriteFence;
//!
//! let fence = WriteFence::closed();
//! let now = Instant::now();
//! assert!(!fence.admits_writes_at(now));
//! fence.open_until(now + Duration::from_secs(10));
//! assert!(fence.admits_writes_at(now + Duration::from_secs(9)));
//! assert!(!fence.admits_writes_at(now + Duration::from_secs(10)));
//! fence.close();
//! assert!(!fence.admits_writes_at(now));
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Instant;

use http::{Method, Request, Response};
use kube::Client;
use kube::client::Body;
use tower::Service;

/// The write fence of one leadership term (cloning shares it). Starts closed.
#[derive(Clone, Debug, Default)]
pub struct WriteFence {
    open_until: Arc<Mutex<Option<Instant>>>,
}

/// A write the fence refused.
#[derive(Debug, thiserror::Error)]
#[error(
    "refused {method} {path}: this process's leadership term is over (its lease may have expired or \
     been lost), so it writes nothing more"
)]
pub struct FencedWrite {
    /// The request's method.
    pub method: Method,
    /// The request's path.
    pub path: String,
}

impl WriteFence {
    /// A fence that admits no write until opened.
    #[must_use]
    pub fn closed() -> Self {
        Self::default()
    }

    /// Admits writes until `deadline` (on the monotonic clock), replacing the previous deadline.
    pub fn open_until(&self, deadline: Instant) {
        *self.lock() = Some(deadline);
    }

    /// Admits no write any more (until opened again).
    pub fn close(&self) {
        *self.lock() = None;
    }

    /// Whether a write sent at `now` is admitted.
    #[must_use]
    pub fn admits_writes_at(&self, now: Instant) -> bool {
        self.lock().is_some_and(|deadline| now < deadline)
    }

    /// A client that sends its requests through `client`, refusing writes the fence does not admit
    /// (with a [`FencedWrite`] error, as `kube::Error::Service`). Reads always pass.
    #[must_use]
    pub fn guard(&self, client: &Client) -> Client {
        let service = FencedClient {
            client: client.clone(),
            fence: self.clone(),
        };
        Client::new(service, client.default_namespace())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Instant>> {
        self.open_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Whether a request only reads.
#[must_use]
pub fn is_read(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The service behind [`WriteFence::guard`].
#[derive(Clone)]
struct FencedClient {
    client: Client,
    fence: WriteFence,
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl Service<Request<Body>> for FencedClient {
    type Response = Response<Body>;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, BoxError>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let client = self.client.clone();
        let fence = self.fence.clone();
        Box::pin(async move {
            // Checked when the request is about to be sent, not when it was queued.
            if !is_read(request.method()) && !fence.admits_writes_at(Instant::now()) {
                let refused = FencedWrite {
                    method: request.method().clone(),
                    path: request.uri().path().to_owned(),
                };
                tracing::warn!(error = %refused, "write fenced");
                return Err(refused.into());
            }
            client.send(request).await.map_err(Into::into)
        })
    }
}

pub mod fenced_connector;
pub mod fenced_stream;
pub mod pool;

#[cfg(test)]
mod tests;
