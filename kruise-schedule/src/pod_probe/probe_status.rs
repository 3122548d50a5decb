//! The NodePodProbe status the node prober writes (upstream's `syncUpdateNodePodProbeStatus` and the
//! results manager of `pkg/daemon/podprobe`):
//!
//! * a worker's report is kept as the probe's latest result when its state or message changed, or when
//!   the kept one is 600 s old ([`should_record`]), so `lastProbeTime` moves at least every ten minutes;
//! * the status keeps the entries of the probes still in the spec (by pod UID and probe name) and drops
//!   the others, pods left without entries included;
//! * each kept result updates its entry (state, message, `lastProbeTime`), appending the pod and the
//!   probe when missing; `lastTransitionTime` is `now` for a new entry or a changed state.
//!
//! ```
//! use k8s_openapi::jiff::Timestamp;
//! use kruise_api::apps::v1alpha1::{NodePodProbe, ProbeState};
//! use kruise_schedule::pod_probe::probe_status::{ProbeResult, status};
//!
//! let probe: NodePodProbe = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "node-a"},
//!     "spec": {"podProbes": [{"name": "web-0", "namespace": "web", "uid": "u0", "IP": "10.0.0.5",
//!         "probes": [{"name": "healthy#idle", "containerName": "main", "probe": {}}]}]}
//! })).unwrap();
//! let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
//! let result = ProbeResult {
//!     namespace: "web".into(), pod: "web-0".into(), uid: "u0".into(), probe: "healthy#idle".into(),
//!     state: ProbeState::Succeeded, message: String::new(), probed_at: now,
//! };
//! let written = status(&probe, &[result], now);
//! assert_eq!(written.pod_probe_statuses[0].probe_states[0].state, ProbeState::Succeeded);
//! ```

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1alpha1::{
    ContainerProbeState, NodePodProbe, NodePodProbeStatus, PodProbeStatus, ProbeState,
};

/// How old a kept result may get before an unchanged report replaces it (upstream's `maxSyncProbeTime`).
pub const REFRESH_AFTER: Duration = Duration::from_secs(600);

/// The latest kept result of one probe of one pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeResult {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's name.
    pub pod: String,
    /// The pod's UID.
    pub uid: String,
    /// `<marker>#<probe>`.
    pub probe: String,
    /// The reported state.
    pub state: ProbeState,
    /// The reported message.
    pub message: String,
    /// When the result was kept (its `lastProbeTime`).
    pub probed_at: Timestamp,
}

/// Whether a report of `state` and `message` at `now` replaces the kept result `previous`.
#[must_use]
pub fn should_record(
    previous: Option<&ProbeResult>,
    state: &ProbeState,
    message: &str,
    now: Timestamp,
) -> bool {
    previous.is_none_or(|previous| {
        let age = Duration::try_from(now.duration_since(previous.probed_at)).unwrap_or_default();
        previous.state != *state || previous.message != message || age >= REFRESH_AFTER
    })
}

/// The status of `probe` with the results applied (see the module documentation), at `now`.
#[must_use]
pub fn status(probe: &NodePodProbe, results: &[ProbeResult], now: Timestamp) -> NodePodProbeStatus {
    let valid: BTreeSet<(&str, &str)> = probe
        .spec
        .pod_probes
        .iter()
        .flat_map(|pod| {
            pod.probes
                .iter()
                .map(move |entry| (pod.uid.as_str(), entry.name.as_str()))
        })
        .collect();
    let mut pods: Vec<PodProbeStatus> = probe
        .status
        .iter()
        .flat_map(|status| status.pod_probe_statuses.iter())
        .filter_map(|pod| {
            let probe_states: Vec<ContainerProbeState> = pod
                .probe_states
                .iter()
                .filter(|state| valid.contains(&(pod.uid.as_str(), state.name.as_str())))
                .cloned()
                .collect();
            (!probe_states.is_empty()).then(|| PodProbeStatus {
                probe_states,
                ..pod.clone()
            })
        })
        .collect();
    for result in results {
        if !valid.contains(&(result.uid.as_str(), result.probe.as_str())) {
            continue;
        }
        apply(&mut pods, result, now);
    }
    NodePodProbeStatus {
        pod_probe_statuses: pods,
    }
}

