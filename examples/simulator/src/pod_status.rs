//! What a kubelet would report for a pod now: the pure heart of the node simulator.
//!
//! The status is derived from the pod alone (its spec, its last reported status, the clock), so the
//! simulator keeps no memory between reconciles and restarts cleanly:
//!
//! * first sight on a node: phase `Pending`, containers `waiting: ContainerCreating`, `startTime` = now;
//! * `startTime + ready delay (+ slow-node delay)`: phase `Running`, containers running, each with a
//!   deterministic `containerID` and `imageID` (see [`super::identity`]), ready unless the pod is marked
//!   never-ready;
//! * a container whose spec image differs from the image it runs (an in-place update) is stopped at once
//!   (`waiting`, not ready, `lastState.terminated` with `finishedAt` = now) and started again with the new
//!   image after the restart delay: new `containerID`, `restartCount + 1`, new `imageID`;
//! * `ContainersReady` when every container is ready; `Ready` when, in addition, every readiness gate's
//!   condition is `True` (conditions written by others, like `InPlaceUpdateReady` and `KruisePodReady`,
//!   are kept as they are).
//!
//! ```
//! use std::time::Duration;
//! use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
//! use kruise_simulator::pod_status::{Behaviour, decide};
//!
//! let pod = Pod {
//!     metadata: kube::api::ObjectMeta { uid: Some("uid-1".into()), ..Default::default() },
//!     spec: Some(PodSpec {
//!         containers: vec![Container { name: "main".into(), image: Some("nginx:1.25".into()), ..Default::default() }],
//!         ..Default::default()
//!     }),
//!     ..Default::default()
//! };
//! let behaviour = Behaviour { ready_delay: Duration::from_secs(2), ..Default::default() };
//! let now = "2024-05-01T10:00:00Z".parse().unwrap();
//! let decision = decide(&pod, &behaviour, now);
//! let status = decision.status.unwrap();
//! assert_eq!(status.phase.as_deref(), Some("Pending"));
//! assert_eq!(decision.recheck_after, Some(Duration::from_secs(2)));
//! ```

use std::time::Duration;

use k8s_openapi::api::core::v1::{
    Container, ContainerState, ContainerStateRunning, ContainerStateTerminated,
    ContainerStateWaiting, ContainerStatus, Pod, PodCondition, PodIP, PodStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::identity;

/// How the simulated kubelet treats one pod.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Behaviour {
    /// From the first status write (`startTime`) to containers running and ready.
    pub ready_delay: Duration,
    /// From an in-place image change being noticed to the new container running.
    pub restart_delay: Duration,
    /// Added to both delays (a slow node).
    pub extra_delay: Duration,
    /// Containers run but never report ready (failure injection).
    pub never_ready: bool,
    /// The node's InternalIP, reported as `hostIP`.
    pub host_ip: String,
}

/// What to write and when to look again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusDecision {
    /// The new status, when it differs from the pod's current one.
    pub status: Option<PodStatus>,
    /// A time-driven transition is due after this long (a start or a restart).
    pub recheck_after: Option<Duration>,
}

/// Condition types the simulator owns; every other condition is left as it is.
const POD_SCHEDULED: &str = "PodScheduled";
const INITIALIZED: &str = "Initialized";
const CONTAINERS_READY: &str = "ContainersReady";
const READY: &str = "Ready";

/// The status a kubelet would report for `pod` at `now` (second precision, as the API server stores it).
#[must_use]
pub fn decide(pod: &Pod, behaviour: &Behaviour, now: Timestamp) -> StatusDecision {
    let now = truncate(now);
    let current = pod.status.clone().unwrap_or_default();
    let mut status = current.clone();
    let mut recheck = Recheck::default();
    let spec_containers = pod
        .spec
        .as_ref()
        .map_or(&[][..], |spec| &spec.containers[..]);
    let init_containers = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.init_containers.as_deref())
        .unwrap_or_default();
    let uid = pod.metadata.uid.as_deref().unwrap_or_default();

    let start_time = status
        .start_time
        .as_ref()
        .map_or(now, |time| truncate(time.0));
    status.start_time = Some(Time(start_time));
    if !behaviour.host_ip.is_empty() {
        status.host_ip = Some(behaviour.host_ip.clone());
    }
    let startup = behaviour.ready_delay.saturating_add(behaviour.extra_delay);
    let running_at = add(start_time, startup);
    let started = now >= running_at;

    if started {
        let ip = identity::pod_ip(uid);
        status.pod_ip = Some(ip.clone());
        status.pod_ips = Some(vec![PodIP { ip }]);
        status.phase = Some("Running".into());
        status.init_container_statuses = (!init_containers.is_empty()).then(|| {
            init_containers
                .iter()
                .map(|container| completed_init_container(container, uid, start_time, running_at))
                .collect()
        });
        let restart = behaviour
            .restart_delay
            .saturating_add(behaviour.extra_delay);
        status.container_statuses = Some(
            spec_containers
                .iter()
                .map(|container| {
                    let previous = current
                        .container_statuses
                        .iter()
                        .flatten()
                        .find(|cs| cs.name == container.name);
                    running_container(
                        container,
                        previous,
                        uid,
                        now,
                        restart,
                        behaviour.never_ready,
                        &mut recheck,
                    )
                })
                .collect(),
        );
    } else {
        status.phase = Some("Pending".into());
        recheck.at(now, running_at);
        status.init_container_statuses = (!init_containers.is_empty())
            .then(|| init_containers.iter().map(creating_container).collect());
        status.container_statuses = Some(spec_containers.iter().map(creating_container).collect());
    }

    set_ready_conditions(pod, &mut status, started, now);

    StatusDecision {
        status: (status != current).then_some(status),
        recheck_after: recheck.after,
    }
}

