//! EphemeralJob decisions (upstream `pkg/controller/ephemeraljob`): from the job, the pods of its namespace
//! and `now`, which pods get the job's ephemeral containers next, the status to write (counts, phase,
//! conditions, start and completion times), and when the finished job is deleted (TTL).
//!
//! One reconcile is [`plan`] of a [`PlanInput`]. In order (upstream `Reconcile`, `filterPods`,
//! `calculateStatus`, `syncTargetPods`):
//! 1. a job with a `completionTime` only waits for `ttlSecondsAfterFinished` (1800 when unset) past it,
//!    then is deleted;
//! 2. `startTime` is set on the first reconcile; `activeDeadlineSeconds` past it is looked at again then;
//! 3. the targets are the active pods (not `Succeeded`/`Failed`, not being deleted) the selector matches,
//!    oldest first (then by name), leaving out pods with a same-named ephemeral container the job did not
//!    add ([`containers::has_conflicting_container`]), at most `replicas` of them;
//! 4. counts: per target, its containers' progress ([`containers::pod_progress`]; a pod without any
//!    ephemeral container status is waiting); `match` is the number of targets;
//! 5. the phase: `Waiting` with no target (condition `MatchedEmpty`), `Running` while one runs, `Waiting`
//!    while one waits, `Succeeded` or `Failed` (with `completionTime`) once every target finished, `Paused`
//!    with `spec.paused`, `Failed` (reason `DeadlineExceeded`) past the deadline, `Error` (condition
//!    `JobError`) with an empty template or an invalid selector; the first status gets `Initialized`;
//! 6. unless paused or finished: the targets without the job's containers, in order, get them, as many as
//!    `parallelism` (default 1) leaves room for next to the targets whose containers of the job have not
//!    finished.
//!
//! The request for each pod is built by [`request`]; when the cluster refuses it as not enabled,
//! [`record_not_enabled`] turns the status into the `Error` phase with a `JobError` condition.
//!
//! ```
//! use kruise_api::apps::v1alpha1::EphemeralJob;
//! use kruise_schedule::ephemeral_job::{plan, PlanInput};
//! use k8s_openapi::api::core::v1::Pod;
//!
//! let job: EphemeralJob = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "apps.kruise.io/v1alpha1", "kind": "EphemeralJob",
//!     "metadata": {"name": "debug", "namespace": "default", "uid": "u-1"},
//!     "spec": {"selector": {"matchLabels": {"app": "web"}}, "parallelism": 2,
//!         "template": {"ephemeralContainers": [{"name": "sh", "image": "busybox"}]}}
//! })).unwrap();
//! let pod = |name: &str| -> Pod {
//!     serde_json::from_value(serde_json::json!({
//!         "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
//!         "status": {"phase": "Running"}
//!     })).unwrap()
//! };
//! let pods = [pod("web-b"), pod("web-a"), pod("web-c")];
//! let plan = plan(&PlanInput::new(&job, &pods, "2024-05-01T00:00:00Z".parse().unwrap()));
//! assert_eq!(plan.inject, ["web-a", "web-b"]); // parallelism 2, by name at equal age
//! assert_eq!(plan.status.matches, 3);
//! assert_eq!(plan.status.waiting, 3);
//! assert_eq!(plan.status.phase.as_str(), "Waiting");
//! ```

pub mod containers;
pub mod request;

#[cfg(test)]
mod tests;

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1alpha1::{
    EphemeralJob, EphemeralJobCondition, EphemeralJobConditionType, EphemeralJobPhase,
    EphemeralJobStatus,
};
use kruise_api::label_selector;

pub use containers::PodProgress;

/// `ttlSecondsAfterFinished` when unset (upstream's default in `Reconcile`).
pub const DEFAULT_TTL_SECONDS: i32 = 1800;

/// `parallelism` when unset (upstream `defaultParallelism`).
pub const DEFAULT_PARALLELISM: i32 = 1;

/// Everything one EphemeralJob plan reads.
#[derive(Clone, Copy, Debug)]
pub struct PlanInput<'a> {
    /// The job.
    pub job: &'a EphemeralJob,
    /// The pods of the job's namespace (others are ignored).
    pub pods: &'a [Pod],
    /// The time of the decision.
    pub now: Timestamp,
}

impl<'a> PlanInput<'a> {
    /// The input of one reconcile of `job`.
    #[must_use]
    pub fn new(job: &'a EphemeralJob, pods: &'a [Pod], now: Timestamp) -> Self {
        Self { job, pods, now }
    }
}

/// What one reconcile of an EphemeralJob should do.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// The status to write (when it differs from the job's).
    pub status: EphemeralJobStatus,
    /// Names of the pods to add the job's ephemeral containers to ([`request`]), in order.
    pub inject: Vec<String>,
    /// Delete the job (finished and past its TTL).
    pub delete_job: bool,
    /// Look again after this long (deadline, TTL); `None`: on a change only.
    pub requeue_after: Option<Duration>,
}

