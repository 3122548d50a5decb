//! Where a preStop HTTP or TCP hook connects when it names no host: the pod's IP, as kubelet does. kubelet
//! takes it from the runtime's status of the pod (the IP of the pod's sandbox, also what it reports as
//! `status.podIP`), so the daemon asks the same runtime: the ready sandbox of the pod (by kubelet's pod-UID
//! label) and its `PodSandboxStatus` network IP. Never the loopback address: the daemon runs in the host's
//! network, where 127.0.0.1 is the node, not the pod. A pod without an IP (a host-network pod, whose sandbox
//! has none, or one whose network is not set up) fails the hook with the reason, as kubelet's does.

use k8s_cri::v1 as cri;
use kruise_runtime::cri::{CriClient, CriError, labels};

/// The pod's IP for hooks that name no host, or why it is not known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PodIp {
    /// The IP of the pod's ready sandbox.
    Known(String),
    /// Why there is no IP (the hook then fails with this reason).
    Unknown(String),
}

/// The host a hook connects to: its own `host` when it names one, else the pod's IP.
///
/// # Errors
/// The hook names no host and the pod's IP is not known: the reason.
pub fn hook_host(explicit: Option<&str>, pod_ip: &PodIp) -> Result<String, String> {
    match (explicit.filter(|host| !host.is_empty()), pod_ip) {
        (Some(host), _) => Ok(host.to_owned()),
        (None, PodIp::Known(ip)) => Ok(ip.clone()),
        (None, PodIp::Unknown(reason)) => Err(reason.clone()),
    }
}

/// The newest ready sandbox among `sandboxes` (those of one pod).
#[must_use]
pub fn ready_sandbox(sandboxes: &[cri::PodSandbox]) -> Option<&cri::PodSandbox> {
    sandboxes
        .iter()
        .filter(|sandbox| sandbox.state == i32::from(cri::PodSandboxState::SandboxReady))
        .max_by_key(|sandbox| sandbox.created_at)
}

/// The IP in a sandbox's status (kubelet uses the first one).
#[must_use]
pub fn sandbox_ip(status: &cri::PodSandboxStatus) -> PodIp {
    match status.network.as_ref().map(|network| network.ip.as_str()) {
        Some(ip) if !ip.is_empty() => PodIp::Known(ip.to_owned()),
        _ => PodIp::Unknown(format!(
            "the pod's sandbox {} has no IP (a host-network pod, or its network is not set up)",
            status.id
        )),
    }
}

/// The IP of the pod with UID `uid`, from the runtime.
///
/// # Errors
/// The runtime could not be asked.
pub async fn lookup(cri: &CriClient, uid: &str) -> Result<PodIp, CriError> {
    let sandboxes = cri.list_sandboxes(labels::pod_filter(uid)).await?;
    let Some(sandbox) = ready_sandbox(&sandboxes) else {
        return Ok(PodIp::Unknown(format!(
            "the pod with UID {uid} has no ready sandbox on this node"
        )));
    };
    match cri.sandbox_status(&sandbox.id).await {
        Ok(status) => Ok(sandbox_ip(&status)),
        Err(error) if error.is_not_found() => Ok(PodIp::Unknown(format!(
            "the pod's sandbox {} is gone",
            sandbox.id
        ))),
        Err(error) => Err(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_host_wins_then_the_pod_ip_never_loopback() {
        let known = PodIp::Known("10.244.1.7".into());
        assert_eq!(hook_host(Some("svc.local"), &known).unwrap(), "svc.local");
        assert_eq!(hook_host(Some(""), &known).unwrap(), "10.244.1.7");
        assert_eq!(hook_host(None, &known).unwrap(), "10.244.1.7");
        let unknown = PodIp::Unknown("no IP".into());
        assert_eq!(hook_host(None, &unknown).unwrap_err(), "no IP");
        assert_eq!(hook_host(Some("10.0.0.9"), &unknown).unwrap(), "10.0.0.9");
    }

    #[test]
    fn the_newest_ready_sandbox_gives_the_ip() {
        let sandbox = |id: &str, ready: bool, created_at: i64| cri::PodSandbox {
            id: id.into(),
            state: i32::from(if ready {
                cri::PodSandboxState::SandboxReady
            } else {
                cri::PodSandboxState::SandboxNotready
            }),
            created_at,
            ..cri::PodSandbox::default()
        };
        let sandboxes = [
            sandbox("old", true, 1),
            sandbox("new", true, 2),
            sandbox("dead", false, 3),
        ];
        assert_eq!(ready_sandbox(&sandboxes).unwrap().id, "new");
        assert!(ready_sandbox(&[sandbox("dead", false, 3)]).is_none());
        let status = |ip: &str| cri::PodSandboxStatus {
            id: "new".into(),
            network: Some(cri::PodSandboxNetworkStatus {
                ip: ip.into(),
                ..cri::PodSandboxNetworkStatus::default()
            }),
            ..cri::PodSandboxStatus::default()
        };
        assert_eq!(
            sandbox_ip(&status("10.1.0.4")),
            PodIp::Known("10.1.0.4".into())
        );
        assert!(
            matches!(sandbox_ip(&status("")), PodIp::Unknown(reason) if reason.contains("has no IP"))
        );
    }
}
