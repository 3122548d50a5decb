//! Scaling: `OrderedReady` (monotonic) against `Parallel`, `scaleStrategy.maxUnavailable`, condemned pods,
//! finished pods (upstream `processReplica`, `processCondemned`).

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use crate::support::asts::{
    label, not_ready, phase, pod, pods, run, set, state, summary, terminating,
};
use kruise_schedule::statefulset::{Rule, Wait};
use serde_json::json;

#[test]
fn ordered_ready_creates_one_pod_at_a_time_in_ordinal_order() {
    let set = set(json!({"replicas": 3}));
    let plan = run(&set, &[]);
    assert_eq!(summary(&plan, &[], &[]), ["create web-0@r2"]);
    assert_eq!(
        plan.waiting,
        Some(Wait::Created {
            pod: "web-0".into()
        })
    );

    // web-0 exists but is not Running and Ready: nothing is created.
    let pods = vec![phase(pod("web-0", "r2"), "Pending")];
    let plan = run(&set, &pods);
    assert!(summary(&plan, &pods, &[]).is_empty());
    assert_eq!(
        plan.waiting,
        Some(Wait::NotAvailable {
            pod: "web-0".into()
        })
    );

    // Running but not Ready: still waits.
    let pods = vec![not_ready(pod("web-0", "r2"))];
    assert_eq!(
        run(&set, &pods).waiting,
        Some(Wait::NotAvailable {
            pod: "web-0".into()
        })
    );

    // Ready: web-1 next.
    let pods = vec![pod("web-0", "r2")];
    assert_eq!(summary(&run(&set, &pods), &pods, &[]), ["create web-1@r2"]);

    // A gap is filled first (lowest missing ordinal).
    let pods = vec![pod("web-0", "r2"), pod("web-2", "r2")];
    assert_eq!(summary(&run(&set, &pods), &pods, &[]), ["create web-1@r2"]);
}

#[test]
fn ordered_ready_waits_for_lifecycle_normal_and_min_ready_seconds() {
    let set1 = set(json!({"replicas": 2}));
    // A PreparingNormal pod is not available: refreshed to Normal, and the pass waits.
    let pods = vec![state(pod("web-0", "r2"), "PreparingNormal")];
    let plan = run(&set1, &pods);
    assert_eq!(summary(&plan, &pods, &[]), ["lifecycle web-0 Normal"]);
    assert_eq!(
        plan.waiting,
        Some(Wait::NotAvailable {
            pod: "web-0".into()
        })
    );

    // minReadySeconds 7200: ready for an hour only, wait another hour.
    let set2 =
        set(json!({"replicas": 2, "updateStrategy": {"rollingUpdate": {"minReadySeconds": 7200}}}));
    let pods = vec![pod("web-0", "r2")];
    let plan = run(&set2, &pods);
    assert!(plan.actions.is_empty());
    assert_eq!(
        plan.requeue_after,
        Some(std::time::Duration::from_secs(3600))
    );
}

#[test]
fn ordered_ready_blocks_on_terminating() {
    let set = set(json!({"replicas": 2}));
    let pods = vec![terminating(pod("web-0", "r2"))];
    let plan = run(&set, &pods);
    assert!(plan.actions.is_empty());
    assert_eq!(
        plan.waiting,
        Some(Wait::Terminating {
            pod: "web-0".into()
        })
    );
}

#[test]
fn parallel_creates_all_and_ignores_unready() {
    let set = set(json!({"replicas": 4, "podManagementPolicy": "Parallel"}));
    let pods = vec![phase(pod("web-1", "r2"), "Pending")];
    let plan = run(&set, &pods);
    assert_eq!(
        summary(&plan, &pods, &[]),
        ["create web-0@r2", "create web-2@r2", "create web-3@r2"]
    );
    assert_eq!(plan.waiting, None);
}

#[test]
fn scale_max_unavailable_limits_parallel_creation() {
    // maxUnavailable rounds down with a minimum of 1: 10% of 6 = 0.6 → 0 → 1.
    let cases: &[(serde_json::Value, usize)] = &[
        (json!(2), 2),
        (json!("10%"), 1),
        (json!("50%"), 3),
        (json!(0), 1),
        (json!("100%"), 6),
    ];
    for (max, created) in cases {
        let set = set(
            json!({"replicas": 6, "podManagementPolicy": "Parallel", "scaleStrategy": {"maxUnavailable": max}}),
        );
        let plan = run(&set, &[]);
        assert_eq!(plan.actions.len(), *created, "maxUnavailable {max}");
    }
    // Unavailable existing pods use the budget too: web-0 not ready, budget 2 → one creation.
    let set = set(
        json!({"replicas": 4, "podManagementPolicy": "Parallel", "scaleStrategy": {"maxUnavailable": 2}}),
    );
    let pods = vec![not_ready(pod("web-0", "r2"))];
    assert_eq!(summary(&run(&set, &pods), &pods, &[]), ["create web-1@r2"]);
    // A bad value stops the pass with an error naming the field.
    let set = set_with_bad_max();
    let plan = run(&set, &[]);
    assert!(plan.actions.is_empty());
    assert!(
        plan.stopped
            .unwrap()
            .to_string()
            .contains("spec.scaleStrategy.maxUnavailable")
    );
}

fn set_with_bad_max() -> kruise_api::apps::v1beta1::StatefulSet {
    set(
        json!({"replicas": 2, "podManagementPolicy": "Parallel", "scaleStrategy": {"maxUnavailable": "1.5%"}}),
    )
}

