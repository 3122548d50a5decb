//! Properties of the Advanced DaemonSet planner on a simulated cluster: pods become ready after a random
//! delay (some never), in-place updates finish when the simulated kubelet restarts the container. The planner
//! never leaves more nodes unavailable than maxUnavailable allows, never surges on more nodes than maxSurge,
//! never updates partitioned (or unselected) nodes, is deterministic, and reaches one pod per node with every
//! non-partitioned node on the update revision whenever pods become ready.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::BTreeMap;

use crate::support::daemonset::{NEW, OLD};
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp, tz::TimeZone};
use kruise_api::apps::v1beta1::DaemonSet;
use kruise_schedule::daemonset::{
    ActionKind, KnownRevision, Options, Plan, PlanInput, Revisions, Step, plan,
};
use proptest::prelude::*;
use serde_json::{Value, json};

const TICKS: u32 = 80;

#[derive(Clone, Debug)]
struct Scenario {
    nodes: usize,
    canary: Vec<bool>,
    max_unavailable: Value,
    max_surge: Value,
    partition: Option<Value>,
    selector: bool,
    in_place: bool,
    min_ready_seconds: i32,
    /// Ticks until each successive new pod (or in-place restart) is ready; `None`: never.
    delays: Vec<Option<u32>>,
}

fn budget() -> impl Strategy<Value = Value> {
    prop_oneof![
        (0i32..4).prop_map(|n| json!(n)),
        prop::sample::select(vec!["0%", "10%", "25%", "50%", "100%"]).prop_map(|s| json!(s)),
    ]
}

fn scenario(always_ready: bool) -> impl Strategy<Value = Scenario> {
    let delay = if always_ready {
        (0u32..4).prop_map(Some).boxed()
    } else {
        prop_oneof![4 => (0u32..4).prop_map(Some), 1 => Just(None)].boxed()
    };
    (
        1usize..8,
        prop::collection::vec(any::<bool>(), 8),
        budget(),
        prop_oneof![2 => Just(json!(0)), 1 => budget()],
        prop::option::of(prop_oneof![
            (0i32..9).prop_map(|n| json!(n)),
            prop::sample::select(vec!["0%", "30%", "50%", "100%"]).prop_map(|s| json!(s)),
        ]),
        any::<bool>(),
        any::<bool>(),
        prop::sample::select(vec![0, 30]),
        prop::collection::vec(delay, 64),
    )
        .prop_map(
            |(
                nodes,
                canary,
                max_unavailable,
                max_surge,
                partition,
                selector,
                in_place,
                min_ready_seconds,
                delays,
            )| {
                Scenario {
                    nodes,
                    canary,
                    max_unavailable,
                    max_surge,
                    partition,
                    selector,
                    in_place,
                    min_ready_seconds,
                    delays,
                }
            },
        )
}

fn template(image: &str) -> Value {
    json!({"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": image}]}})
}

