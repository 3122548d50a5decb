//! BroadcastJob decisions (upstream `pkg/controller/broadcastjob`): from the job, its pods, the nodes and `now`,
//! which pods to create (one per eligible node, pinned to it) or delete, the status to write (counts, phase,
//! conditions, start and completion times), whether to pause the job or delete it (TTL), and when to look again.
//!
//! One reconcile is [`plan`], of a [`PlanInput`] (the job, its pods, the nodes, `now`), the shape every planner
//! has (see [`crate::planning`]). In order:
//! 1. a finished job (a `Complete` or `Failed` condition, unless `completionPolicy: Never`) only waits for
//!    `ttlSecondsAfterFinished` after its completion time, then is deleted;
//! 2. `startTime` is set on the first reconcile, `phase` defaults to `running`;
//! 3. the desired nodes are those the pod fits on ([`node_fit`]); active pods on other nodes are deleted;
//! 4. `spec.paused` sets phase `paused` and creates nothing;
//! 5. failed pods ([`PodState::Failed`]): `Pause` sets `spec.paused`, `FailFast` fails the job, `Continue`
//!    goes on;
//! 6. `activeDeadlineSeconds` (only with `completionPolicy: Always`) past `startTime` fails the job with
//!    reason `DeadlineExceeded`; a failed job's active pods are deleted;
//! 7. pods are created on desired nodes without one, at most `parallelism` (a legacy percentage of the
//!    desired count, rounded up; default unlimited) minus the active pods, in node name order;
//! 8. the job is complete when every desired node has a pod and none is active.
//!
//! ```
//! use k8s_openapi::api::core::v1::Node;
//! use kruise_api::apps::v1beta1::BroadcastJob;
//! use kruise_schedule::broadcast_job::{plan, PlanInput};
//!
//! let job: BroadcastJob = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "apps.kruise.io/v1beta1", "kind": "BroadcastJob",
//!     "metadata": {"name": "hello", "namespace": "default", "uid": "u-1"},
//!     "spec": {"parallelism": 1, "template": {"spec": {"restartPolicy": "Never",
//!         "containers": [{"name": "main", "image": "busybox"}]}}}
//! })).unwrap();
//! let node = |name: &str| -> Node {
//!     serde_json::from_value(serde_json::json!({"metadata": {"name": name}})).unwrap()
//! };
//! let now = "2024-05-01T00:00:00Z".parse().unwrap();
//! let nodes = [node("b"), node("a")];
//! let plan = plan(&PlanInput::new(&job, &[], &nodes, now));
//! assert_eq!(plan.create_on, ["a"]); // parallelism 1, node name order
//! assert_eq!(plan.status.desired, 2);
//! assert_eq!(plan.status.active, 1);
//! assert_eq!(plan.status.phase.as_str(), "running");
//! ```

pub mod node_fit;
pub mod pods;

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{
    BroadcastJob, BroadcastJobPhase, BroadcastJobStatus, CompletionPolicyType, FailurePolicyType,
    JobCondition, JobConditionType, job_condition_reason,
};

pub use node_fit::Unfit;
pub use pods::{PodState, new_pod};

use crate::int_or_percent::{Rounding, legacy_scaled};

/// An event worth recording on the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobEvent {
    /// `Warning` rather than `Normal`.
    pub warning: bool,
    /// CamelCase reason.
    pub reason: &'static str,
    /// Message.
    pub message: String,
}

/// Everything one BroadcastJob plan reads.
#[derive(Clone, Copy, Debug)]
pub struct PlanInput<'a> {
    /// The job.
    pub job: &'a BroadcastJob,
    /// The pods the job controls.
    pub pods: &'a [Pod],
    /// Every node of the cluster.
    pub nodes: &'a [Node],
    /// The time of the decision.
    pub now: Timestamp,
}

impl<'a> PlanInput<'a> {
    /// The input of one reconcile of `job`.
    #[must_use]
    pub fn new(job: &'a BroadcastJob, pods: &'a [Pod], nodes: &'a [Node], now: Timestamp) -> Self {
        Self {
            job,
            pods,
            nodes,
            now,
        }
    }
}

