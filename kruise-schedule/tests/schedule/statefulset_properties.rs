//! Properties of the Advanced StatefulSet planner on a small simulated fleet: pods become Running and Ready
//! a random number of passes after creation (some never do), deletions complete at once.
//!
//! * the rolling update never makes more slots unavailable than `maxUnavailable` allows;
//! * never more than `replicas - partition` pods reach the update revision (ordered update);
//! * the plan is deterministic;
//! * `OrderedReady` creates ordinal `n` only when every lower kept ordinal is Running and Ready, one per pass;
//! * the fleet reaches the target (kept ordinals filled, partition respected, nothing condemned) when every
//!   pod becomes ready.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use crate::support::asts;

use std::collections::{BTreeMap, HashSet};

use crate::support::asts::{phase, pod, run, summary};
use k8s_openapi::api::core::v1::Pod;
use kruise_schedule::statefulset::ordinals::{OrdinalRange, ReservedOrdinals, ordinal_of};
use kruise_schedule::statefulset::{ActionKind, Plan, Rule};
use proptest::prelude::*;
use serde_json::json;

#[derive(Clone, Debug)]
struct Case {
    replicas: i32,
    reserved: Vec<i32>,
    partition: i32,
    max_unavailable: i32,
    parallel: bool,
    initial: Vec<i32>,
    seed: u64,
    never_ready_percent: u64,
}

fn cases(never: bool) -> impl Strategy<Value = Case> {
    (
        0i32..6,
        proptest::collection::vec(0i32..7, 0..3),
        0i32..7,
        1i32..4,
        any::<bool>(),
        proptest::collection::vec(0i32..9, 0..7),
        any::<u64>(),
    )
        .prop_map(
            move |(replicas, reserved, partition, max_unavailable, parallel, initial, seed)| Case {
                replicas,
                reserved,
                partition: partition.min(replicas + 1),
                max_unavailable,
                parallel,
                initial,
                seed,
                never_ready_percent: if never { 20 } else { 0 },
            },
        )
}

struct Fleet {
    pods: Vec<Pod>,
    /// Pass at which a pod becomes Running and Ready (`None`: never).
    ready_at: BTreeMap<String, Option<u32>>,
    rng: u64,
    pass: u32,
}

impl Fleet {
    fn next(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng
    }

    fn apply(&mut self, plan: &Plan, never_percent: u64) {
        let before = self.pods.clone();
        let mut deleted: HashSet<String> = HashSet::new();
        for action in &plan.actions {
            match &action.kind {
                ActionKind::CreatePod { pod, .. } => {
                    let mut new = (**pod).clone();
                    new.metadata.uid = Some(format!(
                        "uid-{}-{}",
                        new.metadata.name.as_ref().unwrap(),
                        self.pass
                    ));
                    new.status = Some(serde_json::from_value(json!({"phase": "Pending"})).unwrap());
                    let name = new.metadata.name.clone().unwrap();
                    let delay = u32::try_from(self.next() % 4).unwrap();
                    let never = self.next() % 100 < never_percent;
                    self.ready_at
                        .insert(name, (!never).then_some(self.pass + delay));
                    self.pods.push(new);
                }
                ActionKind::DeletePod { pod } => {
                    deleted.insert(before[*pod].metadata.name.clone().unwrap());
                }
                ActionKind::Lifecycle { pod, transition } => {
                    let name = before[*pod].metadata.name.clone();
                    if let Some(p) = self.pods.iter_mut().find(|p| p.metadata.name == name) {
                        transition.change.apply_to(p);
                    }
                }
                _ => {}
            }
        }
        self.pods
            .retain(|p| !deleted.contains(p.metadata.name.as_ref().unwrap()));
        self.pass += 1;
        for p in &mut self.pods {
            let name = p.metadata.name.clone().unwrap();
            if self
                .ready_at
                .get(&name)
                .copied()
                .flatten()
                .is_some_and(|at| at <= self.pass)
                && p.status.as_ref().unwrap().phase.as_deref() == Some("Pending")
            {
                let rev = p.metadata.labels.as_ref().unwrap()["controller-revision-hash"].clone();
                let mut ready = pod(&name, &rev);
                ready.metadata = p.metadata.clone();
                *p = ready;
            }
        }
    }
}

fn set_of(case: &Case) -> kruise_api::apps::v1beta1::StatefulSet {
    asts::set(json!({
        "replicas": case.replicas,
        "reserveOrdinals": case.reserved,
        "podManagementPolicy": if case.parallel { "Parallel" } else { "OrderedReady" },
        "updateStrategy": {"rollingUpdate": {"partition": case.partition, "maxUnavailable": case.max_unavailable}},
    }))
}

fn range_of(case: &Case) -> OrdinalRange {
    let reserved: Vec<_> = case
        .reserved
        .iter()
        .map(|o| k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(*o))
        .collect();
    OrdinalRange::new(
        0,
        i64::from(case.replicas),
        ReservedOrdinals::parse(&reserved).unwrap(),
    )
}

fn initial_fleet(case: &Case) -> Fleet {
    let mut seen = HashSet::new();
    let pods: Vec<Pod> = case
        .initial
        .iter()
        .filter(|o| seen.insert(**o))
        .map(|o| pod(&format!("web-{o}"), "r1"))
        .collect();
    Fleet {
        ready_at: pods
            .iter()
            .map(|p| (p.metadata.name.clone().unwrap(), Some(0)))
            .collect(),
        pods,
        rng: case.seed | 1,
        pass: 0,
    }
}