impl Scenario {
    fn daemonset(&self) -> DaemonSet {
        let mut rolling =
            json!({"maxUnavailable": self.max_unavailable, "maxSurge": self.max_surge});
        if let Some(partition) = &self.partition {
            rolling["partition"] = partition.clone();
        }
        if self.selector {
            rolling["selector"] = json!({"matchLabels": {"canary": "yes"}});
        }
        if self.in_place {
            rolling["rollingUpdateType"] = json!("InPlaceIfPossible");
        }
        serde_json::from_value(json!({
            "metadata": {"name": "ds", "namespace": "ns", "uid": "u", "generation": 2},
            "spec": {
                "selector": {"matchLabels": {"app": "d"}},
                "template": template("img:2"),
                "minReadySeconds": self.min_ready_seconds,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling},
            },
            "status": {"desiredNumberScheduled": self.nodes, "currentNumberScheduled": self.nodes,
                       "numberMisscheduled": 0, "numberReady": self.nodes, "updatedNumberScheduled": 0,
                       "updateRevision": OLD},
        }))
        .unwrap()
    }

    fn nodes(&self) -> Vec<Node> {
        let mut nodes: Vec<Node> = (0..self.nodes)
            .map(|i| {
                let labels = if self.canary[i] {
                    json!({"canary": "yes"})
                } else {
                    json!({})
                };
                serde_json::from_value(
                    json!({"metadata": {"name": format!("n{i}"), "labels": labels}}),
                )
                .unwrap()
            })
            .collect();
        // A node the daemon pod does not tolerate: never gets a pod.
        nodes.push(
            serde_json::from_value(json!({"metadata": {"name": "tainted"},
                "spec": {"taints": [{"key": "dedicated", "effect": "NoSchedule"}]}}))
            .unwrap(),
        );
        nodes
    }

    /// How many nodes the partition keeps old (over status.desiredNumberScheduled = nodes, round down).
    fn partition(&self) -> i64 {
        let n = i64::try_from(self.nodes).unwrap();
        match &self.partition {
            None => 0,
            Some(Value::String(p)) => {
                let percent: i64 = p.trim_end_matches('%').parse().unwrap();
                percent * n / 100
            }
            Some(v) => v.as_i64().unwrap(),
        }
    }

    fn updatable(&self, node: usize) -> bool {
        !self.selector || self.canary[node]
    }

    /// Nodes expected on the update revision at the end.
    fn expected_new(&self) -> i64 {
        let n = i64::try_from(self.nodes).unwrap();
        let eligible =
            i64::try_from((0..self.nodes).filter(|&i| self.updatable(i)).count()).unwrap();
        (n - self.partition()).clamp(0, n).min(eligible)
    }

    fn max_unavailable(&self) -> i64 {
        let n = i64::try_from(self.nodes).unwrap();
        let scale = |v: &Value| match v {
            Value::String(p) => {
                let percent: i64 = p.trim_end_matches('%').parse().unwrap();
                (percent * n + 99) / 100
            }
            v => v.as_i64().unwrap(),
        };
        let (u, s) = (scale(&self.max_unavailable), scale(&self.max_surge));
        if u == 0 && s == 0 { 1 } else { u }
    }
}

/// A simulated pod: the object, when its containers are up, and whether it carries the update image.
struct SimPod {
    pod: Pod,
    up_at: Option<u32>,
}

struct Cluster {
    scenario: Scenario,
    daemonset: DaemonSet,
    nodes: Vec<Node>,
    pods: Vec<SimPod>,
    next_delay: usize,
    next_name: usize,
    revisions: Vec<ControllerRevision>,
}

fn at(tick: u32) -> Timestamp {
    "2024-05-01T10:00:00Z".parse::<Timestamp>().unwrap()
        + SignedDuration::from_mins(i64::from(tick))
}

fn revision(hash: &str, image: &str) -> ControllerRevision {
    let template = serde_json::from_value(template(image)).unwrap();
    let data = kruise_inplace::revision::template_data_value(&template).unwrap();
    serde_json::from_value(json!({
        "metadata": {"name": format!("ds-{hash}"), "labels": {"controller-revision-hash": hash}},
        "data": data, "revision": 1,
    }))
    .unwrap()
}

