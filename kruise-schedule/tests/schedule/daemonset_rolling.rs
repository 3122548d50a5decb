//! The rolling update without surge (upstream `pkg/controller/daemonset/daemonset_update.go`): unavailable old pods
//! are replaced at once, available ones within maxUnavailable, counting nodes that are unavailable; paused and
//! OnDelete stop it.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support::daemonset::*;
use kruise_schedule::daemonset::{Rule, Step, UpdateHow};
use serde_json::json;

const NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];

#[test]
fn unavailable_old_pods_are_replaced_beyond_the_budget() {
    let mut pods = old_pods(&NAMES);
    pods[0] = pod("p-a", "a", OLD, Health::NotReady, 0);
    pods[1] = pod("p-b", "b", OLD, Health::NotReady, 1);
    let plan = run(&ds(json!({"maxUnavailable": 1})), &pods, &nodes(&NAMES));
    assert_eq!(plan.step, Step::Update);
    // Unavailable old pods do not count as unavailable nodes and are replaced first; one available pod more.
    assert_eq!(deleted(&plan, &pods), ["p-b", "p-a", "p-e"]);
    assert_eq!(
        plan.actions[0].rule,
        Rule::Replace {
            unavailable: true,
            position: 4,
            max_unavailable: 1,
            unavailable_nodes: 0,
            how: UpdateHow::RecreatePolicy
        }
    );
    assert_eq!(
        plan.actions[0].reason(),
        "update: node 4 in the update order, its old pod is unavailable, delete it"
    );
    assert_eq!(
        plan.actions[2].reason(),
        "update: node 1 in the update order (0 unavailable of maxUnavailable 1), delete it"
    );
}

#[test]
fn unavailable_nodes_use_the_budget() {
    let table: Vec<(&str, Vec<k8s_openapi::api::core::v1::Pod>, Vec<&str>)> = vec![
        (
            "a new pod not yet available",
            vec![
                pod("p-a", "a", OLD, Health::Available, 0),
                pod("p-b", "b", OLD, Health::Available, 0),
                pod("p-c", "c", NEW, Health::NotReady, 0),
            ],
            vec!["p-b"],
        ),
        (
            "two new pods not yet available",
            vec![
                pod("p-a", "a", OLD, Health::Available, 0),
                pod("p-b", "b", NEW, Health::NotReady, 0),
                pod("p-c", "c", NEW, Health::JustReady, 0),
            ],
            vec![],
        ),
        (
            "a node without pod (the manage step would create it; here its pod is terminating)",
            vec![
                pod("p-a", "a", OLD, Health::Available, 0),
                pod("p-b", "b", OLD, Health::Available, 0),
                edit_pod(pod("p-c", "c", OLD, Health::Available, 0), |v| {
                    v["metadata"]["deletionTimestamp"] = json!("2024-05-01T09:59:00Z");
                }),
            ],
            vec!["p-b"],
        ),
    ];
    let set = ds_with(json!({"maxUnavailable": 2}), |v| {
        v["spec"]["minReadySeconds"] = json!(30);
    });
    for (name, pods, expected) in table {
        let plan = run(&set, &pods, &nodes(&["a", "b", "c"]));
        assert_eq!(deleted(&plan, &pods), expected, "{name}");
    }
}

#[test]
fn the_update_converges_step_by_step() {
    // Three nodes, maxUnavailable 1: one old pod per pass, each new pod must become available first.
    let set = ds(json!({"maxUnavailable": 1}));
    let nodes = nodes(&["a", "b", "c"]);
    let mut pods = old_pods(&["a", "b", "c"]);
    let plan = run(&set, &pods, &nodes);
    assert_eq!(deleted(&plan, &pods), ["p-c"]);
    pods[2] = pod("q-c", "c", NEW, Health::NotReady, 30);
    assert!(
        run(&set, &pods, &nodes).actions.is_empty(),
        "c's new pod is not ready"
    );
    pods[2] = pod("q-c", "c", NEW, Health::Available, 30);
    let plan = run(&set, &pods, &nodes);
    assert_eq!(deleted(&plan, &pods), ["p-b"]);
}

#[test]
fn paused_and_on_delete_do_not_update() {
    let pods = old_pods(&NAMES);
    let plan = run(&ds(json!({"paused": true})), &pods, &nodes(&NAMES));
    assert!(plan.actions.is_empty());
    assert_eq!(plan.step, Step::Idle);
    assert!(plan.budgets.is_none());
    assert_eq!(plan.status.observed_generation, 3);
    let set = ds_with(json!({}), |v| {
        v["spec"]["updateStrategy"] = json!({"type": "OnDelete"});
    });
    let plan = run(&set, &pods, &nodes(&NAMES));
    assert!(plan.actions.is_empty());
    assert_eq!(plan.status.updated_number_scheduled, 0);
}

#[test]
fn an_unset_strategy_type_is_a_rolling_update() {
    let set = ds_with(json!({}), |v| v["spec"]["updateStrategy"] = json!({}));
    let pods = old_pods(&NAMES);
    assert_eq!(deleted(&run(&set, &pods, &nodes(&NAMES)), &pods), ["p-e"]);
}

#[test]
fn pre_delete_hook_holds_replaced_pods() {
    let set = ds_with(json!({"maxUnavailable": 2}), |v| {
        v["spec"]["lifecycle"] = json!({"preDelete": {"finalizersHandler": ["example.com/drain"]}});
    });
    let mut pods = old_pods(&NAMES);
    pods[4] = edit_pod(pods[4].clone(), |v| {
        v["metadata"]["finalizers"] = json!(["example.com/drain"]);
    });
    let plan = run(&set, &pods, &nodes(&NAMES));
    assert_eq!(held(&plan, &pods), ["p-e"]);
    assert_eq!(deleted(&plan, &pods), ["p-d"]);
}