fn healthy(p: &Pod) -> bool {
    let status = p.status.as_ref().unwrap();
    status.phase.as_deref() == Some("Running")
        && status
            .conditions
            .iter()
            .flatten()
            .any(|c| c.type_ == "Ready" && c.status == "True")
        && p.metadata.deletion_timestamp.is_none()
        && p.metadata
            .labels
            .as_ref()
            .unwrap()
            .get("lifecycle.apps.kruise.io/state")
            .is_none_or(|s| s == "Normal")
}

fn by_ordinal(pods: &[Pod]) -> BTreeMap<i64, &Pod> {
    pods.iter()
        .filter_map(|p| ordinal_of(p.metadata.name.as_deref().unwrap()).map(|o| (i64::from(o), p)))
        .collect()
}

fn revision(p: &Pod) -> &str {
    &p.metadata.labels.as_ref().unwrap()["controller-revision-hash"]
}

/// Checks one plan against the pods it was made from.
fn check(case: &Case, range: &OrdinalRange, pods: &[Pod], plan: &Plan) {
    let present = by_ordinal(pods);
    let kept: Vec<i64> = range.ordinals().collect();
    // Budget: the update step only takes available pods while fewer than maxUnavailable are unavailable.
    let mut unavailable: HashSet<i64> = kept
        .iter()
        .copied()
        .filter(|o| present.get(o).is_none_or(|p| !healthy(p)))
        .collect();
    let created: HashSet<i64> = plan
        .actions
        .iter()
        .filter_map(|a| match &a.kind {
            ActionKind::CreatePod { pod, .. } => {
                ordinal_of(pod.metadata.name.as_deref().unwrap()).map(i64::from)
            }
            _ => None,
        })
        .collect();
    let mut took_available = false;
    for action in &plan.actions {
        if let Rule::Update { slot, .. } = action.rule {
            let ordinal = slot + range.start();
            assert!(
                i64::from(case.partition) <= slot,
                "updated slot {slot} below partition {}",
                case.partition
            );
            if !unavailable.contains(&ordinal) {
                took_available = true;
            }
            unavailable.insert(ordinal);
        }
    }
    if took_available {
        assert!(
            unavailable.len() <= usize::try_from(case.max_unavailable).unwrap(),
            "unavailable {unavailable:?} > maxUnavailable {} ({:?})",
            case.max_unavailable,
            summary(plan, pods, &[])
        );
    }
    // OrderedReady: one creation, and every lower kept ordinal is Running and Ready.
    if !case.parallel {
        assert!(created.len() <= 1);
        for o in &created {
            for lower in kept.iter().filter(|k| *k < o) {
                assert!(
                    present.get(lower).is_some_and(|p| healthy(p)),
                    "created {o} before {lower} is ready"
                );
            }
        }
    }
}

fn run_case(case: &Case, passes: u32) -> Fleet {
    let set = set_of(case);
    let range = range_of(case);
    let mut fleet = initial_fleet(case);
    let max_updated = usize::try_from((case.replicas - case.partition).max(0)).unwrap();
    for _ in 0..passes {
        let plan = run(&set, &fleet.pods);
        check(case, &range, &fleet.pods, &plan);
        // Deterministic.
        let again = run(&set, &fleet.pods);
        assert_eq!(
            summary(&plan, &fleet.pods, &[]),
            summary(&again, &fleet.pods, &[])
        );
        assert_eq!(plan.status, again.status);
        fleet.apply(&plan, case.never_ready_percent);
        let updated = by_ordinal(&fleet.pods)
            .iter()
            .filter(|(o, p)| range.contains(**o) && revision(p) == "r2")
            .count();
        assert!(
            updated <= max_updated,
            "{updated} pods updated, at most {max_updated}"
        );
    }
    fleet
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn budgets_partition_order_and_determinism_hold(case in cases(true)) {
        run_case(&case, 30);
    }

    #[test]
    fn the_fleet_reaches_the_target(case in cases(false)) {
        let fleet = run_case(&case, 60);
        let range = range_of(&case);
        let present = by_ordinal(&fleet.pods);
        let kept: Vec<i64> = range.ordinals().collect();
        prop_assert_eq!(present.keys().copied().collect::<Vec<_>>(), kept.clone(), "only kept ordinals remain");
        for (position, ordinal) in kept.iter().enumerate() {
            let p = present[ordinal];
            prop_assert!(healthy(p));
            let slot = ordinal - range.start();
            let want = if slot >= i64::from(case.partition) && i64::try_from(position).unwrap() >= i64::from(case.partition) { "r2" } else { "r1" };
            // Pods kept from before keep r1 below the partition; new pods below it are created at r1 too.
            if slot >= i64::from(case.partition) && i64::try_from(position).unwrap() >= i64::from(case.partition) {
                prop_assert_eq!(revision(p), want, "ordinal {}", ordinal);
            } else if slot < i64::from(case.partition) {
                prop_assert_eq!(revision(p), "r1", "ordinal {} below the partition", ordinal);
            }
        }
        let set = set_of(&case);
        let plan = run(&set, &fleet.pods);
        prop_assert!(plan.actions.is_empty(), "{:?}", summary(&plan, &fleet.pods, &[]));
    }
}

#[test]
fn a_never_ready_pod_blocks_ordered_ready() {
    let set = asts::set(json!({"replicas": 3}));
    let pods = vec![pod("web-0", "r2"), phase(pod("web-1", "r2"), "Pending")];
    let plan = run(&set, &pods);
    assert!(plan.actions.is_empty());
}
