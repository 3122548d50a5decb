//! The Job sidecar terminator (upstream `pkg/controller/sidecarterminator`): a Job pod never finishes while a
//! long-running sidecar keeps running, so once every main container is done (`Never`: exited; `OnFailure`: exited
//! with code 0) the sidecars that carry `KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT=true` are stopped through a
//! ContainerRecreateRequest, and those with `KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE=<image>` by swapping
//! their image in place (for virtual-kubelet nodes, where the daemon cannot kill). The pod's phase is set to
//! `Succeeded` (every main container exited 0) or `Failed`, with the condition `SidecarTerminated`, before the
//! sidecars are stopped: kubelet never moves a pod out of a terminal phase, so the sidecars' exit codes do not
//! matter.
//!
//! [`decide`] is the pure decision; [`controller`] runs it in kruise-manager.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_examples::sidecar_terminator::{Terminal, decide};
//!
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "job-x", "namespace": "ns", "uid": "u-1"},
//!     "spec": {"restartPolicy": "Never", "containers": [
//!         {"name": "main"},
//!         {"name": "proxy", "env": [{"name": "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT", "value": "true"}]}]},
//!     "status": {"phase": "Running", "containerStatuses": [
//!         {"name": "main", "ready": false, "restartCount": 0, "image": "", "imageID": "",
//!          "state": {"terminated": {"exitCode": 0}}},
//!         {"name": "proxy", "ready": true, "restartCount": 0, "image": "", "imageID": "",
//!          "state": {"running": {}}}]},
//! })).unwrap();
//! let plan = decide(&pod, false).unwrap();
//! assert_eq!(plan.terminate, Some(Terminal::Succeeded));
//! assert_eq!(plan.kill, ["proxy"]);
//! assert_eq!(plan.crr_name(&pod), "sidecar-termination-u-1");
//! ```

pub mod controller;

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{Container, ContainerStatus, Pod};
use kruise_api::keys::sidecar_terminator::{
    TERMINATE_SIDECAR_WHEN_JOB_EXIT_ENV, TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE_ENV,
};

/// The pod condition the terminator sets when it ends the pod (upstream's `SidecarTerminated`).
pub use kruise_api::keys::sidecar_terminator::SIDECAR_TERMINATED_CONDITION;

/// The phase the terminator gives a pod whose main containers are done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Terminal {
    /// Every main container exited with code 0.
    Succeeded,
    /// Some main container did not.
    Failed,
}

impl Terminal {
    /// The pod phase.
    #[must_use]
    pub fn phase(self) -> &'static str {
        match self {
            Self::Succeeded => "Succeeded",
            Self::Failed => "Failed",
        }
    }
}

/// What to do to a pod whose main containers are done.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// Sidecars to swap in place to their termination image: `(container, image)`.
    pub swap_images: Vec<(String, String)>,
    /// Set this phase and the `SidecarTerminated` condition (unless the pod is already terminal).
    pub terminate: Option<Terminal>,
    /// Sidecars to stop through a ContainerRecreateRequest (sorted; none when all are done already).
    pub kill: Vec<String>,
}

impl Plan {
    /// The name of the request that stops the sidecars: `sidecar-termination-<pod uid>`.
    #[must_use]
    pub fn crr_name(&self, pod: &Pod) -> String {
        format!(
            "sidecar-termination-{}",
            pod.metadata.uid.as_deref().unwrap_or_default()
        )
    }
}

fn env<'a>(container: &'a Container, name: &str) -> Option<&'a str> {
    container
        .env
        .iter()
        .flatten()
        .find(|env| env.name == name)
        .and_then(|env| env.value.as_deref())
}

fn kills(container: &Container) -> bool {
    env(container, TERMINATE_SIDECAR_WHEN_JOB_EXIT_ENV)
        .is_some_and(|value| value.eq_ignore_ascii_case("true"))
}

fn swap_image(container: &Container) -> Option<&str> {
    env(container, TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE_ENV).filter(|image| !image.is_empty())
}

