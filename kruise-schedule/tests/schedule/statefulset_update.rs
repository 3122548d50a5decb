//! The rolling update: partition against the slot index, `maxUnavailable` rounding, ordered and priority
//! order, specified-delete, new pods' revisions, paused and OnDelete (upstream `rollingUpdateStatefulsetPods`).

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use crate::support::asts;

use crate::support::asts::{label, not_ready, pod, run, summary};
use kruise_schedule::statefulset::{Rule, Wait};
use serde_json::json;

const SPECIFIED: &str = "apps.kruise.io/specified-delete";

#[test]
fn ordered_update_from_the_highest_slot_one_at_a_time() {
    let set = asts::set(json!({"replicas": 3}));
    let pods = asts::pods(&[(0, "r1"), (1, "r1"), (2, "r1")]);
    let plan = run(&set, &pods);
    assert_eq!(summary(&plan, &pods, &[]), ["delete web-2"]);
    assert!(matches!(
        plan.actions[0].rule,
        Rule::Update {
            position: 1,
            slot: 2,
            max_unavailable: 1,
            ..
        }
    ));
    assert_eq!(
        plan.waiting,
        Some(Wait::MaxUnavailable {
            pod: "web-1".into(),
            unavailable: 1,
            max_unavailable: 1
        })
    );
    assert_eq!(
        plan.status.current_replicas, 2,
        "the deleted pod no longer counts"
    );
    // web-2 updated but not ready yet: nothing more.
    let pods = vec![
        pod("web-0", "r1"),
        pod("web-1", "r1"),
        not_ready(pod("web-2", "r2")),
    ];
    let plan = run(&set, &pods);
    assert_eq!(
        plan.waiting,
        Some(Wait::NotAvailable {
            pod: "web-2".into()
        })
    );
}

#[test]
fn partition_is_compared_with_the_slot_index() {
    // replicas 3, reserved ordinal 1: pods on 0, 2, 3 (slots 0, 2, 3). partition 2 keeps slots 0 and 1;
    // slot 2 (web-2) and slot 3 (web-3) are updated: two pods, although "replicas - partition" is 1.
    let set = asts::set(json!({
        "replicas": 3, "reserveOrdinals": [1], "podManagementPolicy": "Parallel",
        "updateStrategy": {"rollingUpdate": {"partition": 2, "maxUnavailable": 3}},
    }));
    let pods = asts::pods(&[(0, "r1"), (2, "r1"), (3, "r1")]);
    let plan = run(&set, &pods);
    // maxUpdate = replicas - partition = 1: only the highest slot.
    assert_eq!(summary(&plan, &pods, &[]), ["delete web-3"]);

    let set = set_partition(1);
    let plan = run(&set, &pods);
    // partition 1: slots 3 and 2 (maxUpdate 2); slot 0 stays.
    assert_eq!(summary(&plan, &pods, &[]), ["delete web-3", "delete web-2"]);
}

fn set_partition(partition: i32) -> kruise_api::apps::v1beta1::StatefulSet {
    asts::set(json!({
        "replicas": 3, "reserveOrdinals": [1], "podManagementPolicy": "Parallel",
        "updateStrategy": {"rollingUpdate": {"partition": partition, "maxUnavailable": 3}},
    }))
}

#[test]
fn partition_without_reserved_ordinals() {
    let cases: &[(i32, &[&str])] = &[
        (
            0,
            &[
                "delete web-3",
                "delete web-2",
                "delete web-1",
                "delete web-0",
            ],
        ),
        (2, &["delete web-3", "delete web-2"]),
        (4, &[]),
        (9, &[]),
    ];
    for (partition, want) in cases {
        let set = asts::set(json!({
            "replicas": 4, "podManagementPolicy": "Parallel",
            "updateStrategy": {"rollingUpdate": {"partition": partition, "maxUnavailable": 4}},
        }));
        let pods = asts::pods(&[(0, "r1"), (1, "r1"), (2, "r1"), (3, "r1")]);
        assert_eq!(
            summary(&run(&set, &pods), &pods, &[]),
            *want,
            "partition {partition}"
        );
    }
}