#[test]
fn condemned_pods_are_deleted_from_the_highest_ordinal() {
    let set1 = set(json!({"replicas": 2}));
    let pods = pods(&[(0, "r2"), (1, "r2"), (2, "r2"), (3, "r2")]);
    let plan = run(&set1, &pods);
    assert_eq!(summary(&plan, &pods, &[]), ["delete web-3"]);
    assert_eq!(
        plan.waiting,
        Some(Wait::CondemnedDeleted {
            pod: "web-3".into()
        })
    );
    assert!(matches!(
        plan.actions[0].rule,
        Rule::Condemned { ordinal: 3, .. }
    ));

    // Parallel deletes all of them.
    let set2 = set(json!({"replicas": 2, "podManagementPolicy": "Parallel"}));
    assert_eq!(
        summary(&run(&set2, &pods), &pods, &[]),
        ["delete web-3", "delete web-2"]
    );
}

#[test]
fn ordered_ready_scale_down_stops_on_unhealthy() {
    let set = set(json!({"replicas": 1}));
    // web-2 unhealthy but it is not the first unhealthy pod (web-1 is): wait.
    let pods = vec![
        pod("web-0", "r2"),
        not_ready(pod("web-1", "r2")),
        not_ready(pod("web-2", "r2")),
    ];
    let plan = run(&set, &pods);
    assert!(plan.actions.is_empty());
    assert_eq!(
        plan.waiting,
        Some(Wait::CondemnedBlocked {
            pod: "web-2".into()
        })
    );

    // The first unhealthy pod itself may be deleted.
    let pods = vec![
        pod("web-0", "r2"),
        pod("web-1", "r2"),
        not_ready(pod("web-2", "r2")),
    ];
    assert_eq!(summary(&run(&set, &pods), &pods, &[]), ["delete web-2"]);

    // A terminating condemned pod blocks.
    let pods = vec![
        pod("web-0", "r2"),
        pod("web-1", "r2"),
        terminating(pod("web-2", "r2")),
    ];
    let plan = run(&set, &pods);
    assert!(plan.actions.is_empty());
    assert_eq!(
        plan.waiting,
        Some(Wait::Terminating {
            pod: "web-2".into()
        })
    );

    // An unavailable kept pod blocks scale-down (its successor cannot be removed first).
    let pods = vec![not_ready(pod("web-0", "r2")), pod("web-1", "r2")];
    let plan = run(&set, &pods);
    assert_eq!(
        plan.waiting,
        Some(Wait::NotAvailable {
            pod: "web-0".into()
        })
    );
}

#[test]
fn finished_pods_are_deleted_and_the_pass_stops() {
    let set = set(json!({"replicas": 3, "podManagementPolicy": "Parallel"}));
    let pods = vec![pod("web-0", "r2"), phase(pod("web-1", "r2"), "Failed")];
    let plan = run(&set, &pods);
    assert_eq!(summary(&plan, &pods, &[]), ["delete web-1"]);
    assert!(matches!(&plan.actions[0].rule, Rule::RecreateFinished { phase } if phase == "Failed"));
    assert_eq!(
        plan.waiting,
        Some(Wait::FinishedPod {
            pod: "web-1".into()
        })
    );
    // Already terminating: nothing more, still stops.
    let pods = vec![
        pod("web-0", "r2"),
        terminating(phase(pod("web-1", "r2"), "Succeeded")),
    ];
    let plan = run(&set, &pods);
    assert!(plan.actions.is_empty());
    assert_eq!(
        plan.waiting,
        Some(Wait::FinishedPod {
            pod: "web-1".into()
        })
    );
}

#[test]
fn identity_is_repaired() {
    let set = set(json!({"replicas": 1}));
    let mut p = pod("web-0", "r2");
    p.metadata
        .labels
        .as_mut()
        .unwrap()
        .remove("statefulset.kubernetes.io/pod-name");
    let pods = vec![p];
    let plan = run(&set, &pods);
    assert_eq!(summary(&plan, &pods, &[]), ["identity web-0"]);
    let kruise_schedule::statefulset::ActionKind::Specific(
        kruise_schedule::statefulset::SpecificKind::UpdateIdentity { updated, .. },
    ) = &plan.actions[0].kind
    else {
        panic!()
    };
    assert_eq!(
        updated.metadata.labels.as_ref().unwrap()["statefulset.kubernetes.io/pod-name"],
        "web-0"
    );
}

#[test]
fn status_counts() {
    let set = set(
        json!({"replicas": 3, "podManagementPolicy": "Parallel", "updateStrategy": {"rollingUpdate": {"partition": 3}}}),
    );
    let mixed = vec![
        pod("web-0", "r1"),
        not_ready(pod("web-1", "r2")),
        state(pod("web-2", "r2"), "PreparingDelete"),
        terminating(pod("web-3", "r1")),
    ];
    let plan = run(&set, &mixed);
    let status = &plan.status;
    assert_eq!(status.observed_generation, 3);
    assert_eq!(status.replicas, 4);
    assert_eq!(status.ready_replicas, 3); // web-0, web-2, web-3 (lifecycle ignored)
    assert_eq!(status.available_replicas, 2); // web-0, web-3 (PreparingDelete is not available)
    assert_eq!(status.current_replicas, 1); // web-3 is terminating
    assert_eq!(status.updated_replicas, 2);
    assert_eq!(status.updated_ready_replicas, 1);
    assert_eq!(status.updated_available_replicas, 0);
    assert_eq!(status.current_revision, "r1");
    assert_eq!(status.update_revision, "r2");
    assert_eq!(status.label_selector, "app=web");
    assert_eq!(status.collision_count, Some(0));

    // Everything updated and ready: the rollout completes.
    let pods = pods(&[(0, "r2"), (1, "r2"), (2, "r2")]);
    let status = run(&set, &pods).status;
    assert_eq!(
        (status.current_revision.as_str(), status.current_replicas),
        ("r2", 3)
    );
    let _ = label;
}
