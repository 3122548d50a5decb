//! Watch accounting: a client layer that counts the watch requests a process has open, by resource, as
//! the gauge `api_open_watches{resource="pods"}` (`pods`, `clonesets.apps.kruise.io`, ...). A watch counts
//! from its response until its body is dropped.
//!
//! ```no_run
//! # async fn run() -> Result<(), kube::Error> {
//! use kruise_runtime::OpenWatches;
//!
//! let watches = OpenWatches::new();
//! let config = kube::Config::infer().await.map_err(kube::Error::InferConfig)?;
//! let client = kube::client::ClientBuilder::try_from(config)?
//!     .with_layer(&watches.layer())
//!     .build();
//! # let _ = client;
//! assert_eq!(watches.open("pods"), 0);
//! # Ok(())
//! # }
//! ```

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use http::{Request, Response, Uri};
use http_body::{Body, Frame, SizeHint};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use tower::{Layer, Service};

/// The label of the gauge.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WatchLabels {
    /// `plural` for the core group, `plural.group` otherwise.
    pub resource: String,
}

/// The open watches of a process, by resource. Cloning shares the counts.
#[derive(Clone, Debug, Default)]
pub struct OpenWatches {
    gauge: Family<WatchLabels, Gauge>,
}

impl OpenWatches {
    /// No watch open.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers the gauge as `api_open_watches` (under the registry's prefix).
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "api_open_watches",
            "Watch requests this process has open against the API server, by resource",
            self.gauge.clone(),
        );
    }

    /// The open watches of `resource` (`pods`, `clonesets.apps.kruise.io`).
    #[must_use]
    pub fn open(&self, resource: &str) -> i64 {
        self.gauge
            .get_or_create(&WatchLabels {
                resource: resource.to_owned(),
            })
            .get()
    }

    /// The client layer that counts into these counts.
    #[must_use]
    pub fn layer(&self) -> OpenWatchesLayer {
        OpenWatchesLayer {
            watches: self.clone(),
        }
    }

    fn opened(&self, resource: String) -> OpenWatch {
        let gauge = self.gauge.get_or_create(&WatchLabels { resource }).clone();
        gauge.inc();
        OpenWatch { gauge }
    }
}

/// The resource a request watches (`None`: not a watch): the last path segment, qualified by the API
/// group for `/apis/...` paths.
#[must_use]
pub fn watched_resource(uri: &Uri) -> Option<String> {
    let watching = uri
        .query()
        .is_some_and(|query| query.split('&').any(|pair| pair == "watch=true"));
    if !watching {
        return None;
    }
    let segments: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
    let resource = *segments.last()?;
    match segments.as_slice() {
        ["apis", group, ..] => Some(format!("{resource}.{group}")),
        _ => Some(resource.to_owned()),
    }
}

/// Counts one open watch until dropped.
#[derive(Debug)]
struct OpenWatch {
    gauge: Gauge,
}

impl Drop for OpenWatch {
    fn drop(&mut self) {
        self.gauge.dec();
    }
}

/// The [`Layer`] of [`OpenWatches`].
#[derive(Clone, Debug)]
pub struct OpenWatchesLayer {
    watches: OpenWatches,
}

impl<S> Layer<S> for OpenWatchesLayer {
    type Service = CountWatches<S>;

    fn layer(&self, inner: S) -> Self::Service {
        CountWatches {
            inner,
            watches: self.watches.clone(),
        }
    }
}

/// The [`Service`] of [`OpenWatchesLayer`].
#[derive(Clone, Debug)]
pub struct CountWatches<S> {
    inner: S,
    watches: OpenWatches,
}

impl<S, ReqBody, ResBody> Service<Request<ReqBody>> for CountWatches<S>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Future: Send + 'static,
{
    type Response = Response<WatchBody<ResBody>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<ReqBody>) -> Self::Future {
        let resource = watched_resource(request.uri());
        let watches = self.watches.clone();
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await?;
            let open = resource.map(|resource| watches.opened(resource));
            Ok(response.map(|inner| WatchBody { inner, _open: open }))
        })
    }
}

/// A response body that keeps its watch counted while it lives.
#[derive(Debug)]
pub struct WatchBody<B> {
    inner: B,
    /// Kept only for its drop.
    _open: Option<OpenWatch>,
}

impl<B: Body + Unpin> Body for WatchBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests;
