//! How kruise-daemon kills one container of a ContainerRecreateRequest, as kubelet's `killContainer` does:
//! the request's preStop hook first ([`run_pre_stop`]: exec through CRI `ExecSync`, HTTP GET
//! ([`super::http_hook`]) or TCP connect, to the hook's host or else the pod's IP ([`super::pod_address`]),
//! bounded by the grace period), then CRI `StopContainer` with the grace that is left (at least 2 s) as its
//! timeout ([`stop_container`]), so the runtime sends SIGTERM and SIGKILL after that timeout. Between the two
//! the worker records the stop in the request's status ([`super::recorded_kill`]).

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ContainerPort;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1beta1::{ContainerRecreateRequest, CrrProbeHandler};
use kruise_runtime::harness::object_key;

use kruise_lifecycle::container_recreate::daemon::Grace;
use kruise_runtime::cri::CriClient;

use super::hook_error::{HookError, InvalidField};
use super::http_hook;
use super::pod_address::{PodIp, hook_host};

/// Whether the preStop hook of `container` connects to the pod's IP (an HTTP or TCP hook naming no host):
/// only then is the IP looked up.
#[must_use]
pub fn needs_pod_ip(crr: &ContainerRecreateRequest, container: &str) -> bool {
    let no_host = |host: Option<&String>| host.is_none_or(String::is_empty);
    crr.spec
        .containers
        .iter()
        .filter(|c| c.name == container)
        .filter_map(|c| c.pre_stop.as_ref())
        .any(|hook| {
            hook.exec.is_none()
                && (hook
                    .http_get
                    .as_ref()
                    .is_some_and(|http| no_host(http.host.as_ref()))
                    || hook
                        .tcp_socket
                        .as_ref()
                        .is_some_and(|tcp| no_host(tcp.host.as_ref())))
        })
}

/// Runs the preStop hook of `container` (if it has one and the grace period is positive) against the
/// incarnation `container_id`, bounded by the grace period: how long it took (`None`: no hook ran). `pod_ip`
/// is where HTTP and TCP hooks that name no host connect. A failing hook is logged and the kill goes on,
/// like kubelet.
pub async fn run_pre_stop(
    cri: &CriClient,
    crr: &ContainerRecreateRequest,
    container: &str,
    container_id: &str,
    pod_ip: &PodIp,
) -> Option<Duration> {
    let budget = Grace::of(crr).hook_budget()?;
    let (hook, ports) = crr
        .spec
        .containers
        .iter()
        .find(|c| c.name == container)
        .and_then(|c| c.pre_stop.as_ref().map(|hook| (hook, c.ports.as_slice())))?;
    let started = Instant::now();
    let target = HookTarget {
        crr: object_key(crr),
        container,
        container_id,
        ports,
        pod_ip,
    };
    let outcome = tokio::time::timeout(budget, run_hook(cri, hook, &target, budget)).await;
    match outcome {
        Ok(Ok(())) => tracing::info!(container, "preStop hook done"),
        Ok(Err(error)) => tracing::warn!(container, %error, "preStop hook failed"),
        Err(_) => tracing::warn!(
            container,
            ?budget,
            "preStop hook did not finish in the grace period"
        ),
    }
    Some(started.elapsed())
}

/// Stops the incarnation `container_id` with the grace left after a preStop hook that took `hook_took`.
///
/// # Errors
/// The runtime's error when the stop failed.
pub async fn stop_container(
    cri: &CriClient,
    crr: &ContainerRecreateRequest,
    container_id: &str,
    hook_took: Option<Duration>,
) -> Result<(), String> {
    cri.stop_container(container_id, Grace::of(crr).stop_timeout(hook_took))
        .await
        .map_err(|error| error.to_string())
}

/// What a hook runs against: the request (`namespace/name`), the container, its ports and the pod's IP.
struct HookTarget<'a> {
    crr: String,
    container: &'a str,
    container_id: &'a str,
    ports: &'a [ContainerPort],
    pod_ip: &'a PodIp,
}

