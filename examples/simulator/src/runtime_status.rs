//! The containerd-backed mode's kubelet decisions, pure: from the pod and what the container runtime says
//! about its containers ([`PodView`]), which containers to (re)start now and the pod status to report.
//!
//! * a container the runtime does not have yet is started (restart count 0);
//! * an exited container is started again as kubelet would by `restartPolicy` (`Always`: always;
//!   `OnFailure`: when its exit code is not 0; `Never`: not), with restart count + 1, after a crash backoff
//!   of 0 s for the first restart, then 1 s, 2 s, 4 s ... at most 60 s, counted from its exit;
//! * each container's status is its newest incarnation: `running` (ready), `terminated` (exit code, reason,
//!   times) or `waiting`; `lastState` is the incarnation before it; the `containerID` is
//!   `<runtime>://<id>` and the `imageID` the runtime's image reference;
//! * the phase: `Running` while any container runs or will be restarted, `Succeeded` once every container
//!   exited 0 and none will be restarted, `Failed` when one of them failed; `Pending` before any started;
//! * the conditions as [`super::pod_status::set_ready_conditions`] (readiness gates honoured, so a
//!   `KruisePodReady` set to `False` makes the pod not ready).
//!
//! ```
//! use k8s_openapi::api::core::v1::Pod;
//! use kruise_lifecycle::container_recreate::runtime_view::PodView;
//! use kruise_simulator::runtime_status::decide;
//!
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "p", "uid": "u"},
//!     "spec": {"containers": [{"name": "main", "image": "busybox"}]},
//! })).unwrap();
//! let view = PodView { runtime: "containerd".into(), containers: vec![] };
//! let decision = decide(&pod, &view, "10.0.0.1", "2024-05-01T10:00:00Z".parse().unwrap());
//! assert_eq!(decision.start, [("main".to_owned(), 0)]);
//! assert_eq!(decision.status.phase.as_deref(), Some("Pending"));
//! ```

use std::time::Duration;

use k8s_openapi::api::core::v1::{
    ContainerState, ContainerStateRunning, ContainerStateTerminated, ContainerStateWaiting,
    ContainerStatus, Pod, PodIP, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_lifecycle::container_recreate::runtime_view::{ContainerView, PodView, RuntimeState};

use super::pod_status::set_ready_conditions;

/// The longest crash backoff.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// What to do for one pod now.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decision {
    /// Containers to create and start: `(name, restart count)`.
    pub start: Vec<(String, i32)>,
    /// The status to report (compare with the pod's before writing).
    pub status: PodStatus,
    /// A restart is due after this long.
    pub recheck_after: Option<Duration>,
}

/// Whether kubelet starts an exited container again under `restart_policy`.
#[must_use]
pub fn restarts(restart_policy: &str, exit_code: i32) -> bool {
    match restart_policy {
        "Never" => false,
        "OnFailure" => exit_code != 0,
        _ => true,
    }
}

/// The crash backoff before restart number `restart_count + 1`.
#[must_use]
pub fn backoff(restart_count: i32) -> Duration {
    match u32::try_from(restart_count) {
        Ok(0) | Err(_) => Duration::ZERO,
        Ok(count) => Duration::from_secs(1u64 << (count - 1).min(6)).min(MAX_BACKOFF),
    }
}

