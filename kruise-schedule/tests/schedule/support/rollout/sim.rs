//! A small simulated fleet for the CloneSet planner's properties: it applies a plan's actions to the pods the
//! way the API server and a kubelet would (creations, deletions, label and lifecycle writes), lets pods
//! become ready after a per-pod delay (or never), and advances the clock.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp, Zoned, tz::TimeZone};
use kruise_api::apps::v1beta1::CloneSet;
use kruise_inplace::calculate::RevisionRef;
use kruise_schedule::cloneset::{
    ActionKind, Options, Plan, PlanInput, Revisions, SeededIds, SpecificKind, plan,
};
use serde_json::Value;

/// The simulation's dice: the libraries' one deterministic stream.
pub type Dice = kruise_schedule::split_mix::SplitMix64;

/// The simulated fleet.
pub struct Fleet {
    pub cloneset: CloneSet,
    pub pods: Vec<Pod>,
    /// When each pod (by name) becomes ready; `None`: never.
    pub ready_at: BTreeMap<String, Option<Timestamp>>,
    pub now: Timestamp,
    pub options: Options,
    /// The current revision's data (`old_rev` runs the template with image `nginx:0`).
    pub old_data: Value,
    /// Percent chance that a new pod never becomes ready.
    pub never_ready_percent: u64,
    /// Largest readiness delay of a new pod, in seconds.
    pub max_delay: u64,
    pub dice: Dice,
    ids: SeededIds,
    created: u64,
}

/// A pod named `name` at `revision`, running; ready since `ready_since` or not ready.
pub fn fleet_pod(name: &str, revision: &str, ready_since: Option<Timestamp>) -> Pod {
    let mut pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "namespace": "default", "labels": {
            "app": "cs", "controller-revision-hash": revision, "pod-template-hash": revision,
            "apps.kruise.io/cloneset-instance-id": name}},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]},
        "status": {"phase": "Running"},
    }))
    .unwrap();
    set_ready(&mut pod, ready_since);
    pod
}

fn set_ready(pod: &mut Pod, since: Option<Timestamp>) {
    let status = pod.status.get_or_insert_with(PodStatus::default);
    status.phase = Some("Running".into());
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    conditions.retain(|c| c.type_ != "Ready");
    conditions.push(PodCondition {
        type_: "Ready".into(),
        status: if since.is_some() { "True" } else { "False" }.into(),
        last_transition_time: since.map(Time),
        ..Default::default()
    });
}

impl Fleet {
    pub fn new(cloneset: CloneSet, pods: Vec<Pod>, seed: u64) -> Self {
        let mut old = cloneset.spec.template.clone();
        old.spec.as_mut().unwrap().containers[0].image = Some("nginx:0".into());
        let old_data = kruise_inplace::revision::template_data_value(&old).unwrap();
        Self {
            cloneset,
            pods,
            ready_at: BTreeMap::new(),
            now: "2024-05-01T10:00:00Z".parse().unwrap(),
            options: Options::default(),
            old_data,
            never_ready_percent: 0,
            max_delay: 30,
            dice: Dice::new(seed),
            ids: SeededIds::new(seed),
            created: 0,
        }
    }

    pub fn zoned(&self) -> Zoned {
        self.now.to_zoned(TimeZone::UTC)
    }

    /// Plans the next step (revisions `old_rev` → `new_rev`).
    pub fn plan(&self) -> Plan {
        let known = [RevisionRef {
            name: "old_rev",
            data: Some(&self.old_data),
            annotations: None,
        }];
        let revisions = Revisions {
            current: "old_rev",
            update: "new_rev",
            known: &known,
        };
        let now = self.zoned();
        // The id stream is part of the input: clone it so planning twice gives the same ids.
        let ids = self.ids.clone();
        let input = PlanInput::new(
            &self.cloneset,
            &self.pods,
            revisions,
            &now,
            &self.options,
            &ids,
        );
        plan(&input)
    }

    /// Applies `plan` as a controller and the API server would, then keeps the id stream in step.
    pub fn apply(&mut self, plan: &Plan) {
        let mut removed: Vec<usize> = Vec::new();
        let mut added: Vec<Pod> = Vec::new();
        for action in &plan.actions {
            match &action.kind {
                ActionKind::CreatePod { pod, .. } => {
                    let mut pod = (**pod).clone();
                    pod.spec.as_mut().unwrap().node_name = Some("node-1".into());
                    set_ready(&mut pod, None);
                    let name = pod.metadata.name.clone().unwrap();
                    let when = if self.dice.below(100) < self.never_ready_percent {
                        None
                    } else {
                        let delay = self.dice.below(self.max_delay + 1);
                        Some(self.now + SignedDuration::from_secs(i64::try_from(delay).unwrap()))
                    };
                    self.ready_at.insert(name, when);
                    added.push(pod);
                    self.created += 1;
                }
                ActionKind::DeletePod { pod } => removed.push(*pod),
                ActionKind::Lifecycle { pod, transition } => {
                    transition.change.apply_to(&mut self.pods[*pod]);
                }
                kind @ ActionKind::Specific(
                    SpecificKind::MarkSpecifiedDelete { pod }
                    | SpecificKind::FixPodTemplateHash { pod, .. },
                ) => {
                    kind.metadata_change()
                        .unwrap()
                        .apply_to(&mut self.pods[*pod]);
                }
                ActionKind::RefreshInPlace { pod, outcome } => {
                    self.pods[*pod] = outcome.pod.clone();
                }
                ActionKind::CreateClaim { .. }
                | ActionKind::Specific(SpecificKind::DeleteClaim { .. }) => {}
                other => panic!("the simulation does not update in place: {other:?}"),
            }
        }
        // Re-derive the id stream: the planner drew ids from a clone; draw as many here (ids in use are
        // skipped by the planner, so drawing the same count keeps later plans fresh enough).
        for _ in 0..plan
            .actions
            .iter()
            .filter(|a| a.kind.name() == "createPod")
            .count()
        {
            use kruise_schedule::cloneset::InstanceIds;
            let _ = self.ids.next_id();
        }
        removed.sort_unstable();
        for index in removed.into_iter().rev() {
            self.pods.remove(index);
        }
        self.pods.extend(added);
    }

    /// Advances the clock by `seconds` and marks pods whose time has come ready.
    pub fn tick(&mut self, seconds: u64) {
        self.now += SignedDuration::from_secs(i64::try_from(seconds).unwrap());
        for pod in &mut self.pods {
            let name = pod.metadata.name.clone().unwrap();
            if let Some(Some(at)) = self.ready_at.get(&name).copied()
                && at <= self.now
            {
                let ready = pod
                    .status
                    .as_ref()
                    .and_then(|s| s.conditions.as_ref())
                    .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
                if !ready {
                    set_ready(pod, Some(at));
                }
            }
        }
    }

    /// Pods that are ready and in lifecycle state Normal (or none).
    pub fn available(&self, pod: &Pod) -> bool {
        let state = label(pod, "lifecycle.apps.kruise.io/state");
        let ready = pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"));
        ready && (state.is_empty() || state == "Normal")
    }
}

pub fn label<'p>(pod: &'p Pod, key: &str) -> &'p str {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map_or("", String::as_str)
}
