//! Node choice of the rolling update (upstream `filterDaemonPodsNodeToUpdate`): classification into updated,
//! updating, selected and rest, the rollingUpdate selector, and the partition cut.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support::daemonset::*;
use k8s_openapi::api::core::v1::{Node, Pod};
use kruise_schedule::daemonset::{NodeClass, Plan};
use serde_json::{Value, json};

fn order(plan: &Plan) -> Vec<(&str, NodeClass)> {
    plan.update_order
        .iter()
        .map(|(name, class)| (name.as_str(), *class))
        .collect()
}

fn labelled(names: &[(&str, Value)]) -> Vec<Node> {
    names
        .iter()
        .map(|(n, labels)| node_json(n, labels.clone(), json!({})))
        .collect()
}

fn mixed_pods() -> Vec<Pod> {
    vec![
        pod("new-b", "b", NEW, Health::Available, 0),
        edit_pod(pod("pd-d", "d", OLD, Health::Available, 0), |v| {
            v["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] = json!("PreparingDelete");
        }),
        pod("old-a", "a", OLD, Health::Available, 0),
        pod("old-c", "c", OLD, Health::Available, 0),
        pod("old-e", "e", OLD, Health::Available, 0),
        pod("old-f", "f", OLD, Health::Available, 0),
        pod("two-g1", "g", OLD, Health::Available, 0),
        pod("two-g2", "g", OLD, Health::Available, 1),
    ]
}

#[test]
fn classification_and_order_without_selector() {
    let pods = vec![
        pod("new-b", "b", NEW, Health::Available, 0),
        pod("old-a", "a", OLD, Health::Available, 0),
        pod("old-c", "c", OLD, Health::Available, 0),
        pod("old-e", "e", OLD, Health::Available, 0),
    ];
    let mut all = nodes(&["a", "b", "c", "d", "e"]);
    all.push(node_json(
        "x",
        json!({}),
        json!({"taints": [{"key": "t", "effect": "NoSchedule"}]}),
    ));
    let set = ds(json!({}));
    let plan = run(&set, &pods, &all);
    // d has no pod: the manage step creates it first and the rolling update waits.
    assert_eq!(created(&plan), ["d"]);
    assert!(plan.update_order.is_empty());

    // d's pod is PreparingDelete and held by the preDelete hook: the node is "updating".
    let mut pods = pods;
    pods.push(edit_pod(pod("pd-d", "d", OLD, Health::Available, 0), |v| {
        v["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] = json!("PreparingDelete");
        v["metadata"]["finalizers"] = json!(["hold"]);
    }));
    let set = ds_with(json!({}), |v| {
        v["spec"]["lifecycle"] = json!({"preDelete": {"finalizersHandler": ["hold"]}});
    });
    let plan = run(&set, &pods, &all);
    assert!(plan.stopped.is_none(), "{:?}", plan.stopped);
    assert_eq!(
        order(&plan),
        [
            ("b", NodeClass::Updated),
            ("d", NodeClass::Updating),
            ("e", NodeClass::Rest),
            ("c", NodeClass::Rest),
            ("a", NodeClass::Rest),
        ],
        "updated, updating, rest; each by name descending; the tainted node x is not a candidate"
    );
    assert!(
        plan.actions.is_empty(),
        "d's missing pod uses the only unavailability allowed"
    );
}

#[test]
fn partition_keeps_the_first_nodes_by_name() {
    let names = ["a", "b", "c", "d", "e"];
    let pods = old_pods(&names);
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"partition": 0, "maxUnavailable": 5}),
            vec!["e", "d", "c", "b", "a"],
        ),
        (
            json!({"partition": 2, "maxUnavailable": 5}),
            vec!["e", "d", "c"],
        ),
        (json!({"partition": 4, "maxUnavailable": 5}), vec!["e"]),
        (json!({"partition": 5, "maxUnavailable": 5}), vec![]),
        (json!({"partition": 9, "maxUnavailable": 5}), vec![]),
        (
            json!({"partition": "40%", "maxUnavailable": 5}),
            vec!["e", "d", "c"],
        ),
        (
            json!({"partition": "50%", "maxUnavailable": 5}),
            vec!["e", "d", "c"],
        ),
    ];
    for (rolling, expected) in cases {
        let set = with_status_desired(ds(rolling.clone()), 5);
        let plan = run(&set, &pods, &nodes(&names));
        let expected_pods: Vec<String> = expected.iter().map(|n| format!("p-{n}")).collect();
        assert_eq!(deleted(&plan, &pods), expected_pods, "{rolling}");
    }
}

