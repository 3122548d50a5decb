//! The CloneSet planner's bounds (kruise-rs): a plan creates at most `Options::max_creations_per_plan`
//! pods whatever `replicas` says, its size is bounded by the pods that exist plus that cap, budgets that
//! scale to anything an `i64` holds never overflow, and invalid spec values are reported, each read in a
//! safe way (negative `replicas` and an invalid partition hold the plan).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::{CloneSetCondition, CloneSetConditionType, INVALID_SPEC_REASON};
use kruise_inplace::calculate::RevisionRef;
use kruise_schedule::cloneset::{
    ActionKind, DEFAULT_MAX_CREATIONS_PER_PLAN, Options, Plan, PlanInput, Reading, Revisions,
    SeededIds, Step, plan,
};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::support::rollout::planning::{cloneset, now, plan_of, plan_with};
use crate::support::rollout::pods;

fn creations(plan: &Plan) -> Vec<u32> {
    plan.actions
        .iter()
        .filter_map(|a| match &a.kind {
            ActionKind::CreatePod { batch, .. } => Some(*batch),
            _ => None,
        })
        .collect()
}

fn capped(cap: usize) -> Options {
    let mut options = Options::default();
    options.max_creations_per_plan = cap;
    options
}

fn invalid_condition(plan: &Plan) -> Option<&CloneSetCondition> {
    plan.status
        .conditions
        .iter()
        .find(|c| c.type_ == CloneSetConditionType::InvalidSpec)
}

#[test]
fn replicas_i32_max_plans_at_most_the_default_cap() {
    let cs = cloneset(&json!({"replicas": i32::MAX}));
    let plan = plan_of(&cs, &pods("nNr- nNr-"));
    assert_eq!(plan.diff.scale_up_num, i64::from(i32::MAX) - 2);
    let batches = creations(&plan);
    assert_eq!(batches.len(), DEFAULT_MAX_CREATIONS_PER_PLAN);
    assert_eq!(plan.actions.len(), DEFAULT_MAX_CREATIONS_PER_PLAN);
    // The default is ten whole slow-start batches: 1, 2, 4, ..., 512.
    assert_eq!(batches.last(), Some(&9));
    assert!(plan.invalid.is_empty(), "{:?}", plan.invalid);
}

#[test]
fn a_huge_scale_up_creates_only_the_cap() {
    // Without the cap this plan builds 100,000 pods.
    let cs = cloneset(&json!({"replicas": 100_000}));
    let plan = plan_with(&cs, &[], &capped(10));
    assert_eq!(plan.step, Step::Scale);
    assert_eq!(plan.diff.scale_up_num, 100_000);
    assert_eq!(
        plan.diff.scale_up_limit, 100_000,
        "the diff stays upstream's"
    );
    assert_eq!(creations(&plan), [0, 1, 1, 2, 2, 2, 2, 3, 3, 3]);
}

