//! The status: desired, current, misscheduled, ready, available, updated, unavailable,
//! updateRevision, observedGeneration; minReadySeconds requeue.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::time::Duration;

use crate::support::daemonset::*;
use serde_json::json;

#[test]
fn status_counts() {
    let set = ds_with(json!({"paused": true}), |v| {
        v["spec"]["minReadySeconds"] = json!(30);
        v["spec"]["template"]["spec"]["nodeSelector"] = json!({"pool": "w"});
    });
    let w = json!({"pool": "w"});
    let nodes = vec![
        node_json("a", w.clone(), json!({})),
        node_json("b", w.clone(), json!({})),
        node_json("c", w.clone(), json!({})),
        node_json("d", w.clone(), json!({})),
        node_json("e", w.clone(), json!({})),
        node_json("x", json!({}), json!({})),
    ];
    let pods = vec![
        // a: old available + newer new pod: the oldest (old) one counts.
        pod("a-old", "a", OLD, Health::Available, 0),
        pod("a-new", "a", NEW, Health::NotReady, 5),
        // b: new, ready but not yet available (minReadySeconds 30).
        pod("b", "b", NEW, Health::JustReady, 0),
        // c: new, available, but its in-place update is not finished.
        edit_pod(pod("c", "c", NEW, Health::Available, 0), |v| {
            v["spec"]["readinessGates"] = json!([{"conditionType": "InPlaceUpdateReady"}]);
            v["status"]["conditions"]
                .as_array_mut()
                .unwrap()
                .push(json!({"type": "InPlaceUpdateReady", "status": "False"}));
        }),
        // d: terminating: still counts as scheduled.
        edit_pod(pod("d", "d", NEW, Health::Available, 0), |v| {
            v["metadata"]["deletionTimestamp"] = json!("2024-05-01T09:59:00Z");
        }),
        // e: nothing. x: misscheduled.
        pod("x", "x", NEW, Health::Available, 0),
    ];
    let plan = run(&set, &pods, &nodes);
    let status = serde_json::to_value(&plan.status).unwrap();
    assert_eq!(
        status,
        json!({
            "desiredNumberScheduled": 5,
            "currentNumberScheduled": 4,
            "numberMisscheduled": 1,
            "numberReady": 4,
            "numberAvailable": 2,
            "numberUnavailable": 3,
            "updatedNumberScheduled": 3,
            "observedGeneration": 2,
            "updateRevision": NEW,
        }),
        "observedGeneration waits: the manage step deletes the pod on x and creates e's"
    );
    assert_eq!(plan.requeue_after, Some(Duration::from_secs(30)));
}

#[test]
fn observed_generation_moves_when_the_pass_completes() {
    let pods = vec![pod("a", "a", NEW, Health::Available, 0)];
    let plan = run(&ds(json!({})), &pods, &nodes(&["a"]));
    assert!(plan.actions.is_empty());
    assert_eq!(plan.status.observed_generation, 3);
    assert_eq!(plan.status.updated_number_scheduled, 1);
    assert_eq!(plan.status.number_available, 1);
    assert_eq!(plan.status.number_unavailable, 0);
    assert_eq!(plan.requeue_after, None);
}

#[test]
fn template_generation_counts_as_updated() {
    let set = ds_with(json!({"paused": true}), |v| {
        v["metadata"]["annotations"] = json!({"deprecated.daemonset.template.generation": "7"});
    });
    let legacy = edit_pod(pod("a", "a", "legacy", Health::Available, 0), |v| {
        v["metadata"]["labels"]["pod-template-generation"] = json!("7");
    });
    let pods = vec![legacy, pod("b", "b", "legacy", Health::Available, 0)];
    let plan = run(&set, &pods, &nodes(&["a", "b"]));
    assert_eq!(plan.status.updated_number_scheduled, 1);
}

#[test]
fn conditions_and_collision_count_are_kept() {
    let set = ds_with(json!({}), |v| {
        v["status"]["collisionCount"] = json!(2);
        v["status"]["conditions"] = json!([{"type": "Custom", "status": "True"}]);
    });
    let plan = run(&set, &[], &[]);
    assert_eq!(plan.status.collision_count, Some(2));
    assert_eq!(plan.status.conditions.len(), 1);
}
