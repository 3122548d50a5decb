//! What the ContainerRecreateRequest mutating webhook decides (upstream `pkg/webhook/containerrecreaterequest`),
//! pure: the request and the pod (and its node's labels) in, the defaulted request or a rejection out. The caller
//! serves the admission review (kruise-manager: `kruise_manager::crr::admission`).
//!
//! On create: `podName` and `containers` are required; `strategy` defaults to `{failurePolicy: Fail}`;
//! `activeDeadlineSeconds` must be at least 3 and the grace periods non-negative; the pod must exist, be
//! active (or terminated by the Job sidecar terminator) and scheduled; the request gets the labels
//! `crr.apps.kruise.io/node-name`, `pod-uid` and `active=true` (and `type: virtual-kubelet` from such a
//! node); `terminationGracePeriodSeconds` defaults to the pod's; every container gets its `preStop` (and,
//! for an HTTP hook, its `ports`) from the pod spec and its `statusContext` from the pod status. On update
//! the spec and the two identity labels are immutable.
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_api::apps::v1beta1::ContainerRecreateRequest;
//! use kruise_lifecycle::container_recreate::webhook::default_on_create;
//!
//! let mut crr: ContainerRecreateRequest = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "restart", "namespace": "default"},
//!     "spec": {"podName": "web", "containers": [{"name": "app"}]},
//! })).unwrap();
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web", "namespace": "default", "uid": "u-1"},
//!     "spec": {"nodeName": "node-0", "terminationGracePeriodSeconds": 20, "containers": [{"name": "app"}]},
//!     "status": {"phase": "Running", "containerStatuses": [{"name": "app", "containerID": "containerd://c1",
//!         "restartCount": 2, "ready": true, "image": "busybox", "imageID": ""}]},
//! })).unwrap();
//! default_on_create(&mut crr, Some(&pod), None).unwrap();
//! let labels = crr.metadata.labels.as_ref().unwrap();
//! assert_eq!(labels["crr.apps.kruise.io/node-name"], "node-0");
//! assert_eq!(crr.spec.containers[0].status_context.as_ref().unwrap().restart_count, 2);
//! ```

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::{
    ContainerRecreateRequest, ContainerRecreateRequestContainerContext,
    ContainerRecreateRequestFailurePolicy as FailurePolicy, ContainerRecreateRequestStrategy,
    CrrProbeHandler,
};
use kruise_api::keys::crr as keys;
use kruise_api::keys::sidecar_terminator::SIDECAR_TERMINATED_CONDITION;

/// The smallest `activeDeadlineSeconds` accepted.
pub const MIN_ACTIVE_DEADLINE_SECONDS: i64 = 3;

/// A refused request: the HTTP-style code of the admission status and why, in upstream's wording (which
/// names the field and, where there is one, the offending value or container).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("ContainerRecreateRequest rejected ({code}): {message}")]
#[non_exhaustive]
pub struct Rejection {
    /// 400 for a bad request, 403 for a forbidden change (a server may use 500 for its own failures).
    pub code: u16,
    /// What is wrong: the message of the admission status.
    pub message: String,
}