/// The decision for `pod` given the runtime's `view` of it, on a node whose address is `host_ip` (pods run
/// in the host network).
#[must_use]
pub fn decide(pod: &Pod, view: &PodView, host_ip: &str, now: Timestamp) -> Decision {
    let now = Timestamp::from_second(now.as_second()).unwrap_or(now);
    let spec = pod.spec.clone().unwrap_or_default();
    let restart_policy = spec.restart_policy.as_deref().unwrap_or("Always");
    let mut decision = Decision::default();
    let mut status = pod.status.clone().unwrap_or_default();
    let mut statuses = Vec::new();
    let (mut running, mut will_run, mut failed, mut started_any) = (0, 0, 0, false);
    for container in &spec.containers {
        let image = container.image.clone().unwrap_or_default();
        let Some(latest) = view.latest(&container.name) else {
            decision.start.push((container.name.clone(), 0));
            will_run += 1;
            statuses.push(ContainerStatus {
                name: container.name.clone(),
                image,
                state: Some(waiting("ContainerCreating")),
                ..ContainerStatus::default()
            });
            continue;
        };
        started_any = true;
        let previous = view
            .containers
            .iter()
            .filter(|other| other.name == container.name && other.id != latest.id)
            .max_by_key(|other| other.created_at_ns);
        let mut reported = ContainerStatus {
            name: container.name.clone(),
            image,
            image_id: latest.image_ref.clone(),
            container_id: Some(view.full_id(latest)),
            restart_count: latest.restart_count,
            last_state: previous.map(|previous| terminated_state(view, previous)),
            ..ContainerStatus::default()
        };
        match latest.state {
            RuntimeState::Running => {
                running += 1;
                reported.ready = true;
                reported.started = Some(true);
                reported.state = Some(ContainerState {
                    running: Some(ContainerStateRunning {
                        started_at: latest.started_at().map(whole_second),
                    }),
                    ..ContainerState::default()
                });
            }
            RuntimeState::Exited => {
                reported.started = Some(false);
                if restarts(restart_policy, latest.exit_code) {
                    will_run += 1;
                    let due = latest
                        .finished_at()
                        .unwrap_or(now)
                        .saturating_add(backoff(latest.restart_count))
                        .unwrap_or(Timestamp::MAX);
                    if due <= now {
                        decision.start.push((
                            container.name.clone(),
                            latest.restart_count.saturating_add(1),
                        ));
                    } else {
                        let wait = now.duration_until(due).unsigned_abs();
                        decision.recheck_after =
                            Some(decision.recheck_after.map_or(wait, |other| other.min(wait)));
                    }
                    reported.last_state = Some(terminated_state(view, latest));
                    reported.state = Some(waiting("CrashLoopBackOff"));
                } else {
                    if latest.exit_code != 0 {
                        failed += 1;
                    }
                    reported.state = Some(terminated_state(view, latest));
                }
            }
            RuntimeState::Created | RuntimeState::Unknown => {
                will_run += 1;
                reported.state = Some(waiting("ContainerCreating"));
            }
        }
        statuses.push(reported);
    }
    let phase = if running > 0 || (will_run > 0 && started_any) {
        "Running"
    } else if !started_any {
        "Pending"
    } else if failed > 0 {
        "Failed"
    } else {
        "Succeeded"
    };
    status.phase = Some(phase.to_owned());
    status.container_statuses = Some(statuses);
    status.host_ip = Some(host_ip.to_owned());
    status.pod_ip = Some(host_ip.to_owned());
    status.pod_ips = Some(vec![PodIP {
        ip: host_ip.to_owned(),
    }]);
    if status.start_time.is_none() {
        status.start_time = Some(Time(now));
    }
    set_ready_conditions(pod, &mut status, started_any, now);
    decision.status = status;
    decision
}

/// The reason kubelet reports for a container whose environment could not be built.
pub const CREATE_CONTAINER_CONFIG_ERROR: &str = "CreateContainerConfigError";

/// Reports each `(container, message)` of `errors` as kubelet does when it could not build the container's
/// configuration: waiting with reason [`CREATE_CONTAINER_CONFIG_ERROR`] and the message, not ready.
pub fn mark_config_errors(status: &mut PodStatus, errors: &[(String, String)]) {
    for reported in status.container_statuses.iter_mut().flatten() {
        if let Some((_, message)) = errors.iter().find(|(name, _)| *name == reported.name) {
            reported.ready = false;
            reported.started = Some(false);
            reported.state = Some(ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some(CREATE_CONTAINER_CONFIG_ERROR.to_owned()),
                    message: Some(message.clone()),
                }),
                ..ContainerState::default()
            });
        }
    }
}

