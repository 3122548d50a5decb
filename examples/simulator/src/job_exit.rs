//! Job pods finish: a pod with `restartPolicy: Never` or `OnFailure` whose containers have all run for the
//! job run duration exits with the code in its annotation `simulator.kruise.io/exit-code` (default 0; a
//! value that is not an integer exits with 1, reason `InvalidExitCode`).
//!
//! * exit 0: every container `terminated` (`Completed`), phase `Succeeded`;
//! * another code with `Never`: every container `terminated` (`Error`), phase `Failed`;
//! * another code with `OnFailure`: kubelet restarts the containers (`restartCount + 1`, the exit in
//!   `lastState`, a new container ID), the pod stays `Running` and exits again after the run duration.
//!
//! Pure, like [`super::pod_status`], whose decision it refines.

use std::time::Duration;

use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateRunning, ContainerStateTerminated, Pod, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::identity;
use super::pod_status::StatusDecision;

/// The annotation with a job pod's exit code.
pub const EXIT_CODE_ANNOTATION: &str = "simulator.kruise.io/exit-code";

/// `decision` (from [`super::pod_status::decide`]) with the job exit applied at `now`.
#[must_use]
pub fn apply(
    pod: &Pod,
    decision: StatusDecision,
    run_for: Duration,
    now: Timestamp,
) -> StatusDecision {
    let restart_policy = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.restart_policy.as_deref());
    let on_failure = match restart_policy {
        Some("Never") => false,
        Some("OnFailure") => true,
        _ => return decision,
    };
    let current = pod.status.clone().unwrap_or_default();
    let mut status = decision.status.clone().unwrap_or_else(|| current.clone());
    if status.phase.as_deref() != Some("Running") {
        return decision;
    }
    let run_for = SignedDuration::try_from(run_for).unwrap_or(SignedDuration::MAX);
    let started: Option<Timestamp> = status
        .container_statuses
        .iter()
        .flatten()
        .map(|cs| {
            cs.state
                .as_ref()
                .and_then(|state| state.running.as_ref())
                .and_then(|running| running.started_at.as_ref())
                .map(|time| time.0)
        })
        .try_fold(None::<Timestamp>, |latest, started| {
            started.map(|started| Some(latest.map_or(started, |l| l.max(started))))
        })
        .flatten();
    let Some(started) = started else {
        return decision;
    };
    let due = started.checked_add(run_for).unwrap_or(Timestamp::MAX);
    if now < due {
        let wait = now.duration_until(due).unsigned_abs();
        let recheck = decision.recheck_after.map_or(wait, |other| other.min(wait));
        return StatusDecision {
            recheck_after: Some(recheck),
            ..decision
        };
    }
    let annotation = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(EXIT_CODE_ANNOTATION));
    let (code, invalid) = match annotation.map(|value| value.trim().parse::<i32>()) {
        None => (0, false),
        Some(Ok(code)) => (code, false),
        Some(Err(_)) => (1, true),
    };
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();
    let reason = match (code, invalid) {
        (_, true) => "InvalidExitCode",
        (0, _) => "Completed",
        _ => "Error",
    };
    let restart = code != 0 && on_failure;
    for container in status.container_statuses.iter_mut().flatten() {
        let running = container
            .state
            .as_ref()
            .and_then(|state| state.running.clone())
            .unwrap_or_default();
        let exited = ContainerStateTerminated {
            container_id: container.container_id.clone(),
            exit_code: code,
            reason: Some(reason.to_owned()),
            started_at: running.started_at,
            finished_at: Some(Time(now)),
            ..ContainerStateTerminated::default()
        };
        container.ready = false;
        if restart {
            container.restart_count += 1;
            let id = identity::container_id(uid, &container.name, container.restart_count);
            container.container_id = Some(id);
            container.last_state = Some(ContainerState {
                terminated: Some(exited),
                ..ContainerState::default()
            });
            container.state = Some(ContainerState {
                running: Some(ContainerStateRunning {
                    started_at: Some(Time(now)),
                }),
                ..ContainerState::default()
            });
            container.ready = true;
        } else {
            container.started = Some(false);
            container.state = Some(ContainerState {
                terminated: Some(exited),
                ..ContainerState::default()
            });
        }
    }
    if !restart {
        status.phase = Some(if code == 0 { "Succeeded" } else { "Failed" }.to_owned());
        mark_not_ready(&mut status, now);
    }
    StatusDecision {
        status: (status != current).then_some(status),
        recheck_after: restart.then(|| run_for.unsigned_abs()),
    }
}

