//! Which ephemeral containers of a pod belong to an EphemeralJob, and how far they got.
//!
//! A container belongs to the job when its name is one of the template's and its env has
//! `KRUISE_EJOB_ID` equal to the job's uid (upstream `isCreatedByEJob`, `ephemeraljob_utils.go`): the
//! marking a Go OpenKruise and this one both read and write, so either recognises the other's containers.
//! A container with a template name but another id (or none) is a conflict: the pod is left out of the
//! job (upstream `existDuplicatedEphemeralContainer`).

use k8s_openapi::api::core::v1::{ContainerStatus, EphemeralContainer, Pod};
use kruise_api::apps::v1alpha1::EphemeralJob;
use kruise_api::keys::sidecar_terminator::EPHEMERAL_JOB_ID_ENV;

/// How the job's ephemeral containers in one pod are doing (upstream `parseEphemeralPodStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodProgress {
    /// No status for them yet, or they wait to start.
    Waiting,
    /// At least one runs (none failed).
    Running,
    /// Every template container exited with code 0.
    Succeeded,
    /// One exited with a non-zero code, or could not start (`RunContainerError`).
    Failed,
    /// Statuses that fit none of the above (a terminated container with code 0 but no finish time).
    Unknown,
}

/// Whether `container` was added by the job whose uid is `job_uid` (its `KRUISE_EJOB_ID` env).
#[must_use]
pub fn is_marked_by(container: &EphemeralContainer, job_uid: &str) -> bool {
    container
        .env
        .iter()
        .flatten()
        .any(|env| env.name == EPHEMERAL_JOB_ID_ENV && env.value.as_deref() == Some(job_uid))
}

fn template_names(job: &EphemeralJob) -> impl Iterator<Item = &str> {
    job.spec
        .template
        .ephemeral_containers
        .iter()
        .map(|container| container.name.as_str())
}

fn pod_containers(pod: &Pod) -> &[EphemeralContainer] {
    pod.spec
        .as_ref()
        .and_then(|spec| spec.ephemeral_containers.as_deref())
        .unwrap_or_default()
}

/// Whether `pod` already has a container of the job (a template name marked with the job's uid).
#[must_use]
pub fn has_own_container(job: &EphemeralJob, pod: &Pod) -> bool {
    let uid = job.metadata.uid.as_deref().unwrap_or_default();
    pod_containers(pod).iter().any(|container| {
        template_names(job).any(|name| name == container.name) && is_marked_by(container, uid)
    })
}

/// Whether `pod` has a container named like one of the template's that the job did not add.
#[must_use]
pub fn has_conflicting_container(job: &EphemeralJob, pod: &Pod) -> bool {
    let uid = job.metadata.uid.as_deref().unwrap_or_default();
    pod_containers(pod).iter().any(|container| {
        template_names(job).any(|name| name == container.name) && !is_marked_by(container, uid)
    })
}

fn container_progress(status: &ContainerStatus) -> PodProgress {
    let Some(state) = &status.state else {
        return PodProgress::Unknown;
    };
    if let Some(terminated) = &state.terminated {
        if terminated.exit_code != 0 {
            return PodProgress::Failed;
        }
        if terminated.finished_at.is_some() {
            return PodProgress::Succeeded;
        }
    }
    if state.running.is_some() {
        return PodProgress::Running;
    }
    match &state.waiting {
        Some(waiting) if waiting.reason.as_deref() == Some("RunContainerError") => {
            PodProgress::Failed
        }
        Some(_) => PodProgress::Waiting,
        None => PodProgress::Unknown,
    }
}

/// How the job's containers in `pod` are doing, from `status.ephemeralContainerStatuses` (only the
/// statuses named like a template container count).
#[must_use]
pub fn pod_progress(job: &EphemeralJob, pod: &Pod) -> PodProgress {
    let statuses = pod
        .status
        .as_ref()
        .and_then(|status| status.ephemeral_container_statuses.as_deref())
        .unwrap_or_default();
    if statuses.is_empty() {
        return PodProgress::Waiting;
    }
    let wanted = job.spec.template.ephemeral_containers.len();
    let (mut waiting, mut running, mut succeeded) = (0_usize, 0_usize, 0_usize);
    for status in statuses {
        if !template_names(job).any(|name| name == status.name) {
            continue;
        }
        match container_progress(status) {
            PodProgress::Failed => return PodProgress::Failed,
            PodProgress::Waiting => waiting += 1,
            PodProgress::Running => running += 1,
            PodProgress::Succeeded => succeeded += 1,
            PodProgress::Unknown => {}
        }
    }
    if succeeded > 0 && succeeded == wanted {
        PodProgress::Succeeded
    } else if running > 0 {
        PodProgress::Running
    } else if waiting > 0 {
        PodProgress::Waiting
    } else {
        PodProgress::Unknown
    }
}