/// Plans one reconcile of `input.job`: see the module documentation.
#[must_use]
pub fn plan(input: &PlanInput<'_>) -> Plan {
    let &PlanInput { job, pods, now } = input;
    let spec = &job.spec;
    let mut status = job.status.clone().unwrap_or_default();
    let mut plan = Plan::default();

    // 1. Finished: wait for the TTL.
    if let Some(completed) = &status.completion_time {
        let ttl = i64::from(
            spec.ttl_seconds_after_finished
                .unwrap_or(DEFAULT_TTL_SECONDS)
                .max(0),
        );
        let expires = completed.0.as_second().saturating_add(ttl);
        if now.as_second() >= expires {
            plan.delete_job = true;
        } else {
            plan.requeue_after = Some(seconds(expires - now.as_second()));
        }
        plan.status = status;
        return plan;
    }

    // 2. Start and deadline.
    let start = status.start_time.get_or_insert(Time(now)).0;
    let past_deadline = spec.active_deadline_seconds.is_some_and(|deadline| {
        let ends = start.as_second().saturating_add(deadline);
        if now.as_second() < ends {
            plan.requeue_after = Some(seconds(ends - now.as_second()));
        }
        now.as_second() >= ends
    });
    if status.conditions.is_empty() {
        set_condition(
            &mut status,
            EphemeralJobConditionType::Initialized,
            "Initialized",
            "",
            now,
        );
    }

    // 3. Targets.
    let targets = match target_pods(job, pods) {
        Ok(targets) => targets,
        Err(message) => {
            status.phase = EphemeralJobPhase::Error;
            set_condition(
                &mut status,
                EphemeralJobConditionType::JobError,
                "InvalidSelector",
                &message,
                now,
            );
            plan.status = status;
            return plan;
        }
    };

    // 4. Counts.
    let (mut running, mut waiting, mut succeeded, mut failed) = (0, 0, 0, 0);
    for pod in &targets {
        match containers::pod_progress(job, pod) {
            PodProgress::Running => running += 1,
            PodProgress::Waiting => waiting += 1,
            PodProgress::Succeeded => succeeded += 1,
            PodProgress::Failed => failed += 1,
            PodProgress::Unknown => {}
        }
    }
    status.matches = count(targets.len());
    status.running = running;
    status.waiting = waiting;
    status.succeeded = succeeded;
    status.failed = failed;

    // 5. Phase and conditions.
    if failed > 0 {
        let message = format!(
            "{failed}/{} pods have a failed ephemeral container",
            status.matches
        );
        set_condition(
            &mut status,
            EphemeralJobConditionType::JobFailed,
            "ContainerFailed",
            &message,
            now,
        );
    }
    status.phase = if targets.is_empty() {
        set_condition(
            &mut status,
            EphemeralJobConditionType::MatchedEmpty,
            "MatchEmpty",
            "the selector matches no active pod",
            now,
        );
        EphemeralJobPhase::Waiting
    } else if running > 0 {
        EphemeralJobPhase::Running
    } else if waiting > 0 {
        EphemeralJobPhase::Waiting
    } else if succeeded + failed == status.matches {
        status.completion_time = Some(Time(now));
        if failed > 0 {
            let message = format!("{failed}/{} pods failed", status.matches);
            set_condition(
                &mut status,
                EphemeralJobConditionType::JobFailed,
                "JobFailed",
                &message,
                now,
            );
            EphemeralJobPhase::Failed
        } else {
            let message = format!("every ephemeral container succeeded in {succeeded} pods");
            set_condition(
                &mut status,
                EphemeralJobConditionType::JobSucceeded,
                "JobSucceeded",
                &message,
                now,
            );
            EphemeralJobPhase::Succeeded
        }
    } else {
        EphemeralJobPhase::PhaseUnknown
    };
    if spec.paused {
        status.phase = EphemeralJobPhase::Paused;
    }
    let unfinished = matches!(
        status.phase,
        EphemeralJobPhase::Waiting | EphemeralJobPhase::Running | EphemeralJobPhase::PhaseUnknown
    );
    if unfinished && past_deadline {
        status.completion_time = Some(Time(now));
        status.phase = EphemeralJobPhase::Failed;
        let message = format!(
            "EphemeralJob {}/{} ran longer than activeDeadlineSeconds {}",
            job.metadata.namespace.as_deref().unwrap_or_default(),
            job.metadata.name.as_deref().unwrap_or_default(),
            spec.active_deadline_seconds.unwrap_or_default(),
        );
        set_condition(
            &mut status,
            EphemeralJobConditionType::JobFailed,
            "DeadlineExceeded",
            &message,
            now,
        );
    }
    if spec.template.ephemeral_containers.is_empty() {
        status.phase = EphemeralJobPhase::Error;
        set_condition(
            &mut status,
            EphemeralJobConditionType::JobError,
            "Error",
            "spec.template.ephemeralContainers is empty",
            now,
        );
    }
    if status.completion_time.is_some() {
        let ttl = spec
            .ttl_seconds_after_finished
            .unwrap_or(DEFAULT_TTL_SECONDS)
            .max(0);
        plan.requeue_after = Some(seconds(i64::from(ttl)));
    }

    // 6. Injections.
    let may_inject = matches!(
        status.phase,
        EphemeralJobPhase::Waiting | EphemeralJobPhase::Running | EphemeralJobPhase::PhaseUnknown
    );
    if may_inject {
        let unfinished_injected = targets
            .iter()
            .filter(|pod| containers::has_own_container(job, pod))
            .filter(|pod| {
                matches!(
                    containers::pod_progress(job, pod),
                    PodProgress::Running | PodProgress::Waiting
                )
            })
            .count();
        let parallelism =
            usize::try_from(spec.parallelism.unwrap_or(DEFAULT_PARALLELISM)).unwrap_or(0);
        let room = parallelism.saturating_sub(unfinished_injected);
        plan.inject = targets
            .iter()
            .filter(|pod| !containers::has_own_container(job, pod))
            .take(room)
            .filter_map(|pod| pod.metadata.name.clone())
            .collect();
    }
    plan.status = status;
    plan
}