impl HookTarget<'_> {
    fn invalid(&self, source: InvalidField) -> HookError {
        HookError::Invalid {
            crr: self.crr.clone(),
            container: self.container.to_owned(),
            source,
        }
    }

    fn failed(&self, message: String) -> HookError {
        HookError::Failed {
            crr: self.crr.clone(),
            container: self.container.to_owned(),
            message,
        }
    }

    fn host(&self, explicit: Option<&str>, field: &str) -> Result<String, HookError> {
        let host = hook_host(explicit, self.pod_ip).map_err(|reason| HookError::NoPodIp {
            crr: self.crr.clone(),
            container: self.container.to_owned(),
            reason,
        })?;
        if host.contains(['\r', '\n']) {
            return Err(self.invalid(InvalidField::new(
                field,
                host,
                "contains a carriage return or line feed",
            )));
        }
        Ok(host)
    }
}

async fn run_hook(
    cri: &CriClient,
    hook: &CrrProbeHandler,
    target: &HookTarget<'_>,
    budget: Duration,
) -> Result<(), HookError> {
    if let Some(exec) = &hook.exec {
        let command = exec.command.clone().unwrap_or_default();
        let response = cri
            .exec_sync(target.container_id, command, budget)
            .await
            .map_err(|error| target.failed(error.to_string()))?;
        return if response.exit_code == 0 {
            Ok(())
        } else {
            Err(target.failed(format!("exec exited with {}", response.exit_code)))
        };
    }
    if let Some(http) = &hook.http_get {
        let port = resolve_port(&http.port, target.ports, "preStop.httpGet.port")
            .map_err(|source| target.invalid(source))?;
        let host = target.host(http.host.as_deref(), "preStop.httpGet.host")?;
        let request =
            http_hook::build(http, &host, port).map_err(|source| target.invalid(source))?;
        let status = http_hook::send(request)
            .await
            .map_err(|message| target.failed(message))?;
        // kubelet's HTTP handlers succeed on 2xx and 3xx.
        return if status.is_success() || status.is_redirection() {
            Ok(())
        } else {
            Err(target.failed(format!("httpGet {host}:{port} answered {status}")))
        };
    }
    if let Some(tcp) = &hook.tcp_socket {
        let port = resolve_port(&tcp.port, target.ports, "preStop.tcpSocket.port")
            .map_err(|source| target.invalid(source))?;
        let host = target.host(tcp.host.as_deref(), "preStop.tcpSocket.host")?;
        tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|error| target.failed(format!("tcpSocket {host}:{port}: {error}")))?;
    }
    Ok(())
}