#[test]
fn updated_nodes_count_against_the_partition() {
    // 5 nodes, partition 3: two nodes may be new. e is already new, so only d is updated.
    let mut pods = old_pods(&["a", "b", "c", "d"]);
    pods.push(pod("p-e", "e", NEW, Health::Available, 9));
    let set = with_status_desired(ds(json!({"partition": 3, "maxUnavailable": 5})), 5);
    let plan = run(&set, &pods, &nodes(&["a", "b", "c", "d", "e"]));
    assert_eq!(deleted(&plan, &pods), ["p-d"]);
    assert_eq!(
        order(&plan),
        [("e", NodeClass::Updated), ("d", NodeClass::Rest)]
    );
    // Raising the partition never rolls back: with three new nodes and partition 4 nothing happens.
    let mut pods = old_pods(&["a", "b"]);
    pods.extend(
        ["c", "d", "e"]
            .iter()
            .map(|n| pod(&format!("p-{n}"), n, NEW, Health::Available, 9)),
    );
    let set = with_status_desired(ds(json!({"partition": 4})), 5);
    let plan = run(&set, &pods, &nodes(&["a", "b", "c", "d", "e"]));
    assert!(plan.actions.is_empty());
    assert_eq!(plan.update_order.len(), 1);
}

#[test]
fn partition_scales_over_the_status_count() {
    // 50% of status.desiredNumberScheduled = 2 rounds down to 1, although 4 nodes should run the pod now.
    let names = ["a", "b", "c", "d"];
    let pods = old_pods(&names);
    let set = with_status_desired(ds(json!({"partition": "50%", "maxUnavailable": 9})), 2);
    let plan = run(&set, &pods, &nodes(&names));
    assert_eq!(plan.budgets.unwrap().partition, 1);
    assert_eq!(deleted(&plan, &pods), ["p-d", "p-c", "p-b"]);
}

#[test]
fn selector_limits_the_update_to_matching_nodes() {
    let nodes = labelled(&[
        ("a", json!({"canary": "true"})),
        ("b", json!({})),
        ("c", json!({"canary": "true"})),
        ("d", json!({})),
    ]);
    let pods = old_pods(&["a", "b", "c", "d"]);
    let set = ds(json!({"selector": {"matchLabels": {"canary": "true"}}, "maxUnavailable": 4}));
    let plan = run(&set, &pods, &nodes);
    assert_eq!(deleted(&plan, &pods), ["p-c", "p-a"]);
    assert_eq!(
        order(&plan),
        [("c", NodeClass::Selected), ("a", NodeClass::Selected)]
    );
    // The partition still counts every node: 4 nodes, partition 3 → one node.
    let set = with_status_desired(
        ds_with(
            json!({"selector": {"matchLabels": {"canary": "true"}}, "maxUnavailable": 4, "partition": 3}),
            |_| {},
        ),
        4,
    );
    let plan = run(&set, &pods, &nodes);
    assert_eq!(deleted(&plan, &pods), ["p-c"]);
    // An empty selector selects every node.
    let set = ds_with(json!({"selector": {}, "maxUnavailable": 4}), |_| {});
    assert_eq!(run(&set, &pods, &nodes).update_order.len(), 4);
}

#[test]
fn mixed_classes() {
    // Reuse of the classification with PreparingDelete and duplicate pods (the manage step would act first
    // on g and on the PreparingDelete pod, so hold both).
    let set = ds_with(json!({"maxUnavailable": 9}), |v| {
        v["spec"]["lifecycle"] = json!({"preDelete": {"labelsHandler": {"hold": "yes"}}});
    });
    let pods: Vec<Pod> = mixed_pods()
        .into_iter()
        .map(|p| {
            edit_pod(p, |v| {
                v["metadata"]["labels"]["hold"] = json!("yes");
            })
        })
        .collect();
    let all = nodes(&["a", "b", "c", "d", "e", "f", "g"]);
    let plan = run(&set, &pods, &all);
    // The manage step moves two-g2 to PreparingDelete (held) and writes it, so no update this pass.
    assert_eq!(held(&plan, &pods), ["two-g2"]);
    assert!(plan.update_order.is_empty());
}
