//! Running one probe once, as kubelet's probers do (upstream's `prober.runProbe`): `exec` runs the
//! command in the container through CRI `ExecSync` (exit code 0 succeeds; the output is the message);
//! `tcpSocket` connects to the host (the pod's IP when it names none); `httpGet` sends a GET to the pod's
//! IP (or its host) and succeeds on a status from 200 to 399. Each is bounded by `timeoutSeconds`. gRPC
//! probes are not supported (nor are they upstream).

use std::time::Duration;

use k8s_openapi::api::core::v1::Probe;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::apps::v1alpha1::ProbeState;
use kruise_runtime::cri::{CriClient, CriError};
use tokio::net::TcpStream;

use crate::http_hook;

/// Why a probe could not be run at all (not counted as a result, as upstream's worker skips errors).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProbeActionError {
    /// The probe has no `exec`, `tcpSocket` or `httpGet` handler.
    #[error("the probe has no exec, tcpSocket or httpGet handler")]
    NoHandler,
    /// The port is not a number (the controller resolves named ports).
    #[error("port {0:?} is not a number from 1 to 65535")]
    Port(String),
    /// The HTTP request cannot be built.
    #[error("httpGet: {0}")]
    Request(String),
    /// The runtime failed to run the command.
    #[error("exec: {0}")]
    Runtime(String),
}

/// Runs `probe` once against container `container_id` of the pod at `pod_ip`: the state and message.
///
/// # Errors
/// See [`ProbeActionError`].
pub async fn run(
    cri: &CriClient,
    probe: &Probe,
    container_id: &str,
    pod_ip: &str,
    timeout: Duration,
) -> Result<(ProbeState, String), ProbeActionError> {
    if let Some(exec) = &probe.exec {
        let command = exec.command.clone().unwrap_or_default();
        return match cri.exec_sync(container_id, command, timeout).await {
            Ok(response) => {
                let mut output = String::from_utf8_lossy(&response.stdout).into_owned();
                output.push_str(&String::from_utf8_lossy(&response.stderr));
                let state = if response.exit_code == 0 {
                    ProbeState::Succeeded
                } else {
                    ProbeState::Failed
                };
                Ok((state, output))
            }
            Err(
                error @ (CriError::Timeout { .. }
                | CriError::Status {
                    code: tonic::Code::DeadlineExceeded,
                    ..
                }),
            ) => Ok((ProbeState::Failed, format!("command timed out: {error}"))),
            Err(error) => Err(ProbeActionError::Runtime(error.to_string())),
        };
    }
    if let Some(tcp) = &probe.tcp_socket {
        let port = port_number(&tcp.port)?;
        let host = tcp
            .host
            .as_deref()
            .filter(|host| !host.is_empty())
            .unwrap_or(pod_ip);
        let connected = tokio::time::timeout(timeout, TcpStream::connect((host, port))).await;
        return Ok(match connected {
            Ok(Ok(_)) => (ProbeState::Succeeded, String::new()),
            Ok(Err(error)) => (
                ProbeState::Failed,
                format!("dial tcp {host}:{port}: {error}"),
            ),
            Err(_) => (
                ProbeState::Failed,
                format!("dial tcp {host}:{port}: timed out"),
            ),
        });
    }
    if let Some(http) = &probe.http_get {
        let port = port_number(&http.port)?;
        let host = http
            .host
            .as_deref()
            .filter(|host| !host.is_empty())
            .unwrap_or(pod_ip);
        let request = http_hook::build(http, host, port)
            .map_err(|error| ProbeActionError::Request(error.to_string()))?;
        return Ok(
            match tokio::time::timeout(timeout, http_hook::send(request)).await {
                Ok(Ok(status)) if (200..400).contains(&status.as_u16()) => {
                    (ProbeState::Succeeded, String::new())
                }
                Ok(Ok(status)) => (
                    ProbeState::Failed,
                    format!("HTTP probe failed with statuscode: {}", status.as_u16()),
                ),
                Ok(Err(error)) => (ProbeState::Failed, error),
                Err(_) => (
                    ProbeState::Failed,
                    format!("httpGet {host}:{port}: timed out"),
                ),
            },
        );
    }
    Err(ProbeActionError::NoHandler)
}

fn port_number(port: &IntOrString) -> Result<u16, ProbeActionError> {
    match port {
        IntOrString::Int(number) => u16::try_from(*number)
            .ok()
            .filter(|number| *number > 0)
            .ok_or_else(|| ProbeActionError::Port(number.to_string())),
        IntOrString::String(text) => text
            .parse::<u16>()
            .ok()
            .filter(|number| *number > 0)
            .ok_or_else(|| ProbeActionError::Port(text.clone())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_numbers_from_1_to_65535() {
        assert_eq!(port_number(&IntOrString::Int(80)).unwrap(), 80);
        assert_eq!(
            port_number(&IntOrString::String("8080".into())).unwrap(),
            8080
        );
        assert!(port_number(&IntOrString::Int(0)).is_err());
        assert!(port_number(&IntOrString::Int(70000)).is_err());
        assert!(port_number(&IntOrString::String("http".into())).is_err());
    }

    #[tokio::test]
    async fn tcp_probes_connect_to_the_host() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let cri = CriClient::connect_lazy("unix:///nonexistent.sock").unwrap();
        let probe = |port: u16| Probe {
            tcp_socket: Some(k8s_openapi::api::core::v1::TCPSocketAction {
                host: None,
                port: IntOrString::Int(i32::from(port)),
            }),
            ..Probe::default()
        };
        let second = Duration::from_secs(1);
        let (state, _) = run(&cri, &probe(port), "", "127.0.0.1", second)
            .await
            .unwrap();
        assert_eq!(state, ProbeState::Succeeded);
        drop(listener);
        let (state, message) = run(&cri, &probe(port), "", "127.0.0.1", second)
            .await
            .unwrap();
        assert_eq!(state, ProbeState::Failed);
        assert!(message.contains(&format!("127.0.0.1:{port}")), "{message}");
        let empty = Probe::default();
        assert!(matches!(
            run(&cri, &empty, "", "127.0.0.1", second).await,
            Err(ProbeActionError::NoHandler)
        ));
    }
}
