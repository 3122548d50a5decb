//! Properties of the CloneSet planner on a simulated fleet (`support::rollout::sim`): plan, apply the actions, let
//! pods become ready after a random delay (some never), advance the clock, repeat. At every step:
//!
//! * the plan is deterministic (planning the same state twice gives the same plan);
//! * it never takes availability below `replicas - maxUnavailable` (or below what it already was);
//! * it never has more than `replicas + maxSurge` pods (or more than it already had);
//! * it never has more than `replicas - partition` pods at the update revision (or more than it had);
//!
//! and whenever every pod does become ready, the fleet reaches the target: `replicas` pods, all available,
//! `replicas - partition` at the update revision and `partition` at the current one, and nothing left to do.
//! The simulation updates by recreation (`ReCreate`); in-place updates are covered by the table tests.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use crate::support::rollout::planning::cloneset;
use crate::support::rollout::sim::{Fleet, fleet_pod, label};
use k8s_openapi::api::core::v1::Pod;
use kruise_schedule::planning::PlanRule;
use proptest::prelude::*;
use serde_json::json;

#[derive(Clone, Debug)]
struct Setup {
    replicas: i64,
    partition: i64,
    max_unavailable: i64,
    max_surge: i64,
    old_pods: usize,
    new_pods: usize,
    unready_pods: usize,
    seed: u64,
}

fn setup() -> impl Strategy<Value = Setup> {
    (
        0i64..=7,
        0i64..=3,
        0i64..=2,
        0usize..=9,
        0usize..=3,
        0usize..=2,
        any::<u64>(),
    )
        .prop_flat_map(
            |(replicas, max_unavailable, max_surge, old_pods, new_pods, unready, seed)| {
                let max_unavailable = if max_unavailable == 0 && max_surge == 0 {
                    1
                } else {
                    max_unavailable
                };
                (0..=replicas).prop_map(move |partition| Setup {
                    replicas,
                    partition,
                    max_unavailable,
                    max_surge,
                    old_pods,
                    // No more pods at the update revision than the partition allows (rollback is off).
                    new_pods: new_pods.min(usize::try_from(replicas - partition).unwrap()),
                    unready_pods: unready.min(old_pods),
                    seed,
                })
            },
        )
}

fn fleet(setup: &Setup) -> Fleet {
    let cs = cloneset(&json!({
        "replicas": setup.replicas,
        "updateStrategy": {"rollingUpdate": {
            "partition": setup.partition,
            "maxUnavailable": setup.max_unavailable,
            "maxSurge": setup.max_surge,
        }},
    }));
    let start: k8s_openapi::jiff::Timestamp = "2024-05-01T09:00:00Z".parse().unwrap();
    let mut pods: Vec<Pod> = Vec::new();
    for i in 0..setup.old_pods {
        let ready = (i >= setup.unready_pods).then_some(start);
        pods.push(fleet_pod(&format!("old{i}"), "old_rev", ready));
    }
    for i in 0..setup.new_pods {
        pods.push(fleet_pod(&format!("new{i}"), "new_rev", Some(start)));
    }
    let mut fleet = Fleet::new(cs, pods, setup.seed);
    // The initial unready pods become ready soon (or never, with the fleet's chance).
    for i in 0..setup.unready_pods {
        fleet.ready_at.insert(
            format!("old{i}"),
            Some(fleet.now + k8s_openapi::jiff::SignedDuration::from_secs(20)),
        );
    }
    fleet
}

struct Counts {
    len: i64,
    available: i64,
    updated: i64,
}

fn counts(fleet: &Fleet) -> Counts {
    let going = |pod: &Pod| {
        !label(pod, "apps.kruise.io/specified-delete").is_empty()
            || label(pod, "lifecycle.apps.kruise.io/state") == "PreparingDelete"
    };
    Counts {
        len: i64::try_from(fleet.pods.len()).unwrap(),
        available: i64::try_from(
            fleet
                .pods
                .iter()
                .filter(|p| fleet.available(p) && !going(p))
                .count(),
        )
        .unwrap(),
        updated: i64::try_from(
            fleet
                .pods
                .iter()
                .filter(|p| label(p, "controller-revision-hash") == "new_rev" && !going(p))
                .count(),
        )
        .unwrap(),
    }
}

/// Runs the fleet for up to `steps` plans, checking the step properties; returns whether it ended idle.
fn run(fleet: &mut Fleet, setup: &Setup, steps: usize) -> Result<bool, TestCaseError> {
    let floor = setup.replicas - setup.max_unavailable;
    let ceiling = setup.replicas + setup.max_surge;
    let updated_cap = setup.replicas - setup.partition;
    for step in 0..steps {
        let plan = fleet.plan();
        let again = fleet.plan();
        prop_assert_eq!(
            &plan.actions,
            &again.actions,
            "step {}: same input, same actions",
            step
        );
        prop_assert_eq!(plan.diff, again.diff);
        prop_assert_eq!(&plan.status, &again.status);
        prop_assert_eq!(plan.requeue_after, again.requeue_after);
        prop_assert!(
            plan.stopped.is_none(),
            "step {}: stopped: {:?}",
            step,
            plan.stopped
        );
        if plan.actions.is_empty() && plan.requeue_after.is_none() && fleet_settled(fleet) {
            return Ok(true);
        }
        let before = counts(fleet);
        fleet.apply(&plan);
        let after = counts(fleet);
        let what = || {
            format!(
                "step {step}: {:?} on {:?}",
                plan.actions.iter().map(|a| a.rule.id()).collect::<Vec<_>>(),
                plan.diff
            )
        };
        prop_assert!(
            after.available >= before.available.min(floor),
            "availability {} -> {} below {} ({})",
            before.available,
            after.available,
            floor,
            what()
        );
        prop_assert!(
            after.len <= before.len.max(ceiling),
            "pods {} -> {} above {} ({})",
            before.len,
            after.len,
            ceiling,
            what()
        );
        prop_assert!(
            after.updated <= before.updated.max(updated_cap),
            "updated {} -> {} above {} ({})",
            before.updated,
            after.updated,
            updated_cap,
            what()
        );
        let seconds = 1 + fleet.dice.below(15);
        fleet.tick(seconds);
    }
    Ok(false)
}

/// Every pod has a readiness time in the past or was ready from the start.
fn fleet_settled(fleet: &Fleet) -> bool {
    fleet.pods.iter().all(|p| fleet.available(p))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Pods always become ready: every step keeps the budgets, and the fleet reaches the target.
    #[test]
    fn reaches_the_target_within_budgets(setup in setup()) {
        let mut fleet = fleet(&setup);
        let idle = run(&mut fleet, &setup, 400)?;
        prop_assert!(idle, "did not settle: {:?}", fleet.pods.iter().map(|p| p.metadata.name.clone()).collect::<Vec<_>>());
        let c = counts(&fleet);
        prop_assert_eq!(c.len, setup.replicas);
        prop_assert_eq!(c.available, setup.replicas);
        prop_assert_eq!(c.updated, setup.replicas - setup.partition);
        let old = fleet.pods.iter().filter(|p| label(p, "controller-revision-hash") == "old_rev").count();
        prop_assert_eq!(i64::try_from(old).unwrap(), setup.partition);
    }

    /// Some pods never become ready: the budgets still hold at every step.
    #[test]
    fn budgets_hold_when_pods_never_become_ready(setup in setup(), never in 10u64..=60) {
        let mut fleet = fleet(&setup);
        fleet.never_ready_percent = never;
        run(&mut fleet, &setup, 120)?;
    }
}
