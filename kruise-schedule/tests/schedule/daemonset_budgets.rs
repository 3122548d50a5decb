//! maxUnavailable / maxSurge (safe scaler, round up over the nodes that should run the pod; 1 when both are 0)
//! and partition (safe scaler, round down over status.desiredNumberScheduled).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support::daemonset::*;
use kruise_schedule::daemonset::Budgets;
use serde_json::{Value, json};

fn budgets(rolling: Value, desired_nodes: usize, status_desired: i32) -> Budgets {
    let names: Vec<String> = (0..desired_nodes).map(|i| format!("n{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let pods = old_pods(&refs);
    let set = with_status_desired(ds(rolling), status_desired);
    let plan = run(&set, &pods, &nodes(&refs));
    assert!(plan.stopped.is_none(), "{:?}", plan.stopped);
    plan.budgets.unwrap()
}

#[test]
fn rounding_table() {
    // (rolling update, nodes, status.desiredNumberScheduled, maxUnavailable, maxSurge, partition)
    let cases: Vec<(Value, usize, i32, i64, i64, i64)> = vec![
        (json!({"maxUnavailable": 1, "maxSurge": 0}), 10, 10, 1, 0, 0),
        (
            json!({"maxUnavailable": "25%", "maxSurge": 0}),
            10,
            10,
            3,
            0,
            0,
        ),
        (
            json!({"maxUnavailable": "10%", "maxSurge": 0}),
            3,
            3,
            1,
            0,
            0,
        ),
        (
            json!({"maxUnavailable": "1%", "maxSurge": 0}),
            1,
            1,
            1,
            0,
            0,
        ),
        (
            json!({"maxUnavailable": 0, "maxSurge": "30%"}),
            10,
            10,
            0,
            3,
            0,
        ),
        (
            json!({"maxUnavailable": 0, "maxSurge": "1%"}),
            7,
            7,
            0,
            1,
            0,
        ),
        (json!({"maxUnavailable": 0, "maxSurge": 0}), 4, 4, 1, 0, 0),
        (
            json!({"maxUnavailable": "0%", "maxSurge": "0%"}),
            4,
            4,
            1,
            0,
            0,
        ),
        (json!({}), 4, 4, 1, 0, 0),
        (json!({"maxUnavailable": 2, "maxSurge": 1}), 4, 4, 2, 1, 0),
        (json!({"maxUnavailable": 50}), 4, 4, 50, 0, 0),
        (json!({"partition": 3}), 5, 5, 1, 0, 3),
        (json!({"partition": "50%"}), 5, 5, 1, 0, 2),
        (json!({"partition": "99%"}), 5, 5, 1, 0, 4),
        (json!({"partition": "100%"}), 5, 5, 1, 0, 5),
        (json!({"partition": "50%"}), 5, 3, 1, 0, 1),
        (json!({"partition": "50%"}), 5, 0, 1, 0, 0),
    ];
    for (rolling, nodes, status_desired, max_unavailable, max_surge, partition) in cases {
        let got = budgets(rolling.clone(), nodes, status_desired);
        assert_eq!(
            (got.max_unavailable, got.max_surge, got.partition),
            (max_unavailable, max_surge, partition),
            "{rolling} over {nodes} nodes (status {status_desired})"
        );
        assert_eq!(got.desired, i64::try_from(nodes).unwrap());
        assert_eq!(got.burst_replicas, 250);
    }
}

#[test]
fn both_zero_means_one_only_with_desired_nodes() {
    let set = ds(json!({"maxUnavailable": 0, "maxSurge": 0}));
    let plan = run(&set, &[], &[]);
    assert_eq!(plan.budgets.unwrap().max_unavailable, 0);
}

#[test]
fn invalid_values_stop_the_update_with_the_field() {
    let cases = [
        (
            json!({"maxUnavailable": "5"}),
            "spec.updateStrategy.rollingUpdate.maxUnavailable: invalid value \"5\": string is not a percentage",
        ),
        (
            json!({"maxSurge": "1.5%"}),
            "spec.updateStrategy.rollingUpdate.maxSurge: invalid value \"1.5%\": not an integer percentage",
        ),
        (
            json!({"partition": "x%"}),
            "spec.updateStrategy.rollingUpdate.partition: invalid value \"x%\": not an integer percentage",
        ),
    ];
    for (rolling, message) in cases {
        let set = ds(rolling);
        let pods = old_pods(&["a"]);
        let plan = run(&set, &pods, &nodes(&["a"]));
        let error = plan.stopped.expect("an error");
        assert_eq!(error.to_string(), format!("DaemonSet ns/ds: {message}"));
        assert!(plan.actions.is_empty());
        assert_eq!(
            plan.status.observed_generation, 2,
            "no status progress on an error"
        );
    }
}

#[test]
fn invalid_selector_stops_the_update() {
    let set = ds(json!({"selector": {"matchExpressions": [{"key": "k", "operator": "In"}]}}));
    let pods = old_pods(&["a"]);
    let plan = run(&set, &pods, &nodes(&["a"]));
    assert!(
        plan.stopped
            .unwrap()
            .to_string()
            .starts_with("DaemonSet ns/ds: spec.updateStrategy.rollingUpdate.selector: ")
    );
}

#[test]
fn budgets_limit_replacements() {
    // maxUnavailable 25% of 10 nodes rounds up to 3: three old pods go at once.
    let names: Vec<String> = (0..10).map(|i| format!("n{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let pods = old_pods(&refs);
    let plan = run(&ds(json!({"maxUnavailable": "25%"})), &pods, &nodes(&refs));
    assert_eq!(deleted(&plan, &pods), ["p-n9", "p-n8", "p-n7"]);
    // Both 0: one at a time.
    let plan = run(
        &ds(json!({"maxUnavailable": 0, "maxSurge": 0})),
        &pods,
        &nodes(&refs),
    );
    assert_eq!(deleted(&plan, &pods), ["p-n9"]);
}
