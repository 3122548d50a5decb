//! The job's pods: which node each is on, whether it is active, succeeded or failed, and the pod a job
//! creates for a node.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kruise_api::apps::v1beta1::BroadcastJob;
use kruise_api::keys::broadcastjob::{CONTROLLER_UID_LABEL, JOB_NAME_LABEL};

use crate::daemonset::node_affinity;

/// What a pod counts as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodState {
    /// Not finished (and not failed by restarts).
    Active,
    /// Phase `Succeeded`.
    Succeeded,
    /// Phase `Failed`, or `restartPolicy: OnFailure` with more container restarts (init and app
    /// containers together) than `failurePolicy.restartLimit`.
    Failed,
}

/// The state of `pod` for a job whose `failurePolicy.restartLimit` is `restart_limit`.
#[must_use]
pub fn state(pod: &Pod, restart_limit: i32) -> PodState {
    let status = pod.status.as_ref();
    match status.and_then(|status| status.phase.as_deref()) {
        Some("Succeeded") => return PodState::Succeeded,
        Some("Failed") => return PodState::Failed,
        _ => {}
    }
    let on_failure = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.restart_policy.as_deref())
        == Some("OnFailure");
    if on_failure && let Some(status) = status {
        let restarts: i64 = status
            .init_container_statuses
            .iter()
            .flatten()
            .chain(status.container_statuses.iter().flatten())
            .map(|container| i64::from(container.restart_count))
            .sum();
        if restarts > i64::from(restart_limit) {
            return PodState::Failed;
        }
    }
    PodState::Active
}

/// The node a job pod is on or pinned to (`spec.nodeName`, else a `metadata.name` node affinity term).
#[must_use]
pub fn node_of(pod: &Pod) -> Option<&str> {
    node_affinity::target_node(pod.spec.as_ref())
}

/// The longest object name the API server accepts.
const MAX_NAME: usize = 253;

/// The pod the job runs on `node`: the template with `spec.nodeName = node` (pinned without a scheduler),
/// named `<job>-<node>` (so creating it twice fails with AlreadyExists instead of running two pods on a
/// node; `generateName: <job>-` when that name would be too long), the template's labels plus `broadcastjob-name` and
/// `broadcastjob-controller-uid`, and the job as controller owner (`owner_api_version` is the version the
/// job was read in).
#[must_use]
pub fn new_pod(job: &BroadcastJob, node: &str, owner_api_version: &str) -> Pod {
    let name = job.metadata.name.clone().unwrap_or_default();
    let uid = job.metadata.uid.clone().unwrap_or_default();
    let template = &job.spec.template;
    let template_meta = template.metadata.clone().unwrap_or_default();
    let mut labels: BTreeMap<String, String> = template_meta.labels.unwrap_or_default();
    labels.insert(JOB_NAME_LABEL.to_owned(), name.clone());
    labels.insert(CONTROLLER_UID_LABEL.to_owned(), uid.clone());
    let mut spec: PodSpec = template.spec.clone().unwrap_or_default();
    spec.node_name = Some(node.to_owned());
    let per_node = format!("{name}-{node}");
    let (pod_name, generate_name) = if per_node.len() <= MAX_NAME {
        (Some(per_node), None)
    } else {
        (None, Some(format!("{name}-")))
    };
    Pod {
        metadata: ObjectMeta {
            name: pod_name,
            generate_name,
            namespace: job.metadata.namespace.clone(),
            labels: Some(labels),
            annotations: template_meta.annotations.filter(|a| !a.is_empty()),
            finalizers: template_meta.finalizers.filter(|f| !f.is_empty()),
            owner_references: Some(vec![OwnerReference {
                api_version: owner_api_version.to_owned(),
                kind: "BroadcastJob".to_owned(),
                name,
                uid,
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        },
        spec: Some(spec),
        status: None,
    }
}