fn mark_not_ready(status: &mut PodStatus, now: Timestamp) {
    for condition in status.conditions.iter_mut().flatten() {
        if (condition.type_ == "Ready" || condition.type_ == "ContainersReady")
            && condition.status != "False"
        {
            condition.status = "False".to_owned();
            condition.reason = Some("PodCompleted".to_owned());
            condition.last_transition_time = Some(Time(now));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pod_status::{Behaviour, decide};

    fn pod(policy: &str, code: Option<&str>) -> Pod {
        let mut pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "uid": "u-1"},
            "spec": {"restartPolicy": policy, "nodeName": "n",
                "containers": [{"name": "main", "image": "busybox"}]}
        }))
        .unwrap();
        if let Some(code) = code {
            pod.metadata.annotations =
                Some([(EXIT_CODE_ANNOTATION.to_owned(), code.to_owned())].into());
        }
        pod
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    /// Runs the simulated kubelet with job exits from t=0 to `until`, one second at a time.
    fn run(mut pod: Pod, until: i64) -> Pod {
        let behaviour = Behaviour {
            ready_delay: Duration::from_secs(1),
            ..Behaviour::default()
        };
        for second in 0..=until {
            if matches!(
                pod.status.as_ref().and_then(|s| s.phase.as_deref()),
                Some("Succeeded" | "Failed")
            ) {
                break;
            }
            let now = at(second);
            let decision = apply(
                &pod,
                decide(&pod, &behaviour, now),
                Duration::from_secs(3),
                now,
            );
            if let Some(status) = decision.status {
                pod.status = Some(status);
            }
        }
        pod
    }

    fn phase(pod: &Pod) -> &str {
        pod.status.as_ref().unwrap().phase.as_deref().unwrap()
    }

    #[test]
    fn job_pods_succeed_after_the_run_duration() {
        assert_eq!(phase(&run(pod("Never", None), 3)), "Running");
        let done = run(pod("Never", None), 4);
        assert_eq!(phase(&done), "Succeeded");
        let container = &done
            .status
            .as_ref()
            .unwrap()
            .container_statuses
            .as_ref()
            .unwrap()[0];
        let terminated = container
            .state
            .as_ref()
            .unwrap()
            .terminated
            .as_ref()
            .unwrap();
        assert_eq!(terminated.exit_code, 0);
        assert_eq!(terminated.reason.as_deref(), Some("Completed"));
        assert!(!container.ready);
    }

    #[test]
    fn a_non_zero_code_fails_never_pods() {
        let done = run(pod("Never", Some("3")), 10);
        assert_eq!(phase(&done), "Failed");
        let container = &done
            .status
            .as_ref()
            .unwrap()
            .container_statuses
            .as_ref()
            .unwrap()[0];
        assert_eq!(
            container
                .state
                .as_ref()
                .unwrap()
                .terminated
                .as_ref()
                .unwrap()
                .exit_code,
            3
        );
        let invalid = run(pod("Never", Some("three")), 10);
        assert_eq!(phase(&invalid), "Failed");
    }

    #[test]
    fn on_failure_pods_restart_and_keep_running() {
        let looping = run(pod("OnFailure", Some("1")), 10);
        assert_eq!(phase(&looping), "Running");
        let container = &looping
            .status
            .as_ref()
            .unwrap()
            .container_statuses
            .as_ref()
            .unwrap()[0];
        // Exits at 4, 7 and 10.
        assert_eq!(container.restart_count, 3);
        assert_eq!(
            container
                .last_state
                .as_ref()
                .unwrap()
                .terminated
                .as_ref()
                .unwrap()
                .exit_code,
            1
        );
    }

    #[test]
    fn long_running_pods_are_left_alone() {
        assert_eq!(phase(&run(pod("Always", Some("1")), 10)), "Running");
    }
}