/// Sets the conditions kubelet owns from the container statuses: `PodScheduled`, `Initialized`,
/// `ContainersReady` (every container ready, once `started`) and `Ready` (that, and every readiness gate's
/// condition `True`). Other conditions stay as they are; transition times move only on a change.
pub fn set_ready_conditions(pod: &Pod, status: &mut PodStatus, started: bool, now: Timestamp) {
    let statuses = status.container_statuses.as_deref().unwrap_or_default();
    let unready: Vec<&str> = statuses
        .iter()
        .filter(|cs| !cs.ready)
        .map(|cs| cs.name.as_str())
        .collect();
    let containers_ready = started && unready.is_empty();
    let gates_problem =
        readiness_gates_problem(pod, status.conditions.as_deref().unwrap_or_default());

    let conditions = status.conditions.get_or_insert_with(Vec::new);
    set_condition(conditions, POD_SCHEDULED, true, None, now, false);
    set_condition(conditions, INITIALIZED, true, None, now, false);
    let containers_message = format!("containers with unready status: [{}]", unready.join(" "));
    let containers_reason =
        (!containers_ready).then_some(("ContainersNotReady", containers_message.as_str()));
    set_condition(
        conditions,
        CONTAINERS_READY,
        containers_ready,
        containers_reason,
        now,
        true,
    );
    let ready_reason = match (&containers_reason, &gates_problem) {
        (Some(reason), _) => Some(*reason),
        (None, Some(problem)) => Some(("ReadinessGatesNotReady", problem.as_str())),
        (None, None) => None,
    };
    set_condition(
        conditions,
        READY,
        ready_reason.is_none(),
        ready_reason,
        now,
        true,
    );
}

/// The earliest future deadline seen while deciding.
#[derive(Default)]
struct Recheck {
    after: Option<Duration>,
}

impl Recheck {
    fn at(&mut self, now: Timestamp, deadline: Timestamp) {
        if deadline > now {
            let wait = now.duration_until(deadline).unsigned_abs();
            self.after = Some(self.after.map_or(wait, |current| current.min(wait)));
        }
    }
}