impl Rejection {
    /// A rejection with this admission status code and message (an admission server's own failures,
    /// e.g. a request it cannot decode).
    #[must_use]
    pub fn new(code: u16, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

fn bad(message: impl Into<String>) -> Rejection {
    Rejection::new(400, message)
}

fn forbidden(message: impl Into<String>) -> Rejection {
    Rejection::new(403, message)
}

/// Validates and defaults a request being created, against its pod (`None`: the pod does not exist) and
/// the labels of the pod's node (`None`: unknown).
///
/// # Errors
/// [`Rejection`] (code 400) naming the first problem, with upstream's wording.
pub fn default_on_create(
    crr: &mut ContainerRecreateRequest,
    pod: Option<&Pod>,
    node_labels: Option<&BTreeMap<String, String>>,
) -> Result<(), Rejection> {
    let spec = &mut crr.spec;
    if spec.pod_name.is_empty() {
        return Err(bad("podName can not be empty"));
    }
    let strategy = spec
        .strategy
        .get_or_insert_with(ContainerRecreateRequestStrategy::default);
    crr.metadata
        .labels
        .get_or_insert_with(BTreeMap::new)
        .insert(keys::ACTIVE_LABEL.to_owned(), "true".to_owned());
    if spec.containers.is_empty() {
        return Err(bad("containers list can not be null"));
    }
    if spec
        .active_deadline_seconds
        .is_some_and(|seconds| seconds < MIN_ACTIVE_DEADLINE_SECONDS)
    {
        return Err(bad(format!(
            "activeDeadlineSeconds can not be less than {MIN_ACTIVE_DEADLINE_SECONDS}s"
        )));
    }
    if strategy
        .termination_grace_period_seconds
        .is_some_and(|seconds| seconds < 0)
    {
        return Err(bad(
            "terminationGracePeriodSeconds must be non-negative integer",
        ));
    }
    if strategy
        .unready_grace_period_seconds
        .is_some_and(|seconds| seconds < 0)
    {
        return Err(bad(
            "unreadyGracePeriodSeconds must be non-negative integer",
        ));
    }
    match &strategy.failure_policy {
        None => strategy.failure_policy = Some(FailurePolicy::Fail),
        Some(policy) if policy.as_str().is_empty() => {
            strategy.failure_policy = Some(FailurePolicy::Fail);
        }
        Some(FailurePolicy::Fail | FailurePolicy::Ignore) => {}
        Some(other) => return Err(bad(format!("unknown failurePolicy {}", other.as_str()))),
    }
    let Some(pod) = pod else {
        return Err(bad(format!("no found Pod named {}", spec.pod_name)));
    };
    if !kruise_api::pod::is_active(pod) && !terminated_by_sidecar_terminator(pod) {
        return Err(bad("not allowed to recreate containers in an inactive Pod"));
    }
    let node = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.node_name.as_deref())
        .unwrap_or_default();
    if node.is_empty() {
        return Err(bad("not allowed to recreate containers in a pending Pod"));
    }
    inject_pod(crr, pod, node)?;
    if node_labels
        .and_then(|labels| labels.get(keys::VIRTUAL_KUBELET_TYPE_LABEL))
        .is_some_and(|value| value == keys::VIRTUAL_KUBELET_TYPE)
    {
        crr.metadata
            .labels
            .get_or_insert_with(BTreeMap::new)
            .insert(
                keys::VIRTUAL_KUBELET_TYPE_LABEL.to_owned(),
                keys::VIRTUAL_KUBELET_TYPE.to_owned(),
            );
    }
    Ok(())
}

fn terminated_by_sidecar_terminator(pod: &Pod) -> bool {
    kruise_api::pod::condition(pod, SIDECAR_TERMINATED_CONDITION).is_some()
}

/// Upstream's `injectPodIntoContainerRecreateRequest`.
fn inject_pod(crr: &mut ContainerRecreateRequest, pod: &Pod, node: &str) -> Result<(), Rejection> {
    let labels = crr.metadata.labels.get_or_insert_with(BTreeMap::new);
    labels.insert(keys::NODE_NAME_LABEL.to_owned(), node.to_owned());
    labels.insert(
        keys::POD_UID_LABEL.to_owned(),
        pod.metadata.uid.clone().unwrap_or_default(),
    );
    let pod_spec = pod.spec.clone().unwrap_or_default();
    let statuses = pod
        .status
        .as_ref()
        .and_then(|status| status.container_statuses.clone())
        .unwrap_or_default();
    if let Some(strategy) = crr.spec.strategy.as_mut()
        && strategy.termination_grace_period_seconds.is_none()
    {
        strategy.termination_grace_period_seconds = pod_spec.termination_grace_period_seconds;
    }
    let mut seen = BTreeSet::new();
    for container in &mut crr.spec.containers {
        if !seen.insert(container.name.clone()) {
            return Err(bad(format!(
                "can not recreate {} multi times",
                container.name
            )));
        }
        if container.pre_stop.is_some()
            || !container.ports.is_empty()
            || container.status_context.is_some()
        {
            return Err(bad(
                "preStop, ports, statusContext in container are ready-only fields",
            ));
        }
        let Some(spec) = pod_spec
            .containers
            .iter()
            .find(|c| c.name == container.name)
        else {
            return Err(bad(format!(
                "container {} not found in Pod",
                container.name
            )));
        };
        let Some(status) = statuses.iter().find(|s| s.name == container.name) else {
            return Err(bad(format!(
                "not found {} containerStatus in Pod Status",
                container.name
            )));
        };
        let container_id = status.container_id.clone().unwrap_or_default();
        if container_id.is_empty() {
            return Err(bad(format!(
                "no containerID in {} containerStatus, maybe the container has not been initialized",
                container.name
            )));
        }
        if let Some(pre_stop) = spec.lifecycle.as_ref().and_then(|l| l.pre_stop.as_ref()) {
            container.pre_stop = Some(CrrProbeHandler {
                exec: pre_stop.exec.clone(),
                http_get: pre_stop.http_get.clone(),
                tcp_socket: pre_stop.tcp_socket.clone(),
            });
        }
        if container
            .pre_stop
            .as_ref()
            .is_some_and(|hook| hook.http_get.is_some())
        {
            container.ports = spec.ports.clone().unwrap_or_default();
        }
        container.status_context = Some(ContainerRecreateRequestContainerContext {
            container_id,
            restart_count: status.restart_count,
        });
    }
    Ok(())
}

/// Checks an update: the spec, the `pod-uid` and `node-name` labels, and a set unready-acquired annotation
/// are immutable.
///
/// # Errors
/// [`Rejection`] (code 403) naming what changed.
pub fn check_update(
    old: &ContainerRecreateRequest,
    new: &ContainerRecreateRequest,
) -> Result<(), Rejection> {
    if old.spec != new.spec {
        return Err(forbidden("spec of ContainerRecreateRequest is immutable"));
    }
    let label = |crr: &ContainerRecreateRequest, key: &str| {
        crr.metadata
            .labels
            .as_ref()
            .and_then(|labels| labels.get(key).cloned())
    };
    for key in [keys::POD_UID_LABEL, keys::NODE_NAME_LABEL] {
        if label(old, key) != label(new, key) {
            return Err(forbidden(format!(
                "not allowed to update immutable label {key}"
            )));
        }
    }
    let annotation = |crr: &ContainerRecreateRequest| {
        crr.metadata
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(keys::UNREADY_ACQUIRED_KEY).cloned())
            .unwrap_or_default()
    };
    if !annotation(old).is_empty() && annotation(old) != annotation(new) {
        return Err(forbidden(format!(
            "not allowed to update immutable annotation {}",
            keys::UNREADY_ACQUIRED_KEY
        )));
    }
    Ok(())
}

#[cfg(test)]
#[path = "webhook_tests.rs"]
mod tests;