#[test]
fn max_unavailable_rounds_down_with_a_minimum_of_one() {
    let cases: &[(serde_json::Value, usize)] = &[
        (json!(1), 1),
        (json!(3), 3),
        (json!("50%"), 2), // 2.5 → 2
        (json!("10%"), 1), // 0.5 → 0 → 1
        (json!("40"), 2),  // a bare number string is a percentage: 40% of 5 = 2
        (json!(0), 1),
        (json!("100%"), 5),
    ];
    for (max, updated) in cases {
        let set = asts::set(json!({
            "replicas": 5, "podManagementPolicy": "Parallel",
            "updateStrategy": {"rollingUpdate": {"maxUnavailable": max}},
        }));
        let pods = asts::pods(&[(0, "r1"), (1, "r1"), (2, "r1"), (3, "r1"), (4, "r1")]);
        assert_eq!(
            run(&set, &pods).actions.len(),
            *updated,
            "maxUnavailable {max}"
        );
    }
    // Unavailable pods use the budget: web-1 not ready, budget 2 → web-4 only, then web-3 waits... and web-1
    // (already unavailable) may be updated.
    let set = asts::set(json!({
        "replicas": 5, "podManagementPolicy": "Parallel",
        "updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}},
    }));
    let pods = vec![
        pod("web-0", "r1"),
        not_ready(pod("web-1", "r1")),
        pod("web-2", "r1"),
        pod("web-3", "r1"),
        pod("web-4", "r1"),
    ];
    let plan = run(&set, &pods);
    assert_eq!(summary(&plan, &pods, &[]), ["delete web-4"]);
    // An invalid value is upstream's reconcile error.
    let set = asts::set(json!({"updateStrategy": {"rollingUpdate": {"maxUnavailable": "x%"}}}));
    let pods = asts::pods(&[(0, "r1"), (1, "r1"), (2, "r1")]);
    let plan = run(&set, &pods);
    assert!(plan.actions.is_empty());
    assert!(
        plan.stopped
            .unwrap()
            .to_string()
            .contains("spec.updateStrategy.rollingUpdate.maxUnavailable")
    );
}

#[test]
fn unordered_update_uses_the_priority_strategy() {
    let set = asts::set(json!({
        "replicas": 4, "podManagementPolicy": "Parallel",
        "updateStrategy": {"rollingUpdate": {
            "maxUnavailable": 2,
            "unorderedUpdate": {"priorityStrategy": {"weightPriority": [
                {"weight": 50, "matchSelector": {"matchLabels": {"tier": "canary"}}},
            ]}},
        }},
    }));
    let pods = vec![
        pod("web-0", "r1"),
        label(pod("web-1", "r1"), "tier", "canary"),
        pod("web-2", "r1"),
        label(pod("web-3", "r1"), "tier", "canary"),
    ];
    // Canaries first (highest slot first among equals), two at a time.
    assert_eq!(
        summary(&run(&set, &pods), &pods, &[]),
        ["delete web-3", "delete web-1"]
    );

    // The same set without a strategy: highest slot first.
    let plain = set_unordered(None, 2);
    assert_eq!(
        summary(&run(&plain, &pods), &pods, &[]),
        ["delete web-3", "delete web-2"]
    );

    // Partition under unorderedUpdate keeps `partition` pods old whatever their slot.
    let kept = set_unordered(Some(3), 4);
    // orderPriority: the highest number in the value first.
    let tier = |i: usize, value: &str| label(pod(&format!("web-{i}"), "r1"), "tier", value);
    let pods2 = vec![
        tier(0, "t-1"),
        tier(1, "t-5"),
        tier(2, "t-2"),
        tier(3, "t-3"),
    ];
    assert_eq!(summary(&run(&kept, &pods2), &pods2, &[]), ["delete web-1"]);
    // A pod without the key comes first (level -1).
    let pods3 = vec![
        tier(0, "t-1"),
        tier(1, "t-5"),
        pod("web-2", "r1"),
        tier(3, "t-3"),
    ];
    assert_eq!(summary(&run(&kept, &pods3), &pods3, &[]), ["delete web-2"]);
}

fn set_unordered(partition: Option<i32>, max: i32) -> kruise_api::apps::v1beta1::StatefulSet {
    let mut rolling = json!({"maxUnavailable": max, "unorderedUpdate": {}});
    if let Some(partition) = partition {
        rolling["partition"] = json!(partition);
        rolling["unorderedUpdate"] =
            json!({"priorityStrategy": {"orderPriority": [{"orderedKey": "tier"}]}});
    }
    asts::set(
        json!({"replicas": 4, "podManagementPolicy": "Parallel", "updateStrategy": {"rollingUpdate": rolling}}),
    )
}