/// A runtime time as the API server stores it (whole seconds), so an unchanged status compares equal to the
/// stored one and is not written again.
fn whole_second(time: Timestamp) -> Time {
    Time(Timestamp::from_second(time.as_second()).unwrap_or(time))
}

fn waiting(reason: &str) -> ContainerState {
    ContainerState {
        waiting: Some(ContainerStateWaiting {
            reason: Some(reason.to_owned()),
            message: None,
        }),
        ..ContainerState::default()
    }
}

fn terminated_state(view: &PodView, container: &ContainerView) -> ContainerState {
    ContainerState {
        terminated: Some(ContainerStateTerminated {
            container_id: Some(view.full_id(container)),
            exit_code: container.exit_code,
            reason: (!container.reason.is_empty()).then(|| container.reason.clone()),
            started_at: container.started_at().map(whole_second),
            finished_at: container.finished_at().map(whole_second),
            ..ContainerStateTerminated::default()
        }),
        ..ContainerState::default()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const SECOND: i64 = 1_000_000_000;
    const T0: i64 = 1_714_557_600 * SECOND; // 2024-05-01T10:00:00Z

    fn pod(policy: &str) -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "p", "uid": "u"},
            "spec": {"restartPolicy": policy, "readinessGates": [{"conditionType": "KruisePodReady"}],
                "containers": [{"name": "main", "image": "busybox"}, {"name": "side", "image": "busybox"}]},
            "status": {"conditions": [{"type": "KruisePodReady", "status": "True"}]},
        }))
        .unwrap()
    }

    fn container(
        name: &str,
        id: &str,
        state: RuntimeState,
        restarts: i32,
        created: i64,
        exit: i32,
    ) -> ContainerView {
        ContainerView {
            name: name.into(),
            id: id.into(),
            state,
            restart_count: restarts,
            created_at_ns: created,
            started_at_ns: created,
            finished_at_ns: if state == RuntimeState::Exited {
                created + SECOND
            } else {
                0
            },
            exit_code: exit,
            image_ref: "sha256:img".into(),
            ..ContainerView::default()
        }
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(T0 / SECOND + seconds).unwrap()
    }

    fn view(containers: Vec<ContainerView>) -> PodView {
        PodView {
            runtime: "containerd".into(),
            containers,
        }
    }

    fn condition(status: &PodStatus, kind: &str) -> String {
        status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == kind)
            .unwrap()
            .status
            .clone()
    }

    #[test]
    fn running_containers_are_reported_with_runtime_ids_and_the_pod_is_ready() {
        let decision = decide(
            &pod("Always"),
            &view(vec![
                container("main", "m1", RuntimeState::Running, 0, T0, 0),
                container("side", "s1", RuntimeState::Running, 0, T0, 0),
            ]),
            "10.0.0.1",
            at(5),
        );
        assert!(decision.start.is_empty());
        let status = decision.status;
        assert_eq!(status.phase.as_deref(), Some("Running"));
        let main = &status.container_statuses.as_ref().unwrap()[0];
        assert_eq!(main.container_id.as_deref(), Some("containerd://m1"));
        assert_eq!(main.image_id, "sha256:img");
        assert!(main.ready);
        assert_eq!(condition(&status, "Ready"), "True");
        assert_eq!(status.pod_ip.as_deref(), Some("10.0.0.1"));
    }

    #[test]
    fn a_false_readiness_gate_makes_the_pod_not_ready() {
        let mut pod = pod("Always");
        pod.status.as_mut().unwrap().conditions.as_mut().unwrap()[0].status = "False".into();
        let decision = decide(
            &pod,
            &view(vec![
                container("main", "m1", RuntimeState::Running, 0, T0, 0),
                container("side", "s1", RuntimeState::Running, 0, T0, 0),
            ]),
            "10.0.0.1",
            at(5),
        );
        assert_eq!(condition(&decision.status, "ContainersReady"), "True");
        assert_eq!(condition(&decision.status, "Ready"), "False");
    }

    #[test]
    fn exited_containers_restart_by_policy_with_backoff() {
        let exited = |exit| {
            view(vec![
                container("main", "m0", RuntimeState::Exited, 0, T0 - 10 * SECOND, 0),
                container("main", "m1", RuntimeState::Exited, 1, T0, exit),
                container("side", "s1", RuntimeState::Running, 0, T0, 0),
            ])
        };
        // restart count 1: 1 s backoff from the exit at T0+1.
        let decision = decide(&pod("Always"), &exited(137), "ip", at(1));
        assert!(decision.start.is_empty());
        assert_eq!(decision.recheck_after, Some(Duration::from_secs(1)));
        let decision = decide(&pod("Always"), &exited(137), "ip", at(2));
        assert_eq!(decision.start, [("main".to_owned(), 2)]);
        let main = &decision.status.container_statuses.as_ref().unwrap()[0];
        assert_eq!(
            main.last_state
                .as_ref()
                .unwrap()
                .terminated
                .as_ref()
                .unwrap()
                .exit_code,
            137
        );
        assert!(!main.ready);
        assert_eq!(decide(&pod("OnFailure"), &exited(0), "ip", at(9)).start, []);
        assert_eq!(
            decide(&pod("OnFailure"), &exited(1), "ip", at(9))
                .start
                .len(),
            1
        );
        assert_eq!(decide(&pod("Never"), &exited(1), "ip", at(9)).start, []);
    }

    #[test]
    fn phases() {
        let done = |main_exit, side_exit| {
            view(vec![
                container("main", "m1", RuntimeState::Exited, 0, T0, main_exit),
                container("side", "s1", RuntimeState::Exited, 0, T0, side_exit),
            ])
        };
        let phase = |policy, view: &PodView| {
            decide(&pod(policy), view, "ip", at(9))
                .status
                .phase
                .unwrap()
        };
        assert_eq!(phase("Never", &done(0, 0)), "Succeeded");
        assert_eq!(phase("Never", &done(0, 137)), "Failed");
        assert_eq!(phase("OnFailure", &done(0, 0)), "Succeeded");
        assert_eq!(phase("OnFailure", &done(1, 0)), "Running");
        assert_eq!(phase("Always", &done(0, 0)), "Running");
        assert_eq!(phase("Never", &view(vec![])), "Pending");
        let first = decide(&pod("Never"), &view(vec![]), "ip", at(0));
        assert_eq!(
            first.start,
            [("main".to_owned(), 0), ("side".to_owned(), 0)]
        );
    }

    #[test]
    fn backoff_doubles_up_to_a_minute() {
        assert_eq!(backoff(0), Duration::ZERO);
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(3), Duration::from_secs(4));
        assert_eq!(backoff(50), MAX_BACKOFF);
        assert_eq!(backoff(-1), Duration::ZERO);
    }

    #[test]
    fn config_errors_replace_the_waiting_state() {
        let mut status = PodStatus {
            container_statuses: Some(vec![
                ContainerStatus {
                    name: "a".into(),
                    state: Some(waiting("ContainerCreating")),
                    ..ContainerStatus::default()
                },
                ContainerStatus {
                    name: "b".into(),
                    ready: true,
                    ..ContainerStatus::default()
                },
            ]),
            ..PodStatus::default()
        };
        mark_config_errors(
            &mut status,
            &[("a".into(), "configmap \"p-barrier\" not found".into())],
        );
        let statuses = status.container_statuses.unwrap();
        let waiting = statuses[0]
            .state
            .as_ref()
            .unwrap()
            .waiting
            .as_ref()
            .unwrap();
        assert_eq!(
            waiting.reason.as_deref(),
            Some(CREATE_CONTAINER_CONFIG_ERROR)
        );
        assert_eq!(
            waiting.message.as_deref(),
            Some("configmap \"p-barrier\" not found")
        );
        assert!(statuses[1].ready, "other containers are untouched");
    }
}
