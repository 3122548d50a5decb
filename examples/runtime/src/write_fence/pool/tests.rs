use std::error::Error;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::Request;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::client::Body;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::write_fence::WriteFence;
use crate::write_fence::fenced_stream::ConnectionFenced;

const USER_AGENT: &str = "kruise-manager/test (replica-a)";
const CONFIG_MAP: &str =
    r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"}}"#;

/// One complete request the test server received.
#[derive(Clone, Debug)]
struct Received {
    /// `METHOD PATH HTTP/1.1`.
    request_line: String,
    user_agent: Option<String>,
}

/// A plain HTTP/1.1 "API server" on a local port that records every complete request (head and
/// `Content-Length` body) and answers each with a ConfigMap.
async fn recording_server() -> (String, Arc<Mutex<Vec<Received>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let received = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&received);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(serve_connection(stream, Arc::clone(&recorded)));
        }
    });
    (url, received)
}

async fn serve_connection(mut stream: TcpStream, received: Arc<Mutex<Vec<Received>>>) {
    let mut buffer = Vec::new();
    let mut chunk = [0_u8; 4096];
    loop {
        while let Some(request) = take_request(&mut buffer) {
            received.lock().unwrap().push(request);
            let response = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{CONFIG_MAP}",
                CONFIG_MAP.len()
            );
            if stream.write_all(response.as_bytes()).await.is_err() {
                return;
            }
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(read) => buffer.extend_from_slice(&chunk[..read]),
        }
    }
}

/// The first complete request in `buffer` (removed from it), if one has arrived whole.
fn take_request(buffer: &mut Vec<u8>) -> Option<Received> {
    let head_end = buffer.windows(4).position(|window| window == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let header = |name: &str| {
        head.lines().skip(1).find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.trim()
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    };
    let length: usize = header("content-length").map_or(0, |value| value.parse().unwrap());
    let end = head_end + 4 + length;
    if buffer.len() < end {
        return None;
    }
    buffer.drain(..end);
    Some(Received {
        request_line: head.lines().next().unwrap_or_default().to_owned(),
        user_agent: header("user-agent"),
    })
}

fn config_for(url: &str) -> kube::Config {
    let mut config = kube::Config::new(url.parse().unwrap());
    config.default_namespace = "ns".into();
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static(USER_AGENT),
    ));
    config
}

fn config_map() -> ConfigMap {
    serde_json::from_str(CONFIG_MAP).unwrap()
}

/// Whether `error` was caused by a [`FencedStream`](super::super::fenced_stream::FencedStream)
/// refusing to write.
fn refused_by_the_connection(error: &(dyn Error + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(current) = cause {
        let fenced = current
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .is_some_and(<dyn Error + Send + Sync>::is::<ConnectionFenced>);
        if fenced {
            return true;
        }
        cause = current.source();
    }
    false
}

fn request_lines(received: &Mutex<Vec<Received>>) -> Vec<String> {
    received
        .lock()
        .unwrap()
        .iter()
        .map(|request| request.request_line.clone())
        .collect()
}

#[tokio::test]
async fn a_write_that_passed_the_request_check_is_refused_at_the_socket_once_the_fence_shuts() {
    let (url, received) = recording_server().await;
    let fence = WriteFence::closed();
    fence.open_until(Instant::now() + Duration::from_secs(3600));
    let pool = fence
        .pool_client_builder(&config_for(&url))
        .unwrap()
        .build();
    let api: Api<ConfigMap> = Api::namespaced(fence.guard(&pool), "ns");

    // The term is on: a read opens a connection (kept in the pool), and it carries the user agent the
    // API server's audit log tells replicas apart by.
    api.get("c").await.expect("a read while the fence is open");
    api.create(&PostParams::default(), &config_map())
        .await
        .expect("a write while the fence is open");
    let sent = received.lock().unwrap().clone();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(
        sent.iter()
            .all(|request| request.user_agent.as_deref() == Some(USER_AGENT)),
        "the config's user agent is sent: {sent:?}"
    );

    // The fence shuts after the request-level check admitted the write and before its bytes reach the
    // socket (as when the process freezes in between and wakes after its term).
    let shut_on_the_way = {
        let pool = pool.clone();
        let fence = fence.clone();
        tower::service_fn(move |request: Request<Body>| {
            fence.close();
            let pool = pool.clone();
            async move { pool.send(request).await }
        })
    };
    let late = fence.guard(&kube::Client::new(shut_on_the_way, "ns"));
    let late_api: Api<ConfigMap> = Api::namespaced(late, "ns");
    let refused = late_api
        .create(&PostParams::default(), &config_map())
        .await
        .expect_err("the write's bytes meet a shut fence");
    assert!(
        refused_by_the_connection(&refused),
        "refused by the fenced connection, not elsewhere: {refused:?}"
    );
    assert!(
        !fence.admits_writes_at(Instant::now()),
        "the fence was shut on the way"
    );

    // Reads through the fenced pool fail as well now (their request bytes are held back too).
    let read = Api::<ConfigMap>::namespaced(pool.clone(), "ns")
        .get("c")
        .await
        .expect_err("nothing leaves the fenced pool once the fence is shut");
    assert!(refused_by_the_connection(&read), "{read:?}");
    assert_eq!(
        request_lines(&received),
        [
            "GET /api/v1/namespaces/ns/configmaps/c HTTP/1.1",
            "POST /api/v1/namespaces/ns/configmaps? HTTP/1.1",
        ],
        "no request reached the server after the fence shut"
    );
}