fn apply(pods: &mut Vec<PodProbeStatus>, result: &ProbeResult, now: Timestamp) {
    let index = match pods.iter().position(|pod| pod.uid == result.uid) {
        Some(index) => index,
        None => {
            pods.push(PodProbeStatus {
                name: result.pod.clone(),
                namespace: result.namespace.clone(),
                uid: result.uid.clone(),
                probe_states: Vec::new(),
            });
            pods.len() - 1
        }
    };
    let Some(pod) = pods.get_mut(index) else {
        return;
    };
    let probed = Some(Time(result.probed_at));
    match pod
        .probe_states
        .iter_mut()
        .find(|state| state.name == result.probe)
    {
        Some(state) => {
            if state.state != result.state {
                state.last_transition_time = Some(Time(now));
            }
            state.state = result.state.clone();
            state.message.clone_from(&result.message);
            state.last_probe_time = probed;
        }
        None => pod.probe_states.push(ContainerProbeState {
            name: result.probe.clone(),
            state: result.state.clone(),
            last_probe_time: probed,
            last_transition_time: Some(Time(now)),
            message: result.message.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn at(second: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + second).unwrap()
    }

    fn result(uid: &str, probe: &str, state: ProbeState, second: i64) -> ProbeResult {
        ProbeResult {
            namespace: "web".into(),
            pod: format!("pod-{uid}"),
            uid: uid.into(),
            probe: probe.into(),
            state,
            message: String::new(),
            probed_at: at(second),
        }
    }

    fn node_probe(status: serde_json::Value) -> NodePodProbe {
        let mut value = json!({
            "metadata": {"name": "node-a"},
            "spec": {"podProbes": [
                {"name": "pod-1", "namespace": "web", "uid": "1", "IP": "",
                    "probes": [{"name": "m#a", "containerName": "main", "probe": {}},
                        {"name": "m#b", "containerName": "main", "probe": {}}]}]}
        });
        value["status"] = status;
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn should_record_table() {
        let kept = result("1", "m#a", ProbeState::Succeeded, 0);
        let rows = [
            ("nothing kept", None, ProbeState::Succeeded, "", 1, true),
            (
                "same result, fresh",
                Some(&kept),
                ProbeState::Succeeded,
                "",
                599,
                false,
            ),
            (
                "same result, ten minutes old",
                Some(&kept),
                ProbeState::Succeeded,
                "",
                600,
                true,
            ),
            ("other state", Some(&kept), ProbeState::Failed, "", 1, true),
            (
                "other message",
                Some(&kept),
                ProbeState::Succeeded,
                "x",
                1,
                true,
            ),
        ];
        for (case, previous, state, message, now, expected) in rows {
            assert_eq!(
                should_record(previous, &state, message, at(now)),
                expected,
                "{case}"
            );
        }
    }

    #[test]
    fn stale_entries_go_and_transitions_are_stamped() {
        let probe = node_probe(json!({"podProbeStatuses": [
            {"name": "pod-1", "namespace": "web", "uid": "1", "probeStates": [
                {"name": "m#a", "state": "Succeeded", "lastTransitionTime": "2026-01-01T00:00:00Z"},
                {"name": "gone#x", "state": "Failed"}]},
            {"name": "pod-2", "namespace": "web", "uid": "2", "probeStates": [
                {"name": "m#a", "state": "Failed"}]}
        ]}));
        let results = [
            result("1", "m#a", ProbeState::Succeeded, 10),
            result("1", "m#b", ProbeState::Failed, 11),
            result("2", "m#a", ProbeState::Succeeded, 12),
        ];
        let written = status(&probe, &results, at(20));
        assert_eq!(
            written.pod_probe_statuses.len(),
            1,
            "pod 2 is not in the spec"
        );
        let states = &written.pod_probe_statuses[0].probe_states;
        let names: Vec<&str> = states.iter().map(|state| state.name.as_str()).collect();
        assert_eq!(names, ["m#a", "m#b"]);
        // m#a kept its state: its transition time stands; its probe time moved.
        assert_eq!(
            states[0].last_transition_time,
            Some(Time("2026-01-01T00:00:00Z".parse().unwrap()))
        );
        assert_eq!(states[0].last_probe_time, Some(Time(at(10))));
        assert_eq!(states[1].last_transition_time, Some(Time(at(20))));
        // A state change stamps the transition.
        let changed = status(
            &probe,
            &[result("1", "m#a", ProbeState::Failed, 30)],
            at(31),
        );
        let state = &changed.pod_probe_statuses[0].probe_states[0];
        assert_eq!(
            (state.state.as_str(), state.last_transition_time.clone()),
            ("Failed", Some(Time(at(31))))
        );
    }

    #[test]
    fn an_unchanged_status_is_equal() {
        let probe = node_probe(json!({}));
        let first = status(
            &probe,
            &[result("1", "m#a", ProbeState::Succeeded, 1)],
            at(2),
        );
        let mut again = probe.clone();
        again.status = Some(first.clone());
        let second = status(
            &again,
            &[result("1", "m#a", ProbeState::Succeeded, 1)],
            at(9),
        );
        assert_eq!(first, second);
    }
}
