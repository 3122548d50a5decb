//! The fenced client's own connection pool: the client stack `kube::Client::try_from(config)` builds
//! (base URI, retries of 429/503/504, authentication, extra headers such as the user agent, connect and
//! write timeouts, rustls), except that every TCP stream beneath TLS is a
//! [`FencedStream`](super::fenced_stream::FencedStream) of the fence, and that no connection is shared
//! with any other client of the process.

use hyper_timeout::TimeoutConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::Config;
use kube::client::retry::RetryPolicy;
use kube::client::{Body, ClientBuilder, ConfigExt};
use tower::retry::RetryLayer;
use tower::util::BoxService;
use tower::{BoxError, ServiceBuilder};

use super::WriteFence;
use super::fenced_connector::FencedConnector;

/// The service of [`WriteFence::pool_client_builder`]: requests in, responses (with hyper's streaming
/// body) out.
pub type FencedPoolService =
    BoxService<http::Request<Body>, http::Response<hyper::body::Incoming>, BoxError>;

/// Why the fenced connection pool could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FencedPoolError {
    /// The configuration names a proxy; the fenced pool connects directly only.
    #[error(
        "the fenced leader client cannot connect through the proxy {proxy_url} (the kubeconfig's \
         proxy-url): its connections must be direct TCP streams it can fence"
    )]
    Proxy {
        /// The configured proxy.
        proxy_url: String,
    },
    /// The configuration's TLS, authentication or headers are unusable.
    #[error("building the fenced leader client: {0}")]
    Config(#[from] kube::Error),
}

impl WriteFence {
    /// A client builder over a connection pool of its own whose connections write only while the fence
    /// admits writes: the request-level check of [`WriteFence::guard`] refuses a write before it is
    /// sent, this one refuses the bytes of a request that passed that check when the fence shuts before
    /// they reach the socket. Add layers (watch accounting) and build, then [`guard`](Self::guard) the
    /// result: `fence.guard(&fence.pool_client_builder(&config)?.build())`. Reads through it fail too
    /// once the fence is shut (their request bytes are held back as well).
    ///
    /// # Errors
    /// [`FencedPoolError::Proxy`] when `config` names a proxy; [`FencedPoolError::Config`] when its TLS,
    /// authentication or headers cannot be set up (as `kube::Client::try_from` would fail).
    pub fn pool_client_builder(
        &self,
        config: &Config,
    ) -> Result<ClientBuilder<FencedPoolService>, FencedPoolError> {
        if let Some(proxy_url) = &config.proxy_url {
            return Err(FencedPoolError::Proxy {
                proxy_url: proxy_url.to_string(),
            });
        }
        let mut tcp = HttpConnector::new();
        tcp.enforce_http(false);
        let tls = config
            .rustls_https_connector_with_connector(FencedConnector::new(tcp, self.clone()))?;
        let mut timed = TimeoutConnector::new(tls);
        timed.set_connect_timeout(config.connect_timeout);
        timed.set_read_timeout(config.read_timeout);
        timed.set_write_timeout(config.write_timeout);
        timed.set_reset_reader_on_write(config.reset_reader_on_write);
        let pool = hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build(timed);
        let service = ServiceBuilder::new()
            .layer(config.base_uri_layer())
            .option_layer(
                config
                    .default_retry
                    .then(|| RetryLayer::new(RetryPolicy::server_retry())),
            )
            .option_layer(config.auth_layer()?)
            .layer(config.extra_headers_layer()?)
            .map_err(BoxError::from)
            .service(pool);
        Ok(ClientBuilder::new(
            BoxService::new(service),
            config.default_namespace.clone(),
        ))
    }
}

#[cfg(test)]
mod tests;