#[test]
fn the_cap_keeps_current_revision_pods_first() {
    // replicas 8, partition 6, no pods: 6 at the current revision and 2 at the update revision are wanted;
    // a cap of 4 creates 4 at the current revision, and the next plan goes on from there.
    let cs =
        cloneset(&json!({"replicas": 8, "updateStrategy": {"rollingUpdate": {"partition": 6}}}));
    let data = kruise_inplace::revision::template_data_value(&cs.spec.template).unwrap();
    let known = [RevisionRef {
        name: "old_rev",
        data: Some(&data),
        annotations: None,
    }];
    let revisions = Revisions {
        current: "old_rev",
        update: "new_rev",
        known: &known,
    };
    let now = now();
    let ids = SeededIds::new(1);
    let plan_capped = |cap: usize| {
        let options = capped(cap);
        plan(&PlanInput::new(&cs, &[], revisions, &now, &options, &ids))
    };
    let first = plan_capped(4);
    let revisions_created: Vec<String> = first
        .actions
        .iter()
        .filter_map(|a| match &a.kind {
            ActionKind::CreatePod { pod, .. } => {
                Some(pod.metadata.labels.as_ref()?["controller-revision-hash"].clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(revisions_created, ["old_rev"; 4]);
    assert_eq!(plan_capped(0).actions.len(), 1, "0 reads as 1");
}

#[test]
fn budgets_beyond_i64_saturate_instead_of_overflowing() {
    let huge = "9223372036854775807%";
    let tiny = "-9223372036854775807%";
    // scaleStrategy.maxUnavailable of minus a huge percentage of 200 replicas, one unavailable pod.
    let cs = cloneset(&json!({"replicas": 200, "scaleStrategy": {"maxUnavailable": tiny}}));
    let plan = plan_of(&cs, &pods("nN--"));
    assert_eq!(plan.diff.scale_up_limit, 0);
    assert!(plan.actions.is_empty());
    // maxUnavailable of a huge percentage of 200 replicas, 202 pods: scale down, deleteReadyLimit saturates.
    let spec =
        json!({"replicas": 200, "updateStrategy": {"rollingUpdate": {"maxUnavailable": huge}}});
    let many: Vec<Pod> = pods(&vec!["oNr-"; 202].join(" "));
    let plan = plan_of(&cloneset(&spec), &many);
    assert_eq!(plan.diff.scale_down_num, 2);
    assert_eq!(plan.diff.delete_ready_limit, i64::MAX);
    // The same while updating: updateMaxUnavailable saturates, every pod may update.
    let plan = plan_of(&cloneset(&spec), &many[..200]);
    assert_eq!(plan.diff.update_max_unavailable, i64::MAX);
    assert_eq!(plan.actions.len(), 200);
    // maxSurge huge and maxUnavailable minus huge: the surge arithmetic saturates too.
    let spec = json!({"replicas": 200, "scaleStrategy": {"podsToDelete": ["p0"]},
                      "updateStrategy": {"rollingUpdate": {"maxUnavailable": tiny, "maxSurge": huge}}});
    let plan = plan_of(&cloneset(&spec), &many[..200]);
    assert_eq!(plan.diff.use_surge, 200);
    assert_eq!(creations(&plan).len(), 200);
}

#[test]
fn negative_replicas_hold_the_plan_and_are_reported() {
    let cs = cloneset(&json!({"replicas": -1}));
    let pods = pods("nNr- nNr- nNr-");
    let plan = plan_of(&cs, &pods);
    // Upstream's arithmetic would delete every pod.
    assert!(plan.diff.scale_down_num > 0);
    assert_eq!(plan.step, Step::Idle);
    assert!(plan.actions.is_empty());
    assert_eq!(plan.invalid.len(), 1);
    assert_eq!(plan.invalid[0].field, "spec.replicas");
    assert_eq!(plan.invalid[0].value, "-1");
    assert_eq!(plan.invalid[0].reading, Reading::Hold);
    let condition = invalid_condition(&plan).expect("InvalidSpec condition");
    assert_eq!(condition.status, "True");
    assert_eq!(condition.reason, INVALID_SPEC_REASON);
    assert_eq!(
        condition.message,
        "spec.replicas: invalid value \"-1\": must not be negative; \
         the CloneSet is neither scaled nor updated until it is fixed"
    );
    assert_eq!(plan.status.replicas, 3, "the status is still counted");
}

#[test]
fn an_invalid_partition_holds_the_update() {
    // Upstream reads a partition that does not parse as 0 and would update every pod.
    for partition in [json!("abc%"), json!(-1), json!("-50%")] {
        let spec =
            json!({"replicas": 3, "updateStrategy": {"rollingUpdate": {"partition": partition}}});
        let plan = plan_of(&cloneset(&spec), &pods("oNr- oNr- oNr-"));
        assert!(plan.actions.is_empty(), "{partition}: {:?}", plan.actions);
        assert_eq!(plan.invalid.len(), 1, "{partition}");
        assert_eq!(
            plan.invalid[0].field,
            "spec.updateStrategy.rollingUpdate.partition"
        );
        assert!(invalid_condition(&plan).is_some());
    }
}

#[test]
fn invalid_budgets_are_reported_and_read_safely() {
    let cases: &[(Value, &str, &str, Reading)] = &[
        (
            json!({"updateStrategy": {"rollingUpdate": {"maxUnavailable": "abc%"}}}),
            "spec.updateStrategy.rollingUpdate.maxUnavailable",
            "abc%",
            Reading::Zero,
        ),
        (
            json!({"updateStrategy": {"rollingUpdate": {"maxUnavailable": "-5"}}}),
            "spec.updateStrategy.rollingUpdate.maxUnavailable",
            "-5",
            Reading::AsWritten,
        ),
        (
            json!({"updateStrategy": {"rollingUpdate": {"maxSurge": -2}}}),
            "spec.updateStrategy.rollingUpdate.maxSurge",
            "-2",
            Reading::AsWritten,
        ),
        (
            json!({"scaleStrategy": {"maxUnavailable": "x"}}),
            "spec.scaleStrategy.maxUnavailable",
            "x",
            Reading::Zero,
        ),
        (
            json!({"scaleStrategy": {"maxUnavailable": -1}}),
            "spec.scaleStrategy.maxUnavailable",
            "-1",
            Reading::AsWritten,
        ),
        (
            json!({"minReadySeconds": -3}),
            "spec.minReadySeconds",
            "-3",
            Reading::Zero,
        ),
    ];
    for (spec, field, value, reading) in cases {
        let plan = plan_of(&cloneset(spec), &pods("oNr- oNr- oNr-"));
        assert_eq!(plan.invalid.len(), 1, "{spec}: {:?}", plan.invalid);
        let invalid = &plan.invalid[0];
        assert_eq!(
            (invalid.field, invalid.value.as_str(), invalid.reading),
            (*field, *value, *reading),
            "{spec}"
        );
        let condition = invalid_condition(&plan).expect("InvalidSpec condition");
        assert!(condition.message.contains(field), "{}", condition.message);
    }
    // A budget read as 0 allows no update: the pods at the old revision stay.
    let spec = json!({"updateStrategy": {"rollingUpdate": {"maxUnavailable": "abc%"}}});
    assert!(
        plan_of(&cloneset(&spec), &pods("oNr- oNr- oNr-"))
            .actions
            .is_empty()
    );
    // Values upstream admits are not reported.
    let spec = json!({"updateStrategy": {"rollingUpdate": {"maxUnavailable": "150%", "partition": "150%"}}});
    assert!(plan_of(&cloneset(&spec), &[]).invalid.is_empty());
}

#[test]
fn the_condition_stays_put_and_goes_when_fixed() {
    let mut cs = cloneset(&json!({"replicas": -1}));
    let first = plan_of(&cs, &[]);
    cs.status = Some(first.status.clone());
    let again = plan_of(&cs, &[]);
    assert_eq!(
        again.status, first.status,
        "an unchanged spec writes nothing new"
    );
    cs.spec.replicas = Some(0);
    let fixed = plan_of(&cs, &[]);
    assert!(fixed.invalid.is_empty());
    assert!(invalid_condition(&fixed).is_none(), "cleared");
}

fn budget() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-5i32..50).prop_map(|n| json!(n)),
        Just(json!(i32::MAX)),
        Just(json!(i32::MIN)),
        (-200i64..300).prop_map(|n| json!(format!("{n}%"))),
        Just(json!("9223372036854775807%")),
        Just(json!("-9223372036854775808%")),
        Just(json!("abc%")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Whatever `replicas` and the budgets say, a plan creates at most the cap and acts on at most the pods
    /// that exist plus the cap; it never panics.
    #[test]
    fn a_plan_is_bounded_by_the_pods_and_the_cap(
        replicas in prop_oneof![0i32..20, Just(i32::MAX), (i32::MAX - 1000)..=i32::MAX, -3i32..0],
        existing in prop::collection::vec(prop::sample::select(vec!["oNr-", "nNr-", "oN--", "nNrd", "oDr-"]), 0..12),
        cap in 1usize..40,
        max_unavailable in budget(),
        max_surge in budget(),
        scale_max_unavailable in budget(),
        partition in prop_oneof![(0i32..30).prop_map(|n| json!(n)), Just(json!("50%")), Just(json!(i32::MAX))],
    ) {
        let cs = cloneset(&json!({
            "replicas": replicas,
            "scaleStrategy": {"maxUnavailable": scale_max_unavailable},
            "updateStrategy": {"rollingUpdate": {
                "maxUnavailable": max_unavailable, "maxSurge": max_surge, "partition": partition}},
        }));
        let pods = pods(&existing.join(" "));
        let plan = plan_with(&cs, &pods, &capped(cap));
        prop_assert!(creations(&plan).len() <= cap);
        // Each pod is acted on at most twice (a lifecycle change and its update), each creation once.
        prop_assert!(plan.actions.len() <= 2 * pods.len() + cap, "{} actions", plan.actions.len());
    }
}
