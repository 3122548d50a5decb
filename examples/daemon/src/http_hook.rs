//! preStop `httpGet` hooks, sent as kubelet sends lifecycle HTTP hooks: a GET of `path` (default `/`) on
//! `host:port` with the hook's `scheme` (HTTP, or HTTPS without verifying the serving certificate, as
//! kubelet does), the hook's `httpHeaders` (a `Host` header replaces the host kubelet would send), and
//! `User-Agent`/`Accept` defaults. The request is built by [`build`] with `http`'s checked types: a path,
//! host or header holding a CR or LF, or anything else that is not a valid URI part or header, is refused
//! with the field and value at fault. [`send`] reads at most [`MAX_RESPONSE_BYTES`] of the answer (kubelet
//! discards at most 10 KiB of a hook's response body) and then drops the connection, so a server that
//! never stops sending cannot hold the daemon.

use std::net::Ipv6Addr;
use std::sync::Arc;

use http_body_util::{BodyExt, Empty};
use hyper::body::Bytes;
use hyper::header::{ACCEPT, HOST, HeaderName, HeaderValue, USER_AGENT};
use hyper::http::uri::{Authority, PathAndQuery};
use hyper::{Request, StatusCode};
use k8s_openapi::api::core::v1::HTTPGetAction;
use rustls_pki_types::ServerName;
use tokio::net::TcpStream;

use super::hook_error::InvalidField;
use super::insecure_tls;

/// The most bytes of a hook's response body that are read (kubelet's `maxRespBodyLength`, 10 KiB).
pub const MAX_RESPONSE_BYTES: usize = 10 * 1024;

/// The `User-Agent` of hook requests unless the hook sets one (kubelet sends `kube-lifecycle/<version>`).
pub const USER_AGENT_VALUE: &str =
    concat!("kube-lifecycle/kruise-daemon-", env!("CARGO_PKG_VERSION"));

/// How a hook connects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// Plain HTTP.
    Http,
    /// HTTPS; the serving certificate is not verified (kubelet's `InsecureSkipVerify` for hooks).
    Https,
}

/// An HTTP hook ready to send: where to connect and the request (origin-form target, `Host` header set).
#[derive(Debug)]
pub struct HttpHook {
    /// HTTP or HTTPS.
    pub scheme: Scheme,
    /// The host to connect to (an IP address or a DNS name, without brackets).
    pub host: String,
    /// The port to connect to.
    pub port: u16,
    /// The GET request.
    pub request: Request<Empty<Bytes>>,
}

const CR_LF: &str = "contains a carriage return or line feed";

fn refuse_cr_lf(field: &str, value: &str) -> Result<(), InvalidField> {
    if value.contains(['\r', '\n']) {
        return Err(InvalidField::new(field, value, CR_LF));
    }
    Ok(())
}

/// The request of `action` to `host:port` (`host`: the hook's own host, or the pod IP when it names none).
///
/// # Errors
/// The field at fault when the scheme is not HTTP or HTTPS, or the path, host or a header holds a CR or
/// LF or is not a valid URI part or header.
pub fn build(action: &HTTPGetAction, host: &str, port: u16) -> Result<HttpHook, InvalidField> {
    let scheme = match action.scheme.as_deref().unwrap_or_default() {
        "" => Scheme::Http,
        text if text.eq_ignore_ascii_case("http") => Scheme::Http,
        text if text.eq_ignore_ascii_case("https") => Scheme::Https,
        text => {
            return Err(InvalidField::new(
                "preStop.httpGet.scheme",
                text,
                "must be HTTP or HTTPS",
            ));
        }
    };
    let path = action.path.as_deref().unwrap_or_default();
    refuse_cr_lf("preStop.httpGet.path", path)?;
    let absolute = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    let target = PathAndQuery::try_from(absolute.as_str())
        .map_err(|_| InvalidField::new("preStop.httpGet.path", path, "is not a valid URI path"))?;
    refuse_cr_lf("preStop.httpGet.host", host)?;
    let authority_text = if host.parse::<Ipv6Addr>().is_ok() {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let authority = Authority::try_from(authority_text.as_str())
        .map_err(|_| InvalidField::new("preStop.httpGet.host", host, "is not a valid host"))?;
    let mut builder = Request::get(target.as_str());
    let headers = builder.headers_mut().ok_or_else(|| {
        InvalidField::new("preStop.httpGet.path", path, "is not a valid URI path")
    })?;
    headers.insert(
        HOST,
        HeaderValue::from_str(authority.as_str())
            .map_err(|_| InvalidField::new("preStop.httpGet.host", host, "is not a valid host"))?,
    );
    for (index, header) in action.http_headers.iter().flatten().enumerate() {
        let field = format!("preStop.httpGet.httpHeaders[{index}]");
        refuse_cr_lf(&format!("{field}.name"), &header.name)?;
        refuse_cr_lf(&format!("{field}.value"), &header.value)?;
        let name = HeaderName::from_bytes(header.name.as_bytes()).map_err(|_| {
            InvalidField::new(
                format!("{field}.name"),
                &header.name,
                "is not a valid header name",
            )
        })?;
        let value = HeaderValue::from_str(&header.value).map_err(|_| {
            InvalidField::new(
                format!("{field}.value"),
                &header.value,
                "is not a valid header value",
            )
        })?;
        if name == HOST {
            headers.insert(HOST, value);
        } else {
            headers.append(name, value);
        }
    }
    if !headers.contains_key(USER_AGENT) {
        headers.insert(USER_AGENT, HeaderValue::from_static(USER_AGENT_VALUE));
    }
    if !headers.contains_key(ACCEPT) {
        headers.insert(ACCEPT, HeaderValue::from_static("*/*"));
    }
    let request = builder
        .body(Empty::new())
        .map_err(|_| InvalidField::new("preStop.httpGet.path", path, "is not a valid URI path"))?;
    Ok(HttpHook {
        scheme,
        host: host.to_owned(),
        port,
        request,
    })
}

/// Sends `hook` and answers the response's status, having read at most [`MAX_RESPONSE_BYTES`] of its body.
///
/// # Errors
/// The connection, TLS handshake or exchange failed (the message names the target).
pub async fn send(hook: HttpHook) -> Result<StatusCode, String> {
    let HttpHook {
        scheme,
        host,
        port,
        request,
    } = hook;
    let target = format!("{}://{host}:{port}", scheme_name(scheme));
    let fail =
        |what: &str, error: &dyn std::fmt::Display| format!("httpGet {target}: {what}: {error}");
    let tcp = TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|error| fail("connecting", &error))?;
    match scheme {
        Scheme::Http => exchange(hyper_util::rt::TokioIo::new(tcp), request)
            .await
            .map_err(|error| fail("request", &error)),
        Scheme::Https => {
            let name =
                ServerName::try_from(host.clone()).map_err(|error| fail("server name", &error))?;
            let config = insecure_tls::client_config().map_err(|error| fail("TLS", &error))?;
            let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
            let tls = connector
                .connect(name, tcp)
                .await
                .map_err(|error| fail("TLS handshake", &error))?;
            exchange(hyper_util::rt::TokioIo::new(tls), request)
                .await
                .map_err(|error| fail("request", &error))
        }
    }
}

