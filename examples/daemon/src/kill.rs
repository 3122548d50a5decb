//! How kruise-daemon kills one container of a ContainerRecreateRequest, as kubelet's `killContainer` does:
//! the request's preStop hook first (exec through CRI `ExecSync`, HTTP GET or TCP connect, bounded by the
//! grace period), then CRI `StopContainer` with the grace that is left (at least 2 s) as its timeout, so
//! the runtime sends SIGTERM and SIGKILL after that timeout.

use std::time::{Duration, Instant};

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1beta1::{ContainerRecreateRequest, CrrProbeHandler};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use kruise_lifecycle::container_recreate::daemon::Grace;
use kruise_runtime::cri::CriClient;

/// Runs the preStop hook of `container` (if any) and stops the incarnation `container_id`.
///
/// # Errors
/// The stop failed (a failing hook is logged and the stop goes on, like kubelet).
pub async fn kill_container(
    cri: &CriClient,
    crr: &ContainerRecreateRequest,
    container: &str,
    container_id: &str,
    host: &str,
) -> Result<(), String> {
    let grace = Grace::of(crr);
    let hook = crr
        .spec
        .containers
        .iter()
        .find(|c| c.name == container)
        .and_then(|c| c.pre_stop.as_ref().map(|hook| (hook, c.ports.clone())));
    let mut took = None;
    if let (Some((hook, ports)), Some(budget)) = (hook, grace.hook_budget()) {
        let started = Instant::now();
        let outcome = tokio::time::timeout(
            budget,
            run_hook(cri, hook, &ports, container_id, host, budget),
        )
        .await;
        match outcome {
            Ok(Ok(())) => tracing::info!(container, "preStop hook done"),
            Ok(Err(error)) => tracing::warn!(container, %error, "preStop hook failed"),
            Err(_) => tracing::warn!(
                container,
                ?budget,
                "preStop hook did not finish in the grace period"
            ),
        }
        took = Some(started.elapsed());
    }
    cri.stop_container(container_id, grace.stop_timeout(took))
        .await
        .map_err(|error| error.to_string())
}

async fn run_hook(
    cri: &CriClient,
    hook: &CrrProbeHandler,
    ports: &[k8s_openapi::api::core::v1::ContainerPort],
    container_id: &str,
    host: &str,
    budget: Duration,
) -> Result<(), String> {
    if let Some(exec) = &hook.exec {
        let command = exec.command.clone().unwrap_or_default();
        let response = cri
            .exec_sync(container_id, command, budget)
            .await
            .map_err(|error| error.to_string())?;
        return if response.exit_code == 0 {
            Ok(())
        } else {
            Err(format!("exec exited with {}", response.exit_code))
        };
    }
    if let Some(http) = &hook.http_get {
        let port = resolve_port(&http.port, ports)?;
        let host = http
            .host
            .clone()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| host.to_owned());
        let path = http.path.clone().unwrap_or_else(|| "/".to_owned());
        let mut stream = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|error| format!("httpGet {host}:{port}: {error}"))?;
        stream
            .write_all(format!("GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes())
            .await
            .map_err(|error| error.to_string())?;
        let mut answer = Vec::new();
        stream
            .read_to_end(&mut answer)
            .await
            .map_err(|error| error.to_string())?;
        return Ok(());
    }
    if let Some(tcp) = &hook.tcp_socket {
        let port = resolve_port(&tcp.port, ports)?;
        let host = tcp
            .host
            .clone()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| host.to_owned());
        tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|error| format!("tcpSocket {host}:{port}: {error}"))?;
    }
    Ok(())
}

/// A hook's port: a number, or the name of one of the container's ports.
fn resolve_port(
    port: &IntOrString,
    ports: &[k8s_openapi::api::core::v1::ContainerPort],
) -> Result<u16, String> {
    match port {
        IntOrString::Int(number) => {
            u16::try_from(*number).map_err(|_| format!("invalid port {number}"))
        }
        IntOrString::String(name) => ports
            .iter()
            .find(|p| p.name.as_deref() == Some(name.as_str()))
            .and_then(|p| u16::try_from(p.container_port).ok())
            .ok_or_else(|| format!("port {name:?} not found in the container's ports")),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ContainerPort;

    use super::*;

    #[test]
    fn ports_resolve_by_number_or_name() {
        let ports = [ContainerPort {
            name: Some("http".into()),
            container_port: 8080,
            ..ContainerPort::default()
        }];
        assert_eq!(resolve_port(&IntOrString::Int(80), &ports), Ok(80));
        assert_eq!(
            resolve_port(&IntOrString::String("http".into()), &ports),
            Ok(8080)
        );
        assert!(resolve_port(&IntOrString::String("grpc".into()), &ports).is_err());
        assert!(resolve_port(&IntOrString::Int(-1), &ports).is_err());
    }
}