impl Cluster {
    fn new(scenario: Scenario) -> Self {
        let daemonset = scenario.daemonset();
        let nodes = scenario.nodes();
        let gate = scenario.in_place;
        let pods = (0..scenario.nodes)
            .map(|i| {
                let mut pod = json!({
                    "metadata": {"name": format!("old-{i}"), "namespace": "ns",
                                 "creationTimestamp": "2024-05-01T09:00:00Z",
                                 "labels": {"app": "d", "controller-revision-hash": OLD}},
                    "spec": {"nodeName": format!("n{i}"), "containers": [{"name": "c", "image": "img:1"}]},
                    "status": {"phase": "Running",
                               "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2024-05-01T09:00:00Z"}],
                               "containerStatuses": [{"name": "c", "image": "img:1", "imageID": "sha-1", "ready": true, "restartCount": 0}]},
                });
                if gate {
                    pod["spec"]["readinessGates"] = json!([{"conditionType": "InPlaceUpdateReady"}]);
                    pod["status"]["conditions"].as_array_mut().unwrap().push(json!({"type": "InPlaceUpdateReady", "status": "True"}));
                }
                SimPod {
                    pod: serde_json::from_value(pod).unwrap(),
                    up_at: Some(0),
                }
            })
            .collect();
        Self {
            scenario,
            daemonset,
            nodes,
            pods,
            next_delay: 0,
            next_name: 0,
            revisions: vec![revision(OLD, "img:1"), revision(NEW, "img:2")],
        }
    }

    fn delay(&mut self, tick: u32) -> Option<u32> {
        let delay = self.scenario.delays[self.next_delay % self.scenario.delays.len()];
        self.next_delay += 1;
        delay.map(|d| tick + d)
    }

    /// The simulated kubelet: remove pods deleted last tick, start containers, report images and readiness.
    fn kubelet(&mut self, tick: u32) {
        self.pods
            .retain(|p| p.pod.metadata.deletion_timestamp.is_none());
        for sim in &mut self.pods {
            let up = sim.up_at.is_some_and(|t| t <= tick);
            let mut value = serde_json::to_value(&sim.pod).unwrap();
            let image = value["spec"]["containers"][0]["image"]
                .as_str()
                .unwrap()
                .to_owned();
            if up {
                let id = format!("sha-{}", image.trim_start_matches("img:"));
                value["status"]["containerStatuses"] = json!([{"name": "c", "image": image, "imageID": id, "ready": true, "restartCount": 0}]);
            }
            let gates_ok = value["spec"]["readinessGates"]
                .as_array()
                .is_none_or(|gates| {
                    gates.iter().all(|g| {
                        value["status"]["conditions"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .any(|c| c["type"] == g["conditionType"] && c["status"] == "True")
                    })
                });
            let ready = if up && gates_ok { "True" } else { "False" };
            let conditions = value["status"]["conditions"].as_array_mut().unwrap();
            let time = serde_json::to_value(Time(at(tick))).unwrap();
            match conditions.iter_mut().find(|c| c["type"] == "Ready") {
                Some(c) if c["status"] != ready => {
                    c["status"] = json!(ready);
                    c["lastTransitionTime"] = time;
                }
                Some(_) => {}
                None => conditions
                    .push(json!({"type": "Ready", "status": ready, "lastTransitionTime": time})),
            }
            sim.pod = serde_json::from_value(value).unwrap();
        }
    }

    fn plan(&self, tick: u32) -> Plan {
        let pods: Vec<Pod> = self.pods.iter().map(|p| p.pod.clone()).collect();
        let known: Vec<KnownRevision<'_>> = self
            .revisions
            .iter()
            .filter_map(KnownRevision::of)
            .collect();
        let now = at(tick).to_zoned(TimeZone::UTC);
        let options = Options::default();
        let revisions = Revisions {
            update_hash: NEW,
            known: &known,
        };
        let pods: Vec<&Pod> = pods.iter().collect();
        let nodes: Vec<&Node> = self.nodes.iter().collect();
        plan(&PlanInput::new(
            &self.daemonset,
            &pods,
            &nodes,
            revisions,
            &now,
            &options,
        ))
    }

    fn apply(&mut self, plan: &Plan, tick: u32) {
        let now = at(tick);
        let mut created = Vec::new();
        for action in &plan.actions {
            match &action.kind {
                ActionKind::CreatePod { node, pod, .. } => {
                    let mut pod = pod.as_ref().clone();
                    pod.metadata.name = Some(format!("ds-{}", self.next_name));
                    self.next_name += 1;
                    pod.metadata.creation_timestamp = Some(Time(now));
                    pod.spec.as_mut().unwrap().node_name = node.clone();
                    pod.status = Some(
                        serde_json::from_value(json!({"phase": "Running", "conditions": []}))
                            .unwrap(),
                    );
                    let up_at = self.delay(tick);
                    created.push(SimPod { pod, up_at });
                }
                ActionKind::DeletePod { pod } => {
                    self.pods[*pod].pod.metadata.deletion_timestamp = Some(Time(now));
                }
                ActionKind::RefreshInPlace { pod, outcome } => {
                    self.pods[*pod].pod = outcome.pod.clone();
                }
                ActionKind::UpdateInPlace { pod, .. } => {
                    let outcome = action
                        .kind
                        .in_place_outcome(&self.pods[*pod].pod, now, &plan.update_options)
                        .unwrap()
                        .unwrap();
                    self.pods[*pod].pod = outcome.pod;
                    self.pods[*pod].up_at = self.delay(tick);
                }
                ActionKind::Lifecycle { pod, transition } => {
                    self.pods[*pod].pod = transition.apply(&self.pods[*pod].pod);
                }
                other => panic!("unexpected action {other:?}"),
            }
        }
        self.pods.extend(created);
        let mut status = plan.status.clone();
        status.observed_generation = 2;
        self.daemonset.status = Some(status);
    }

    /// Per node: (live pods at the update revision, live old pods, has an available live pod, has a
    /// new pod that is not available).
    fn census(&self, tick: u32) -> BTreeMap<String, (usize, usize, bool, bool)> {
        let mut out: BTreeMap<String, (usize, usize, bool, bool)> = BTreeMap::new();
        for i in 0..self.scenario.nodes {
            out.insert(format!("n{i}"), (0, 0, false, false));
        }
        let min_ready = i64::from(self.scenario.min_ready_seconds);
        for sim in &self.pods {
            let pod = &sim.pod;
            if pod.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let node = pod.spec.as_ref().unwrap().node_name.clone().unwrap();
            let entry = out.entry(node).or_default();
            let new = pod.metadata.labels.as_ref().unwrap()["controller-revision-hash"] == NEW;
            let available = pod
                .status
                .as_ref()
                .unwrap()
                .conditions
                .iter()
                .flatten()
                .any(|c| {
                    c.type_ == "Ready"
                        && c.status == "True"
                        && (min_ready == 0
                            || c.last_transition_time.as_ref().unwrap().0
                                + SignedDuration::from_secs(min_ready)
                                < at(tick))
                });
            if new {
                entry.0 += 1;
                if !available {
                    entry.3 = true;
                }
            } else {
                entry.1 += 1;
            }
            entry.2 |= available;
        }
        out
    }
}