/// A hook's port (`field`): a number from 1 to 65535, or the name of one of the container's ports.
fn resolve_port(
    port: &IntOrString,
    ports: &[ContainerPort],
    field: &str,
) -> Result<u16, InvalidField> {
    match port {
        IntOrString::Int(number) => u16::try_from(*number)
            .ok()
            .filter(|&number| number != 0)
            .ok_or_else(|| InvalidField::new(field, number.to_string(), "is not a port number")),
        IntOrString::String(name) => ports
            .iter()
            .find(|p| p.name.as_deref() == Some(name.as_str()))
            .and_then(|p| u16::try_from(p.container_port).ok())
            .filter(|&number| number != 0)
            .ok_or_else(|| InvalidField::new(field, name, "names no port of the container")),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{HTTPGetAction, HTTPHeader, TCPSocketAction};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;
    use tokio::task::JoinHandle;

    use super::*;

    /// Generous: only reached when a hook hangs (the failure these tests guard against).
    const HANG: Duration = Duration::from_secs(60);

    fn cri() -> CriClient {
        CriClient::connect_lazy("unix:///nonexistent/kruise-daemon-test.sock").unwrap()
    }

    fn target<'a>(pod_ip: &'a PodIp, ports: &'a [ContainerPort]) -> HookTarget<'a> {
        HookTarget {
            crr: "ns/restart-web".into(),
            container: "web",
            container_id: "c1",
            ports,
            pod_ip,
        }
    }

    fn http_hook(path: &str, port: u16) -> CrrProbeHandler {
        CrrProbeHandler {
            http_get: Some(HTTPGetAction {
                path: Some(path.into()),
                port: IntOrString::Int(i32::from(port)),
                http_headers: Some(vec![HTTPHeader {
                    name: "X-Reason".into(),
                    value: "recreate".into(),
                }]),
                ..HTTPGetAction::default()
            }),
            ..CrrProbeHandler::default()
        }
    }

    /// A listener on a loopback address other than 127.0.0.1, standing for the pod's IP.
    async fn pod_listener() -> (TcpListener, PodIp, u16) {
        let listener = TcpListener::bind("127.0.0.2:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        (listener, PodIp::Known("127.0.0.2".into()), port)
    }

    /// Accepts one connection, reads the request head, answers `head` and then `body` once, or forever
    /// when `endless` (until the client goes away). The request head it read.
    fn serve_once(listener: TcpListener, head: &'static str, endless: bool) -> JoinHandle<String> {
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buffer = [0_u8; 1024];
            while !request.ends_with(b"\r\n\r\n") {
                let read = stream.read(&mut buffer).await.unwrap();
                if read == 0 {
                    break;
                }
                request.extend_from_slice(buffer.get(..read).unwrap_or_default());
            }
            let _ = stream.write_all(head.as_bytes()).await;
            let chunk = vec![b'x'; 64 * 1024];
            while endless && stream.write_all(&chunk).await.is_ok() {}
            String::from_utf8_lossy(&request).into_owned()
        })
    }

    #[tokio::test]
    async fn an_http_hook_without_host_goes_to_the_pod_ip_with_its_path_and_headers() {
        let (listener, pod_ip, port) = pod_listener().await;
        let server = serve_once(
            listener,
            "HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n",
            false,
        );
        let hook = http_hook("/shutdown?drain=1", port);
        let outcome =
            tokio::time::timeout(HANG, run_hook(&cri(), &hook, &target(&pod_ip, &[]), HANG))
                .await
                .unwrap();
        assert!(outcome.is_ok(), "{outcome:?}");
        let request = server.await.unwrap();
        assert!(
            request.starts_with("GET /shutdown?drain=1 HTTP/1.1\r\n"),
            "{request}"
        );
        assert!(
            request.contains(&format!("host: 127.0.0.2:{port}\r\n")),
            "{request}"
        );
        assert!(request.contains("x-reason: recreate\r\n"), "{request}");
    }

    #[tokio::test]
    async fn a_tcp_hook_without_host_connects_to_the_pod_ip() {
        let (listener, pod_ip, port) = pod_listener().await;
        let accepted = tokio::spawn(async move { listener.accept().await.is_ok() });
        let hook = CrrProbeHandler {
            tcp_socket: Some(TCPSocketAction {
                port: IntOrString::String("admin".into()),
                ..TCPSocketAction::default()
            }),
            ..CrrProbeHandler::default()
        };
        let ports = [ContainerPort {
            name: Some("admin".into()),
            container_port: i32::from(port),
            ..ContainerPort::default()
        }];
        let outcome = tokio::time::timeout(
            HANG,
            run_hook(&cri(), &hook, &target(&pod_ip, &ports), HANG),
        )
        .await
        .unwrap();
        assert!(outcome.is_ok(), "{outcome:?}");
        assert!(accepted.await.unwrap());
    }

    #[tokio::test]
    async fn a_hook_without_host_fails_when_the_pod_has_no_ip() {
        let pod_ip = PodIp::Unknown("the pod's sandbox s1 has no IP".into());
        let error = run_hook(&cri(), &http_hook("/", 8080), &target(&pod_ip, &[]), HANG)
            .await
            .unwrap_err();
        assert!(matches!(error, HookError::NoPodIp { .. }), "{error:?}");
        assert_eq!(
            error.to_string(),
            "ContainerRecreateRequest ns/restart-web container web: preStop hook has no host: the pod's sandbox s1 has no IP"
        );
    }

    #[tokio::test]
    async fn a_path_with_cr_lf_is_refused_before_anything_is_sent() {
        let (_listener, pod_ip, port) = pod_listener().await;
        let hook = http_hook("/stop HTTP/1.1\r\nHost: admin\r\n\r\nGET /delete", port);
        let error =
            tokio::time::timeout(HANG, run_hook(&cri(), &hook, &target(&pod_ip, &[]), HANG))
                .await
                .expect("the hook was sent and waited for an answer")
                .unwrap_err();
        assert!(matches!(error, HookError::Invalid { .. }), "{error:?}");
        let message = error.to_string();
        assert!(
            message.starts_with("ContainerRecreateRequest ns/restart-web container web: invalid preStop hook: preStop.httpGet.path"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn an_endless_answer_is_read_only_up_to_the_bound() {
        let (listener, pod_ip, port) = pod_listener().await;
        let server = serve_once(
            listener,
            "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\n",
            true,
        );
        let outcome = tokio::time::timeout(
            HANG,
            run_hook(&cri(), &http_hook("/", port), &target(&pod_ip, &[]), HANG),
        )
        .await
        .expect("the hook kept reading an endless answer");
        assert!(outcome.is_ok(), "{outcome:?}");
        // The daemon went away: the server's writes fail and it stops.
        tokio::time::timeout(HANG, server).await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn an_error_status_fails_the_hook() {
        let (listener, pod_ip, port) = pod_listener().await;
        let _server = serve_once(
            listener,
            "HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n",
            false,
        );
        let error = run_hook(&cri(), &http_hook("/", port), &target(&pod_ip, &[]), HANG)
            .await
            .unwrap_err();
        assert!(error.to_string().contains("answered 500"), "{error}");
    }

    #[test]
    fn only_http_and_tcp_hooks_without_host_need_the_pod_ip() {
        let crr = |hook: serde_json::Value| -> ContainerRecreateRequest {
            serde_json::from_value(serde_json::json!({
                "metadata": {"name": "r", "namespace": "ns"},
                "spec": {"podName": "p", "containers": [{"name": "web", "preStop": hook}]},
            }))
            .unwrap()
        };
        assert!(needs_pod_ip(
            &crr(serde_json::json!({"httpGet": {"port": 80}})),
            "web"
        ));
        assert!(needs_pod_ip(
            &crr(serde_json::json!({"tcpSocket": {"port": 80, "host": ""}})),
            "web"
        ));
        assert!(!needs_pod_ip(
            &crr(serde_json::json!({"httpGet": {"port": 80, "host": "svc"}})),
            "web"
        ));
        assert!(!needs_pod_ip(
            &crr(serde_json::json!({"exec": {"command": ["true"]}})),
            "web"
        ));
        assert!(!needs_pod_ip(
            &crr(serde_json::json!({"httpGet": {"port": 80}})),
            "other"
        ));
    }

    #[test]
    fn ports_resolve_by_number_or_name() {
        let ports = [ContainerPort {
            name: Some("http".into()),
            container_port: 8080,
            ..ContainerPort::default()
        }];
        let field = "preStop.httpGet.port";
        assert_eq!(resolve_port(&IntOrString::Int(80), &ports, field), Ok(80));
        assert_eq!(
            resolve_port(&IntOrString::String("http".into()), &ports, field),
            Ok(8080)
        );
        let unknown = resolve_port(&IntOrString::String("grpc".into()), &ports, field).unwrap_err();
        assert_eq!(
            unknown.to_string(),
            "preStop.httpGet.port \"grpc\": names no port of the container"
        );
        assert!(resolve_port(&IntOrString::Int(-1), &ports, field).is_err());
        assert!(resolve_port(&IntOrString::Int(0), &ports, field).is_err());
    }
}