/// The pods `job` works on (step 3 of the module documentation), in order.
///
/// # Errors
/// The selector is invalid: a one-line message naming the job, the field and the problem.
pub fn target_pods<'a>(job: &EphemeralJob, pods: &'a [Pod]) -> Result<Vec<&'a Pod>, String> {
    let namespace = job.metadata.namespace.as_deref().unwrap_or_default();
    let selector = &job.spec.selector;
    label_selector::validate(selector).map_err(|error| {
        format!(
            "EphemeralJob {namespace}/{}: spec.selector is invalid: {error}",
            job.metadata.name.as_deref().unwrap_or_default()
        )
    })?;
    let empty = std::collections::BTreeMap::new();
    let mut matching: Vec<&Pod> = pods
        .iter()
        .filter(|pod| pod.metadata.namespace.as_deref().unwrap_or_default() == namespace)
        .filter(|pod| is_active(pod))
        .filter(|pod| {
            label_selector::matches(selector, pod.metadata.labels.as_ref().unwrap_or(&empty))
                .unwrap_or(false)
        })
        .collect();
    matching.sort_by(|a, b| {
        let created = |pod: &Pod| pod.metadata.creation_timestamp.as_ref().map(|time| time.0);
        created(a)
            .cmp(&created(b))
            .then_with(|| a.metadata.name.cmp(&b.metadata.name))
    });
    let limit = job.spec.replicas.map_or(usize::MAX, |replicas| {
        usize::try_from(replicas).unwrap_or(0)
    });
    Ok(matching
        .into_iter()
        .filter(|pod| !containers::has_conflicting_container(job, pod))
        .take(limit)
        .collect())
}

/// Turns `status` into the `Error` phase with a true `JobError` condition of `reason` and `message` (the
/// cluster refused the containers, e.g. [`request::NOT_ENABLED_MESSAGE`]).
pub fn record_not_enabled(
    status: &mut EphemeralJobStatus,
    reason: &str,
    message: &str,
    now: Timestamp,
) {
    status.phase = EphemeralJobPhase::Error;
    set_condition(
        status,
        EphemeralJobConditionType::JobError,
        reason,
        message,
        now,
    );
}

/// Sets the true condition of `type_` (one per type), keeping its times when reason and message are
/// unchanged so that an unchanged status is not written again.
fn set_condition(
    status: &mut EphemeralJobStatus,
    type_: EphemeralJobConditionType,
    reason: &str,
    message: &str,
    now: Timestamp,
) {
    let condition = EphemeralJobCondition {
        type_,
        status: "True".to_owned(),
        last_probe_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
        reason: reason.to_owned(),
        message: message.to_owned(),
    };
    match status
        .conditions
        .iter_mut()
        .find(|c| c.type_ == condition.type_)
    {
        Some(existing)
            if existing.status == condition.status
                && existing.reason == condition.reason
                && existing.message == condition.message => {}
        Some(existing) => *existing = condition,
        None => status.conditions.push(condition),
    }
}

fn is_active(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none()
        && !matches!(
            pod.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Succeeded" | "Failed")
        )
}

fn seconds(value: i64) -> Duration {
    Duration::from_secs(u64::try_from(value).unwrap_or(0))
}

fn count(value: usize) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}