fn simulate(scenario: &Scenario, must_converge: bool) -> Result<(), TestCaseError> {
    let mut cluster = Cluster::new(scenario.clone());
    let max_unavailable = scenario.max_unavailable();
    let keep_old = scenario.partition();
    let n = i64::try_from(scenario.nodes).unwrap();
    let mut idle_streak = 0;
    for tick in 0..TICKS {
        cluster.kubelet(tick);
        let plan = cluster.plan(tick);
        prop_assert!(plan.stopped.is_none(), "stopped: {:?}", plan.stopped);
        let again = cluster.plan(tick);
        prop_assert_eq!(
            format!("{:?}", plan.actions),
            format!("{:?}", again.actions),
            "deterministic"
        );
        prop_assert_eq!(&plan.status, &again.status);
        let max_surge = plan.budgets.map(|b| b.max_surge);
        if let Some(budgets) = plan.budgets {
            prop_assert_eq!(budgets.max_unavailable, max_unavailable);
            prop_assert_eq!(budgets.partition, keep_old);
        }
        idle_streak = if plan.step == Step::Idle {
            idle_streak + 1
        } else {
            0
        };
        cluster.apply(&plan, tick);

        let census = cluster.census(tick);
        prop_assert!(!census.contains_key("tainted"));
        let unavailable = census.values().filter(|c| !c.2).count();
        prop_assert!(
            i64::try_from(unavailable).unwrap() <= max_unavailable,
            "tick {tick}: {unavailable} nodes unavailable, maxUnavailable {max_unavailable}: {census:?}"
        );
        if let Some(max_surge) = max_surge {
            let surging = census.values().filter(|c| c.1 > 0 && c.3).count();
            prop_assert!(
                i64::try_from(surging).unwrap() <= max_surge.max(0),
                "tick {tick}: {surging} nodes surging, maxSurge {max_surge}"
            );
        }
        for (node, c) in &census {
            prop_assert!(c.0 + c.1 <= 2, "{node} runs {} pods", c.0 + c.1);
        }
        let new_nodes: Vec<usize> = (0..scenario.nodes)
            .filter(|i| census[&format!("n{i}")].0 > 0)
            .collect();
        prop_assert!(
            i64::try_from(new_nodes.len()).unwrap() <= (n - keep_old).max(0),
            "tick {tick}: {} nodes updated with partition {keep_old} of {n}",
            new_nodes.len()
        );
        for i in new_nodes {
            prop_assert!(
                scenario.updatable(i),
                "n{i} is not selected but was updated"
            );
        }
    }
    if must_converge {
        let census = cluster.census(TICKS);
        let new = census.values().filter(|c| c.0 == 1 && c.1 == 0).count();
        let old = census.values().filter(|c| c.0 == 0 && c.1 == 1).count();
        prop_assert_eq!(new + old, scenario.nodes, "one pod per node: {:?}", census);
        prop_assert_eq!(
            i64::try_from(new).unwrap(),
            scenario.expected_new(),
            "{:?}",
            census
        );
        prop_assert!(idle_streak >= 3, "the plan settles");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn converges_when_pods_become_ready(scenario in scenario(true)) {
        simulate(&scenario, true)?;
    }

    #[test]
    fn stays_within_budgets_when_some_pods_never_become_ready(scenario in scenario(false)) {
        simulate(&scenario, false)?;
    }
}