fn creating_container(container: &Container) -> ContainerStatus {
    ContainerStatus {
        name: container.name.clone(),
        image: identity::reported_image(container.image.as_deref().unwrap_or_default()),
        image_id: String::new(),
        ready: false,
        restart_count: 0,
        started: Some(false),
        state: Some(ContainerState {
            waiting: Some(ContainerStateWaiting {
                reason: Some("ContainerCreating".into()),
                message: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn completed_init_container(
    container: &Container,
    uid: &str,
    started_at: Timestamp,
    finished_at: Timestamp,
) -> ContainerStatus {
    let image = container.image.as_deref().unwrap_or_default();
    let id = identity::container_id(uid, &container.name, 0);
    ContainerStatus {
        name: container.name.clone(),
        image: identity::reported_image(image),
        image_id: identity::image_id(image),
        container_id: Some(id.clone()),
        ready: true,
        restart_count: 0,
        started: Some(false),
        state: Some(ContainerState {
            terminated: Some(ContainerStateTerminated {
                container_id: Some(id),
                exit_code: 0,
                reason: Some("Completed".into()),
                started_at: Some(Time(started_at)),
                finished_at: Some(Time(finished_at)),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The status of a container of a started pod, given what was reported for it before.
fn running_container(
    container: &Container,
    previous: Option<&ContainerStatus>,
    uid: &str,
    now: Timestamp,
    restart_delay: Duration,
    never_ready: bool,
    recheck: &mut Recheck,
) -> ContainerStatus {
    let spec_image = container.image.as_deref().unwrap_or_default();
    let wanted_image = identity::reported_image(spec_image);
    let Some(previous) = previous.filter(|cs| cs.container_id.is_some()) else {
        return start(container, None, uid, 0, now, never_ready);
    };
    let state = previous.state.clone().unwrap_or_default();
    if let Some(running) = &state.running {
        if previous.image == wanted_image {
            let mut same = previous.clone();
            same.ready = !never_ready;
            same.started = Some(true);
            return same;
        }
        // In-place image change: stop the old container now.
        let stopped = ContainerStateTerminated {
            container_id: previous.container_id.clone(),
            exit_code: 0,
            reason: Some("Completed".into()),
            started_at: running.started_at.clone(),
            finished_at: Some(Time(now)),
            ..Default::default()
        };
        if restart_delay.is_zero() {
            return start(
                container,
                Some(stopped),
                uid,
                previous.restart_count + 1,
                now,
                never_ready,
            );
        }
        recheck.at(now, add(now, restart_delay));
        return ContainerStatus {
            ready: false,
            started: Some(false),
            state: Some(ContainerState {
                waiting: Some(ContainerStateWaiting {
                    reason: Some("ContainerCreating".into()),
                    message: Some(format!("pulling image {spec_image:?}")),
                }),
                ..Default::default()
            }),
            last_state: Some(ContainerState {
                terminated: Some(stopped),
                ..Default::default()
            }),
            ..previous.clone()
        };
    }
    // Stopped and waiting for the restart (or in a state this simulator never writes: start it over).
    let last = previous
        .last_state
        .as_ref()
        .and_then(|last| last.terminated.clone());
    let stopped_at = last
        .as_ref()
        .and_then(|terminated| terminated.finished_at.as_ref())
        .map_or(now, |time| truncate(time.0));
    let restart_at = add(stopped_at, restart_delay);
    if now < restart_at {
        recheck.at(now, restart_at);
        let mut waiting = previous.clone();
        waiting.ready = false;
        return waiting;
    }
    start(
        container,
        last,
        uid,
        previous.restart_count + 1,
        now,
        never_ready,
    )
}

/// A freshly started container: the `start`-th start of this container in this pod.
fn start(
    container: &Container,
    last: Option<ContainerStateTerminated>,
    uid: &str,
    start: i32,
    now: Timestamp,
    never_ready: bool,
) -> ContainerStatus {
    let image = container.image.as_deref().unwrap_or_default();
    ContainerStatus {
        name: container.name.clone(),
        image: identity::reported_image(image),
        image_id: identity::image_id(image),
        container_id: Some(identity::container_id(uid, &container.name, start)),
        ready: !never_ready,
        restart_count: start,
        started: Some(true),
        state: Some(ContainerState {
            running: Some(ContainerStateRunning {
                started_at: Some(Time(now)),
            }),
            ..Default::default()
        }),
        last_state: last.map(|terminated| ContainerState {
            terminated: Some(terminated),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Why the readiness gates hold the pod back (kubelet's wording), or `None` when every gate is `True`.
fn readiness_gates_problem(pod: &Pod, conditions: &[PodCondition]) -> Option<String> {
    let gates = pod
        .spec
        .as_ref()
        .and_then(|spec| spec.readiness_gates.as_deref())
        .unwrap_or_default();
    let problems: Vec<String> = gates
        .iter()
        .filter_map(|gate| {
            let kind = &gate.condition_type;
            match conditions.iter().find(|condition| &condition.type_ == kind) {
                None => Some(format!(
                    "corresponding condition of pod readiness gate \"{kind}\" does not exist."
                )),
                Some(condition) if condition.status != "True" => Some(format!(
                    "the status of pod readiness gate \"{kind}\" is not \"True\", but {}",
                    condition.status
                )),
                Some(_) => None,
            }
        })
        .collect();
    (!problems.is_empty()).then(|| problems.join(", "))
}

/// Sets a condition the simulator owns; the transition time moves only when the status changes.
fn set_condition(
    conditions: &mut Vec<PodCondition>,
    kind: &str,
    value: bool,
    reason: Option<(&str, &str)>,
    now: Timestamp,
    overwrite: bool,
) {
    let status = if value { "True" } else { "False" };
    let (reason, message) = match reason {
        Some((reason, message)) => (Some(reason.to_owned()), Some(message.to_owned())),
        None => (None, None),
    };
    match conditions
        .iter_mut()
        .find(|condition| condition.type_ == kind)
    {
        Some(_) if !overwrite => {}
        Some(condition) => {
            if condition.status != status {
                condition.last_transition_time = Some(Time(now));
            }
            condition.status = status.to_owned();
            condition.reason = reason;
            condition.message = message;
        }
        None => conditions.push(PodCondition {
            type_: kind.to_owned(),
            status: status.to_owned(),
            reason,
            message,
            last_transition_time: Some(Time(now)),
            ..Default::default()
        }),
    }
}

fn truncate(time: Timestamp) -> Timestamp {
    Timestamp::from_second(time.as_second()).unwrap_or(time)
}

fn add(time: Timestamp, duration: Duration) -> Timestamp {
    time.saturating_add(duration).unwrap_or(Timestamp::MAX)
}

#[cfg(test)]
mod tests;