#[test]
fn specified_delete_is_not_limited_by_partition_but_by_max_unavailable() {
    let set =
        asts::set(json!({"replicas": 3, "updateStrategy": {"rollingUpdate": {"partition": 3}}}));
    let pods = vec![
        label(pod("web-0", "r1"), SPECIFIED, "true"),
        pod("web-1", "r1"),
        pod("web-2", "r1"),
    ];
    let plan = run(&set, &pods);
    assert_eq!(summary(&plan, &pods, &[]), ["delete web-0"]);
    assert!(matches!(
        plan.actions[0].rule,
        Rule::SpecifiedDelete { slot: 0 }
    ));
    assert_eq!(plan.status.current_replicas, 2);

    // Two specified, maxUnavailable 1: the highest slot first, the other waits.
    let pods = vec![
        label(pod("web-0", "r1"), SPECIFIED, "x"),
        pod("web-1", "r1"),
        label(pod("web-2", "r1"), SPECIFIED, "true"),
    ];
    assert_eq!(summary(&run(&set, &pods), &pods, &[]), ["delete web-2"]);

    // Budget spent by an unavailable pod: an available specified pod waits, an unavailable one goes.
    let set = set_max(2);
    let pods = vec![
        pod("web-0", "r2"),
        not_ready(pod("web-1", "r2")),
        label(not_ready(pod("web-2", "r2")), SPECIFIED, "true"),
        label(pod("web-3", "r2"), SPECIFIED, "true"),
    ];
    assert_eq!(summary(&run(&set, &pods), &pods, &[]), ["delete web-2"]);
}

fn set_max(max: i32) -> kruise_api::apps::v1beta1::StatefulSet {
    asts::set(
        json!({"replicas": 4, "podManagementPolicy": "Parallel", "updateStrategy": {"rollingUpdate": {"maxUnavailable": max}}}),
    )
}

#[test]
fn new_pods_below_the_partition_get_the_current_revision() {
    // Ordered: slot positions (reserved slots not counted) below the partition are current.
    let set = asts::set(json!({
        "replicas": 4, "reserveOrdinals": [1], "podManagementPolicy": "Parallel",
        "updateStrategy": {"rollingUpdate": {"partition": 2}},
    }));
    let plan = run(&set, &[]);
    assert_eq!(
        summary(&plan, &[], &[]),
        [
            "create web-0@r1",
            "create web-2@r1",
            "create web-3@r2",
            "create web-4@r2"
        ]
    );
    // Unordered: current while fewer than `partition` other pods are not updated.
    let set = asts::set(json!({
        "replicas": 3, "podManagementPolicy": "Parallel",
        "updateStrategy": {"rollingUpdate": {"partition": 1, "unorderedUpdate": {}}},
    }));
    let pods = vec![pod("web-2", "r1")];
    assert_eq!(
        summary(&run(&set, &pods), &pods, &[]),
        ["create web-0@r2", "create web-1@r2"]
    );
    let pods = vec![pod("web-2", "r2")];
    assert_eq!(
        summary(&run(&set, &pods), &pods, &[]),
        ["create web-0@r1", "create web-1@r2"]
    );
    // Without rollingUpdate: ordinals below start + status.currentReplicas.
    let mut set = asts::set(
        json!({"replicas": 3, "podManagementPolicy": "Parallel", "updateStrategy": {"type": "RollingUpdate"}}),
    );
    set.status = Some(kruise_api::apps::v1beta1::StatefulSetStatus {
        current_replicas: 2,
        ..Default::default()
    });
    assert_eq!(
        summary(&run(&set, &[]), &[], &[]),
        ["create web-0@r1", "create web-1@r1", "create web-2@r2"]
    );
    // OnDelete: always the update revision, and no update.
    let set = set_on_delete();
    let plan = run(&set, &[pod("web-0", "r1")]);
    assert_eq!(
        summary(&plan, &[pod("web-0", "r1")], &[]),
        ["create web-1@r2"]
    );
    assert_eq!(plan.waiting, Some(Wait::OnDelete));
}

fn set_on_delete() -> kruise_api::apps::v1beta1::StatefulSet {
    asts::set(
        json!({"replicas": 2, "podManagementPolicy": "Parallel", "updateStrategy": {"type": "OnDelete"}}),
    )
}

#[test]
fn paused_stops_updates_but_not_scaling() {
    let set = asts::set(
        json!({"replicas": 2, "podManagementPolicy": "Parallel", "updateStrategy": {"rollingUpdate": {"paused": true}}}),
    );
    let pods = asts::pods(&[(0, "r1")]);
    let plan = run(&set, &pods);
    assert_eq!(summary(&plan, &pods, &[]), ["create web-1@r2"]);
    assert_eq!(plan.waiting, Some(Wait::Paused));
}

#[test]
fn new_pods_created_this_pass_are_not_updated_yet() {
    // partition 1 with a reserved slot: web-2 (position 1) is created at r2... and web-0 missing too.
    let set = asts::set(json!({
        "replicas": 2, "podManagementPolicy": "Parallel",
        "updateStrategy": {"rollingUpdate": {"partition": 0, "maxUnavailable": 2}},
    }));
    let plan = run(&set, &[]);
    assert_eq!(
        summary(&plan, &[], &[]),
        ["create web-0@r2", "create web-1@r2"]
    );
    assert_eq!(plan.status.replicas, 0, "pods to create are not counted");
}