fn scheme_name(scheme: Scheme) -> &'static str {
    match scheme {
        Scheme::Http => "http",
        Scheme::Https => "https",
    }
}

/// One request over `io`: the status, after reading at most [`MAX_RESPONSE_BYTES`] of the body; the
/// connection is then dropped whatever is left.
async fn exchange<I>(io: I, request: Request<Empty<Bytes>>) -> Result<StatusCode, hyper::Error>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await?;
    let driver = tokio::spawn(connection);
    let outcome = async {
        let response = sender.send_request(request).await?;
        let status = response.status();
        let mut body = response.into_body();
        let mut read = 0;
        while read < MAX_RESPONSE_BYTES {
            match body.frame().await {
                Some(Ok(frame)) => read += frame.data_ref().map_or(0, Bytes::len),
                // kubelet ignores what goes wrong while discarding the body.
                Some(Err(_)) | None => break,
            }
        }
        Ok(status)
    }
    .await;
    driver.abort();
    outcome
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::HTTPHeader;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    use super::*;

    fn action(path: &str, headers: &[(&str, &str)]) -> HTTPGetAction {
        HTTPGetAction {
            path: Some(path.to_owned()),
            port: IntOrString::Int(80),
            http_headers: Some(
                headers
                    .iter()
                    .map(|(name, value)| HTTPHeader {
                        name: (*name).to_owned(),
                        value: (*value).to_owned(),
                    })
                    .collect(),
            ),
            ..HTTPGetAction::default()
        }
    }

    #[test]
    fn the_request_targets_the_path_with_the_host_and_headers() {
        let hook = build(
            &action("ready?now=1", &[("X-Stop", "soon")]),
            "10.1.2.3",
            8080,
        )
        .unwrap();
        assert_eq!(hook.scheme, Scheme::Http);
        assert_eq!((hook.host.as_str(), hook.port), ("10.1.2.3", 8080));
        assert_eq!(hook.request.uri().to_string(), "/ready?now=1");
        let headers = hook.request.headers();
        assert_eq!(headers[HOST], "10.1.2.3:8080");
        assert_eq!(headers["x-stop"], "soon");
        assert_eq!(headers[USER_AGENT], USER_AGENT_VALUE);
        let ipv6 = build(&action("", &[("Host", "svc.local")]), "fd00::1", 80).unwrap();
        assert_eq!(ipv6.request.uri().to_string(), "/");
        assert_eq!(ipv6.request.headers()[HOST], "svc.local");
    }

    #[test]
    fn cr_lf_and_invalid_parts_are_refused_naming_the_field() {
        let smuggled =
            build(&action("/a HTTP/1.1\r\nX-Evil: 1\r\n", &[]), "10.0.0.1", 80).unwrap_err();
        assert_eq!(smuggled.field, "preStop.httpGet.path");
        assert_eq!(smuggled.reason, CR_LF);
        let header =
            build(&action("/", &[("X-Ok", "a\r\nX-Evil: 1")]), "10.0.0.1", 80).unwrap_err();
        assert_eq!(header.field, "preStop.httpGet.httpHeaders[0].value");
        let name = build(&action("/", &[("Bad Name", "v")]), "10.0.0.1", 80).unwrap_err();
        assert_eq!(name.field, "preStop.httpGet.httpHeaders[0].name");
        let space = build(&action("/a b", &[]), "10.0.0.1", 80).unwrap_err();
        assert_eq!(space.field, "preStop.httpGet.path");
        let host = build(&action("/", &[]), "evil\nhost", 80).unwrap_err();
        assert_eq!(host.field, "preStop.httpGet.host");
        let scheme = build(
            &HTTPGetAction {
                scheme: Some("FTP".into()),
                ..action("/", &[])
            },
            "10.0.0.1",
            80,
        )
        .unwrap_err();
        assert_eq!(
            scheme.to_string(),
            "preStop.httpGet.scheme \"FTP\": must be HTTP or HTTPS"
        );
    }
}
