//! kruise-daemon's decisions for ContainerRecreateRequests (upstream `pkg/daemon/containerrecreate`), pure: the
//! caller observes (the requests of a pod, what the container runtime says about the pod, the clock) and executes
//! what comes back.
//!
//! * [`pick`]: which request of a pod to work on (phase weight, then age) and which to mark `Pending`;
//! * [`before_manage`]: set `Recreating` first, then honour the unready grace;
//! * [`decide`]: the per-container states from the runtime, and the next thing to do: write the states,
//!   kill one container (one kill per pass), or complete the request;
//! * [`kill_still_applies`]: whether a kill may still be recorded on a newer version of the request.
//!
//! ```
//! use kruise_api::apps::v1beta1::ContainerRecreateRequest;
//! use kruise_lifecycle::container_recreate::daemon::{before_manage, Step};
//!
//! let crr: ContainerRecreateRequest = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "apps.kruise.io/v1beta1", "kind": "ContainerRecreateRequest",
//!     "metadata": {"name": "restart", "namespace": "default", "creationTimestamp": "2024-05-01T10:00:00Z"},
//!     "spec": {"podName": "pod-a", "containers": [{"name": "app"}]},
//! })).unwrap();
//! let now = "2024-05-01T10:00:01Z".parse().unwrap();
//! assert_eq!(before_manage(&crr, now), Step::StartRecreating);
//! ```

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kruise_api::annotations::ContainerStatusSnapshot;
use kruise_api::apps::v1beta1::{
    ContainerRecreateRequest, ContainerRecreateRequestContainerRecreateState as RecreateState,
    ContainerRecreateRequestFailurePolicy as FailurePolicy, ContainerRecreateRequestPhase as Phase,
};
use kruise_api::keys::crr as keys;

use super::runtime_view::{PodView, RuntimeState, split_container_id};

/// The phase weight of upstream's pick order: `Completed` 1, `Recreating` 2, `Pending` 3, anything else 4.
#[must_use]
pub fn phase_weight(phase: &Phase) -> u8 {
    match phase {
        Phase::Completed => 1,
        Phase::Recreating => 2,
        Phase::Pending => 3,
        _ => 4,
    }
}

fn phase(crr: &ContainerRecreateRequest) -> Phase {
    crr.status
        .as_ref()
        .map(|status| status.phase.clone())
        .unwrap_or_default()
}

fn finished(crr: &ContainerRecreateRequest) -> bool {
    crr.metadata.deletion_timestamp.is_some()
        || crr
            .status
            .as_ref()
            .is_some_and(|status| status.completion_time.is_some())
}

/// What [`pick`] chose among the requests of one pod.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pick {
    /// The request to work on (an index into the given slice).
    pub picked: Option<usize>,
    /// Requests waiting behind it that have no phase yet: write `Pending` on them.
    pub to_pending: Vec<usize>,
}

/// Upstream's `pickRecreateRequest`: sort by phase weight then creation time (ties by name: upstream's sort
/// is unstable there), skip finished and deleting requests, pick the first, and mark the others that have
/// no phase yet `Pending`.
#[must_use]
pub fn pick(requests: &[&ContainerRecreateRequest]) -> Pick {
    let mut order: Vec<usize> = (0..requests.len()).collect();
    order.sort_by(|&a, &b| match (requests.get(a), requests.get(b)) {
        (Some(a), Some(b)) => compare(a, b),
        _ => Ordering::Equal,
    });
    let mut result = Pick::default();
    for index in order {
        let Some(crr) = requests.get(index) else {
            continue;
        };
        if finished(crr) {
            continue;
        }
        if result.picked.is_none() {
            result.picked = Some(index);
        } else if phase(crr).as_str().is_empty() {
            result.to_pending.push(index);
        }
    }
    result
}

fn compare(a: &ContainerRecreateRequest, b: &ContainerRecreateRequest) -> Ordering {
    let created = |crr: &ContainerRecreateRequest| {
        crr.metadata.creation_timestamp.as_ref().map(|time| time.0)
    };
    phase_weight(&phase(a))
        .cmp(&phase_weight(&phase(b)))
        .then_with(|| created(a).cmp(&created(b)))
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// What to do with the picked request before looking at its containers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// Write phase `Recreating` (always the first write; the next pass continues).
    StartRecreating,
    /// `unreadyGracePeriodSeconds` is set and kruise-manager has not made the pod not-ready yet: wait for
    /// the request to change.
    WaitForUnreadyAcquired,
    /// The pod is not-ready; the grace ends after this long.
    WaitForGrace(Duration),
    /// The unready time does not parse: complete the request with this message.
    Complete(String),
    /// Look at the containers ([`decide`]).
    Manage,
}