/// Whether a container is a sidecar to terminate (either switch).
#[must_use]
pub fn is_sidecar(container: &Container) -> bool {
    kills(container) || swap_image(container).is_some()
}

fn statuses(pod: &Pod) -> &[ContainerStatus] {
    pod.status
        .as_ref()
        .and_then(|status| status.container_statuses.as_deref())
        .unwrap_or_default()
}

fn containers(pod: &Pod) -> &[Container] {
    pod.spec
        .as_ref()
        .map_or(&[][..], |spec| &spec.containers[..])
}

fn exit_code(status: &ContainerStatus) -> Option<i32> {
    status
        .state
        .as_ref()
        .and_then(|state| state.terminated.as_ref())
        .map(|terminated| terminated.exit_code)
}

/// Every container of `names` has exited (`succeeded`: with code 0). Like upstream, false while the pod
/// status does not list every container.
fn all_done(pod: &Pod, names: &BTreeSet<&str>, succeeded: bool) -> bool {
    if containers(pod).len() != statuses(pod).len() {
        return false;
    }
    statuses(pod)
        .iter()
        .filter(|status| names.contains(status.name.as_str()))
        .all(|status| match exit_code(status) {
            None => false,
            Some(code) => !succeeded || code == 0,
        })
}

/// Upstream's `isInterestingPod` + `doReconcile`: `None` when the pod is not (or no longer) one to act on.
/// `on_virtual_kubelet`: the pod runs on a virtual-kubelet node, where only image swaps work.
#[must_use]
pub fn decide(pod: &Pod, on_virtual_kubelet: bool) -> Option<Plan> {
    let phase = kruise_api::pod::phase(pod);
    let restart_policy = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.restart_policy.as_deref())
        .unwrap_or("Always");
    if pod.metadata.deletion_timestamp.is_some() || phase == "Pending" || restart_policy == "Always"
    {
        return None;
    }
    let sidecars: BTreeSet<&str> = containers(pod)
        .iter()
        .filter(|container| is_sidecar(container))
        .map(|container| container.name.as_str())
        .collect();
    let main: BTreeSet<&str> = containers(pod)
        .iter()
        .filter(|container| !is_sidecar(container))
        .map(|container| container.name.as_str())
        .collect();
    if sidecars.is_empty() || all_done(pod, &sidecars, false) {
        return None;
    }
    let main_done = match restart_policy {
        "Never" => all_done(pod, &main, false),
        "OnFailure" => all_done(pod, &main, true),
        _ => false,
    };
    if !main_done {
        return None;
    }
    let unfinished = |name: &str| {
        !statuses(pod)
            .iter()
            .any(|status| status.name == name && exit_code(status).is_some())
    };
    let mut plan = Plan::default();
    for container in containers(pod) {
        if !unfinished(&container.name) {
            continue;
        }
        if kills(container) && !on_virtual_kubelet {
            plan.kill.push(container.name.clone());
        } else if let Some(image) = swap_image(container)
            && container.image.as_deref() != Some(image)
        {
            plan.swap_images
                .push((container.name.clone(), image.to_owned()));
        }
    }
    plan.kill.sort();
    if !matches!(phase, "Succeeded" | "Failed") {
        plan.terminate = Some(if all_done(pod, &main, true) {
            Terminal::Succeeded
        } else {
            Terminal::Failed
        });
    }
    Some(plan)
}