/// What one reconcile of a BroadcastJob should do.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// The status to write (when it differs from the job's).
    pub status: BroadcastJobStatus,
    /// Nodes to create a pod on ([`new_pod`]), in order.
    pub create_on: Vec<String>,
    /// Names of pods to delete.
    pub delete: Vec<String>,
    /// Set `spec.paused: true` (`failurePolicy: Pause` with failed pods).
    pub pause: bool,
    /// Delete the job itself (finished and past `ttlSecondsAfterFinished`).
    pub delete_job: bool,
    /// Look again after this long (deadline, TTL); `None`: on a change only.
    pub requeue_after: Option<Duration>,
    /// Events to record.
    pub events: Vec<JobEvent>,
}

/// Whether the job has finished (a true `Complete` or `Failed` condition, and `completionPolicy` is not
/// `Never`).
#[must_use]
pub fn is_finished(job: &BroadcastJob) -> bool {
    if job.spec.completion_policy.type_ == Some(CompletionPolicyType::Never) {
        return false;
    }
    job.status.iter().flat_map(|s| &s.conditions).any(|c| {
        c.status == "True"
            && matches!(
                c.type_,
                JobConditionType::Complete | JobConditionType::Failed
            )
    })
}

/// Plans one reconcile of `input.job`: see the module documentation.
#[must_use]
pub fn plan(input: &PlanInput<'_>) -> Plan {
    let &PlanInput {
        job,
        pods,
        nodes,
        now,
    } = input;
    let mut status = job.status.clone().unwrap_or_default();
    let mut plan = Plan::default();
    let spec = &job.spec;

    // 1. Finished: wait for the TTL.
    if is_finished(job) {
        if let Some(ttl) = spec.completion_policy.ttl_seconds_after_finished {
            let finished = status.completion_time.as_ref().map_or(now, |t| t.0);
            let expires = finished.as_second().saturating_add(i64::from(ttl));
            if now.as_second() >= expires {
                plan.delete_job = true;
            } else {
                plan.requeue_after = Some(seconds(expires - now.as_second() + 1));
            }
        }
        plan.status = status;
        return plan;
    }

    // 2. Start.
    let start = status.start_time.get_or_insert(Time(now)).0;
    if status.phase.as_str().is_empty() {
        status.phase = BroadcastJobPhase::Running;
    }

    // 3. Desired nodes, pods per node.
    let restart_limit = spec.failure_policy.restart_limit;
    let template = spec.template.spec.clone().unwrap_or_default();
    let mut desired: Vec<&str> = nodes
        .iter()
        .filter(|node| node_fit::check(&template, node).is_ok())
        .filter_map(|node| node.metadata.name.as_deref())
        .collect();
    desired.sort_unstable();
    desired.dedup();
    let mut on_node: BTreeMap<&str, Vec<&Pod>> = BTreeMap::new();
    let (mut active, mut succeeded, mut failed) = (Vec::new(), 0_i32, 0_i32);
    let mut failed_running = Vec::new();
    for pod in pods {
        if let Some(node) = pods::node_of(pod) {
            on_node.entry(node).or_default().push(pod);
        }
        if pod.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let name = pod.metadata.name.clone().unwrap_or_default();
        let on_desired =
            pods::node_of(pod).is_some_and(|node| desired.binary_search(&node).is_ok());
        match pods::state(pod, restart_limit) {
            PodState::Active if !on_desired => plan.delete.push(name),
            PodState::Active => active.push(name),
            PodState::Succeeded => succeeded += 1,
            PodState::Failed => {
                failed += 1;
                if !is_terminal(pod) {
                    failed_running.push(name);
                }
            }
        }
    }
    status.desired = count(desired.len());
    status.succeeded = succeeded;
    status.failed = failed;
    status.active = count(active.len());

    // 4. Paused.
    if spec.paused {
        status.phase = BroadcastJobPhase::Paused;
        plan.status = status;
        return plan;
    }
    if status.phase == BroadcastJobPhase::Paused {
        status.phase = BroadcastJobPhase::Running;
    }

    // 5. and 6. Failure.
    let mut failure: Option<(&'static str, String)> = None;
    if failed > 0 {
        match spec.failure_policy.type_.as_ref() {
            Some(FailurePolicyType::Pause) => {
                plan.pause = true;
                status.phase = BroadcastJobPhase::Paused;
                plan.events.push(JobEvent {
                    warning: true,
                    reason: "Paused",
                    message: format!("{failed} pods failed; pausing the job (failurePolicy Pause)"),
                });
                plan.status = status;
                return plan;
            }
            Some(FailurePolicyType::Continue) => {}
            _ => {
                failure = Some((
                    "Failed",
                    format!("{failed} pods failed (failurePolicy FailFast)"),
                ));
            }
        }
    }
    let always = spec.completion_policy.type_ != Some(CompletionPolicyType::Never);
    if failure.is_none()
        && always
        && let Some(deadline) = spec.completion_policy.active_deadline_seconds
    {
        let ends = start.as_second().saturating_add(deadline);
        if now.as_second() >= ends {
            failure = Some((
                job_condition_reason::DEADLINE_EXCEEDED,
                "Job was active longer than the specified deadline".to_owned(),
            ));
        } else {
            plan.requeue_after = Some(seconds(ends - now.as_second()));
        }
    }
    if let Some((reason, message)) = failure {
        plan.delete.extend(active);
        plan.delete.extend(failed_running);
        status.active = 0;
        finish(&mut status, JobConditionType::Failed, reason, &message, now);
        plan.events.push(JobEvent {
            warning: true,
            reason: "JobFailed",
            message,
        });
        plan.requeue_after = ttl_requeue(spec.completion_policy.ttl_seconds_after_finished);
        plan.status = status;
        return plan;
    }

    // 7. Create.
    let limit = match &spec.parallelism {
        None => i64::from(i32::MAX),
        // An unparsable string counts as 0, as upstream's discarded error does.
        Some(value) => legacy_scaled(value, i64::from(status.desired), Rounding::Up).unwrap_or(0),
    };
    let room = usize::try_from(limit - i64::from(status.active)).unwrap_or(0);
    plan.create_on = desired
        .iter()
        .filter(|node| !on_node.contains_key(**node))
        .take(room)
        .map(|node| (*node).to_owned())
        .collect();
    status.active += count(plan.create_on.len());

    // 8. Complete.
    let every_node_has_a_pod = desired.iter().all(|node| on_node.contains_key(node));
    if always && every_node_has_a_pod && status.active == 0 {
        let message = format!(
            "Job completed, {} pods succeeded, {} pods failed",
            status.succeeded, status.failed
        );
        finish(
            &mut status,
            JobConditionType::Complete,
            "Complete",
            &message,
            now,
        );
        plan.events.push(JobEvent {
            warning: false,
            reason: "JobComplete",
            message,
        });
        plan.requeue_after = ttl_requeue(spec.completion_policy.ttl_seconds_after_finished);
    }
    plan.status = status;
    plan
}

fn is_terminal(pod: &Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

fn finish(
    status: &mut BroadcastJobStatus,
    type_: JobConditionType,
    reason: &str,
    message: &str,
    now: Timestamp,
) {
    status.phase = if type_ == JobConditionType::Failed {
        BroadcastJobPhase::Failed
    } else {
        BroadcastJobPhase::Completed
    };
    status.completion_time = Some(Time(now));
    status.conditions.push(JobCondition {
        type_,
        status: "True".to_owned(),
        last_probe_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
        reason: reason.to_owned(),
        message: message.to_owned(),
    });
}

fn ttl_requeue(ttl: Option<i32>) -> Option<Duration> {
    ttl.map(|ttl| seconds(i64::from(ttl) + 1))
}

fn seconds(value: i64) -> Duration {
    Duration::from_secs(u64::try_from(value).unwrap_or(0))
}

fn count(value: usize) -> i32 {
    i32::try_from(value).unwrap_or(i32::MAX)
}