/// The first part of upstream's `sync`: phase `Recreating` first, then the unready grace, measured from the
/// `PreRecreateGrace` condition's `lastTransitionTime` (or, for requests written by an older manager, the
/// time in the `crr.apps.kruise.io/unready-acquired` annotation).
#[must_use]
pub fn before_manage(crr: &ContainerRecreateRequest, now: Timestamp) -> Step {
    if phase(crr) != Phase::Recreating {
        return Step::StartRecreating;
    }
    let Some(grace) = crr
        .spec
        .strategy
        .as_ref()
        .and_then(|strategy| strategy.unready_grace_period_seconds)
    else {
        return Step::Manage;
    };
    let since = match unready_acquired_at(crr) {
        Unready::NotAcquired => return Step::WaitForUnreadyAcquired,
        Unready::Invalid(text) => {
            return Step::Complete(format!("failed to parse unready time {text}"));
        }
        Unready::Since(since) => since,
    };
    let ends = since
        .saturating_add(Duration::from_secs(
            u64::try_from(grace).unwrap_or_default(),
        ))
        .unwrap_or(Timestamp::MAX);
    if now < ends {
        Step::WaitForGrace(now.duration_until(ends).unsigned_abs())
    } else {
        Step::Manage
    }
}

enum Unready {
    NotAcquired,
    Invalid(String),
    Since(Timestamp),
}

fn unready_acquired_at(crr: &ContainerRecreateRequest) -> Unready {
    let condition = crr.status.as_ref().and_then(|status| {
        status
            .conditions
            .iter()
            .find(|condition| condition.type_ == keys::PRE_RECREATE_GRACE_CONDITION)
    });
    if let Some(condition) = condition {
        return Unready::Since(condition.last_transition_time.0);
    }
    match crr
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get(keys::UNREADY_ACQUIRED_KEY))
    {
        None => Unready::NotAcquired,
        Some(text) if text.is_empty() => Unready::NotAcquired,
        Some(text) => text
            .parse::<Timestamp>()
            .map_or_else(|_| Unready::Invalid(text.clone()), Unready::Since),
    }
}

/// The container snapshot kruise-manager synced (v1beta1 status, else the v1alpha1 annotation), by name.
#[must_use]
pub fn snapshots(crr: &ContainerRecreateRequest) -> BTreeMap<String, ContainerStatusSnapshot> {
    let from_status = crr
        .status
        .as_ref()
        .map(|status| status.container_status_snapshot.clone())
        .unwrap_or_default();
    let list = if from_status.is_empty() {
        crr.metadata
            .annotations
            .as_ref()
            .and_then(|annotations| annotations.get(keys::SYNC_CONTAINER_STATUSES_ANNOTATION))
            .and_then(|text| serde_json::from_str::<Vec<ContainerStatusSnapshot>>(text).ok())
            .unwrap_or_default()
    } else {
        from_status
    };
    list.into_iter()
        .map(|snapshot| (snapshot.name.clone(), snapshot))
        .collect()
}

fn previous_state<'a>(crr: &'a ContainerRecreateRequest, name: &str) -> Option<&'a RecreateState> {
    crr.status.as_ref().and_then(|status| {
        status
            .container_recreate_states
            .iter()
            .find(|state| state.name == name)
    })
}

fn state(name: &str, phase: Phase, is_killed: bool, message: &str) -> RecreateState {
    RecreateState {
        name: name.to_owned(),
        phase,
        message: message.to_owned(),
        is_killed,
    }
}