#[cfg(test)]
#[allow(clippy::needless_pass_by_value, clippy::type_complexity)] // table helpers take owned JSON values
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn pod(policy: &str, phase: &str, main: Value, sidecar: Value, sidecar_env: Value) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "job-x", "namespace": "ns", "uid": "u-1"},
            "spec": {"restartPolicy": policy, "containers": [
                {"name": "main", "image": "busybox"},
                {"name": "proxy", "image": "envoy", "env": sidecar_env}]},
            "status": {"phase": phase, "containerStatuses": [
                {"name": "main", "ready": false, "restartCount": 0, "image": "", "imageID": "", "state": main},
                {"name": "proxy", "ready": true, "restartCount": 0, "image": "", "imageID": "", "state": sidecar}]},
        }))
        .unwrap()
    }

    fn exited(code: i32) -> Value {
        json!({"terminated": {"exitCode": code}})
    }

    fn kill_env() -> Value {
        json!([{"name": "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT", "value": "TRUE"}])
    }

    #[test]
    fn decisions_table() {
        let run = json!({"running": {}});
        let swap = json!([{"name": "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE", "value": "pause:1"}]);
        let killing = |terminate| Plan {
            terminate,
            kill: vec!["proxy".into()],
            ..Plan::default()
        };
        let cases: Vec<(&str, Pod, bool, Option<Plan>)> = vec![
            (
                "Never, main exited 0",
                pod("Never", "Running", exited(0), run.clone(), kill_env()),
                false,
                Some(killing(Some(Terminal::Succeeded))),
            ),
            (
                "Never, main exited 1",
                pod("Never", "Running", exited(1), run.clone(), kill_env()),
                false,
                Some(killing(Some(Terminal::Failed))),
            ),
            (
                "OnFailure, main exited 1: kubelet restarts it",
                pod("OnFailure", "Running", exited(1), run.clone(), kill_env()),
                false,
                None,
            ),
            (
                "OnFailure, main exited 0",
                pod("OnFailure", "Running", exited(0), run.clone(), kill_env()),
                false,
                Some(killing(Some(Terminal::Succeeded))),
            ),
            (
                "main still running",
                pod("Never", "Running", run.clone(), run.clone(), kill_env()),
                false,
                None,
            ),
            (
                "Always never ends",
                pod("Always", "Running", exited(0), run.clone(), kill_env()),
                false,
                None,
            ),
            (
                "no sidecar",
                pod("Never", "Running", exited(0), run.clone(), json!([])),
                false,
                None,
            ),
            (
                "sidecar done",
                pod("Never", "Succeeded", exited(0), exited(137), kill_env()),
                false,
                None,
            ),
            (
                "already terminal: only the kill is left",
                pod("Never", "Succeeded", exited(0), run.clone(), kill_env()),
                false,
                Some(killing(None)),
            ),
            (
                "virtual kubelet cannot kill",
                pod("Never", "Running", exited(0), run.clone(), kill_env()),
                true,
                Some(Plan {
                    terminate: Some(Terminal::Succeeded),
                    ..Plan::default()
                }),
            ),
            (
                "image swap",
                pod("Never", "Running", exited(0), run.clone(), swap),
                false,
                Some(Plan {
                    terminate: Some(Terminal::Succeeded),
                    swap_images: vec![("proxy".into(), "pause:1".into())],
                    ..Plan::default()
                }),
            ),
            (
                "pending",
                pod("Never", "Pending", exited(0), run, kill_env()),
                false,
                None,
            ),
        ];
        for (what, pod, vk, expected) in cases {
            assert_eq!(decide(&pod, vk), expected, "{what}");
        }
    }

    #[test]
    fn incomplete_statuses_and_swapped_images() {
        let mut partial = pod(
            "Never",
            "Running",
            exited(0),
            json!({"running": {}}),
            kill_env(),
        );
        partial
            .status
            .as_mut()
            .unwrap()
            .container_statuses
            .as_mut()
            .unwrap()
            .pop();
        assert_eq!(
            decide(&partial, false),
            None,
            "every container must be reported"
        );
        let swapped: Pod = {
            let mut pod = pod(
                "Never",
                "Succeeded",
                exited(0),
                json!({"running": {}}),
                json!([{"name": "KRUISE_TERMINATE_SIDECAR_WHEN_JOB_EXIT_WITH_IMAGE", "value": "envoy"}]),
            );
            pod.metadata.uid = Some("u-2".into());
            pod
        };
        assert_eq!(
            decide(&swapped, false),
            Some(Plan::default()),
            "image already swapped: nothing to write"
        );
        assert_eq!(Terminal::Failed.phase(), "Failed");
    }
}
