//! A connector (a `tower::Service<Uri>` as hyper's client pool takes) whose connections are
//! [`FencedStream`]s of one write fence.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::Uri;
use tower::Service;

use super::WriteFence;
use super::fenced_stream::FencedStream;

/// Wraps every stream the inner connector (typically hyper-util's `HttpConnector`, beneath TLS) opens
/// in a [`FencedStream`] of its fence.
#[derive(Clone, Debug)]
pub struct FencedConnector<C> {
    inner: C,
    fence: WriteFence,
}

impl<C> FencedConnector<C> {
    /// Connects through `inner`; the connections write only while `fence` admits writes.
    pub fn new(inner: C, fence: WriteFence) -> Self {
        Self { inner, fence }
    }
}

impl<C> Service<Uri> for FencedConnector<C>
where
    C: Service<Uri>,
    C::Future: Send + 'static,
{
    type Response = FencedStream<C::Response>;
    type Error = C::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, destination: Uri) -> Self::Future {
        let connecting = self.inner.call(destination);
        let fence = self.fence.clone();
        Box::pin(async move { Ok(FencedStream::new(connecting.await?, fence)) })
    }
}