/// Upstream's `getCurrentCRRContainersRecreateStates`: the state of every container of the request, from the
/// previous states, the runtime and the synced snapshot.
///
/// A container started within the second the request was created (creation times have second precision)
/// is not taken for a recreated one; upstream compares the exact start with the truncated creation time.
#[must_use]
pub fn current_states(
    crr: &ContainerRecreateRequest,
    view: &PodView,
    now: Timestamp,
) -> Vec<RecreateState> {
    let strategy = crr.spec.strategy.clone().unwrap_or_default();
    let min_started =
        Duration::from_secs(u64::try_from(strategy.min_started_seconds).unwrap_or_default());
    let created = crr.metadata.creation_timestamp.as_ref().map(|time| time.0);
    let snapshots = snapshots(crr);
    crr.spec
        .containers
        .iter()
        .map(|container| {
            let previous = previous_state(crr, &container.name);
            if let Some(previous) =
                previous.filter(|p| matches!(p.phase, Phase::Failed | Phase::Succeeded))
            {
                return previous.clone();
            }
            let was_killed = previous.is_some_and(|p| p.is_killed);
            let Some(running) = view.latest(&container.name) else {
                return state(
                    &container.name,
                    Phase::Pending,
                    was_killed,
                    "not found container on Node",
                );
            };
            if running.state == RuntimeState::Exited {
                return state(&container.name, Phase::Recreating, was_killed, "");
            }
            if strategy.force_recreate && !was_killed {
                return state(&container.name, Phase::Pending, false, "");
            }
            let full_id = view.full_id(running);
            let context = container.status_context.clone().unwrap_or_default();
            let started = running.started_at();
            let started_after_creation = match (started, created) {
                (Some(started), Some(created)) => started.as_second() > created.as_second(),
                _ => false,
            };
            if full_id != context.container_id
                || running.restart_count > context.restart_count
                || started_after_creation
            {
                let ran_long_enough = started.is_some_and(|started| {
                    now.duration_since(started)
                        .try_into()
                        .is_ok_and(|ran: Duration| ran > min_started)
                });
                let succeeded = snapshots
                    .get(&container.name)
                    .is_some_and(|snapshot| snapshot.container_id == full_id && snapshot.ready)
                    && ran_long_enough;
                let phase = if succeeded {
                    Phase::Succeeded
                } else {
                    Phase::Recreating
                };
                return state(&container.name, phase, was_killed, "");
            }
            state(&container.name, Phase::Pending, was_killed, "")
        })
        .collect()
}

/// The next thing to do for a request whose containers are being looked at.
#[derive(Clone, Debug, PartialEq)]
pub enum Decision {
    /// Complete the request (phase `Completed`, `completionTime`, this message).
    Complete(String),
    /// Write `status.containerRecreateStates`.
    Patch(Vec<RecreateState>),
    /// Kill this container: its preStop hook, then write `states_if_killed` (see [`kill_still_applies`] when
    /// that write conflicts), then stop it; when the stop fails, call [`decide`] again on the same request
    /// with the error (and write the result on the request as recorded).
    Kill {
        /// The container's name.
        name: String,
        /// The runtime's ID of the incarnation to stop (no `<runtime>://` prefix).
        container_id: String,
        /// The states that record the kill (this container `Recreating` and killed), written before the
        /// stop so that a daemon that dies during the stop knows, once started again, that a newer
        /// incarnation is the recreated container.
        states_if_killed: Vec<RecreateState>,
    },
    /// Nothing to write; look again after this long (`minStartedSeconds`), or when something changes.
    Wait(Option<Duration>),
}

/// Upstream's `manage`, without the I/O: given the runtime's view of the pod, the states to write, the one
/// container to kill, or completion. `kill_errors` holds the containers whose kill failed earlier in this
/// same pass (name → error): they become `Failed` ("kill container error: ..."), and with failure policy
/// `Ignore` the walk goes on to the next container, as upstream's does.
#[must_use]
pub fn decide(
    crr: &ContainerRecreateRequest,
    view: &PodView,
    kill_errors: &BTreeMap<String, String>,
    now: Timestamp,
) -> Decision {
    if let Err(message) = check_runtime(crr, &view.runtime) {
        return Decision::Complete(format!("failed to find runtime service: {message}"));
    }
    let previous = crr
        .status
        .as_ref()
        .map(|status| status.container_recreate_states.clone())
        .unwrap_or_default();
    let mut states = current_states(crr, view, now);
    if states != previous {
        return Decision::Patch(states);
    }
    let strategy = crr.spec.strategy.clone().unwrap_or_default();
    let ignore = strategy.failure_policy == Some(FailurePolicy::Ignore);
    let mut completed = 0;
    for index in 0..states.len() {
        let Some(current) = states.get_mut(index) else {
            break;
        };
        match current.phase {
            Phase::Succeeded => {
                completed += 1;
                continue;
            }
            Phase::Failed => {
                completed += 1;
                if ignore {
                    continue;
                }
                return Decision::Complete(String::new());
            }
            Phase::Recreating => {
                current.is_killed = true;
                if strategy.ordered_recreate {
                    break;
                }
                continue;
            }
            _ => {}
        }
        let Some(running) = view.latest(&current.name) else {
            break;
        };
        if let Some(error) = kill_errors.get(&current.name) {
            current.phase = Phase::Failed;
            current.message = format!("kill container error: {error}");
            if ignore {
                continue;
            }
            return Decision::Patch(states);
        }
        let container_id = running.id.clone();
        let name = current.name.clone();
        current.is_killed = true;
        current.phase = Phase::Recreating;
        return Decision::Kill {
            name,
            container_id,
            states_if_killed: states,
        };
    }
    if states != previous {
        return Decision::Patch(states);
    }
    if completed == states.len() {
        return Decision::Complete(String::new());
    }
    let min_started = u64::try_from(strategy.min_started_seconds).unwrap_or_default();
    Decision::Wait((min_started > 0).then(|| Duration::from_secs(min_started)))
}

/// Whether a kill decided on `decided_on` may still be recorded on `current`, a newer version of the same
/// request read after the record's write conflicted: the same object (UID), not finished or deleting, still
/// `Recreating`, and the same container states (only the daemon writes them; kruise-manager's writes, such as
/// the container snapshot, do not change the decision).
#[must_use]
pub fn kill_still_applies(
    decided_on: &ContainerRecreateRequest,
    current: &ContainerRecreateRequest,
) -> bool {
    let states = |crr: &ContainerRecreateRequest| {
        crr.status
            .as_ref()
            .map(|status| status.container_recreate_states.clone())
            .unwrap_or_default()
    };
    decided_on.metadata.uid == current.metadata.uid
        && !finished(current)
        && phase(current) == Phase::Recreating
        && states(current) == states(decided_on)
}

/// Upstream's `newRuntimeManager` checks: every container has a status context whose container ID names a
/// runtime, all the same one, and this daemon talks to it.
fn check_runtime(crr: &ContainerRecreateRequest, runtime: &str) -> Result<(), String> {
    let mut found: Option<&str> = None;
    for container in &crr.spec.containers {
        let id = container
            .status_context
            .as_ref()
            .map(|context| context.container_id.as_str())
            .filter(|id| !id.is_empty())
            .ok_or_else(|| {
                format!(
                    "no statusContext or empty containerID in {} container",
                    container.name
                )
            })?;
        let (kind, _) = split_container_id(id).ok_or_else(|| {
            format!(
                "failed to parse containerID {id} in {} container",
                container.name
            )
        })?;
        match found {
            None => found = Some(kind),
            Some(other) if other != kind => {
                return Err(format!(
                    "has different runtime types {other}, {kind} in Pod"
                ));
            }
            Some(_) => {}
        }
    }
    match found {
        None => Err("no runtime type found in Pod".to_owned()),
        Some(kind) if kind != runtime => {
            Err(format!("not found runtime service for {kind} in daemon"))
        }
        Some(_) => Ok(()),
    }
}

/// The kill of one container: how long its preStop hook and the stop may take (kubelet's `killContainer` with
/// the request's `terminationGracePeriodSeconds` as the pod's, 30 when unset).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grace {
    /// The whole grace period, in seconds.
    pub seconds: i64,
}

/// kubelet's minimum grace left for the stop (`minimumGracePeriodInSeconds`).
pub const MINIMUM_STOP_GRACE_SECONDS: i64 = 2;

impl Grace {
    /// The grace of a request.
    #[must_use]
    pub fn of(crr: &ContainerRecreateRequest) -> Self {
        let seconds = crr
            .spec
            .strategy
            .as_ref()
            .and_then(|strategy| strategy.termination_grace_period_seconds)
            .unwrap_or(30);
        Self { seconds }
    }

    /// Whether a preStop hook runs at all (kubelet: only with a positive grace period), and for at most how
    /// long.
    #[must_use]
    pub fn hook_budget(self) -> Option<Duration> {
        (self.seconds > 0)
            .then(|| Duration::from_secs(u64::try_from(self.seconds).unwrap_or_default()))
    }

    /// The `StopContainer` timeout after a preStop hook that took `hook` (kubelet: the grace minus the whole
    /// seconds the hook took, never under 2 s).
    #[must_use]
    pub fn stop_timeout(self, hook: Option<Duration>) -> i64 {
        let took = hook.map_or(0, |took| i64::try_from(took.as_secs()).unwrap_or(i64::MAX));
        self.seconds
            .saturating_sub(took)
            .max(MINIMUM_STOP_GRACE_SECONDS)
    }
}

#[cfg(test)]
#[path = "daemon_tests.rs"]
mod tests;
