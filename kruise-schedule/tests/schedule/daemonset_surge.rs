//! The surge flow (upstream `pkg/controller/daemonset/daemonset_update.go`): with maxSurge > 0 a new pod is created
//! next to the old one, the old one goes once the new one is available; unavailable old pods are surged at once;
//! maxSurge bounds the rest.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support::daemonset::*;
use k8s_openapi::api::core::v1::Pod;
use kruise_schedule::daemonset::{Rule, Step};
use serde_json::json;

const NAMES: [&str; 4] = ["a", "b", "c", "d"];

#[test]
fn surge_creates_before_deleting() {
    let set = ds(json!({"maxSurge": 1, "maxUnavailable": 0}));
    let nodes = nodes(&NAMES);
    let mut pods = old_pods(&NAMES);

    // Pass 1: one new pod next to d's old pod.
    let plan = run(&set, &pods, &nodes);
    assert_eq!(plan.step, Step::Update);
    assert_eq!(created(&plan), ["d"]);
    assert!(deleted(&plan, &pods).is_empty());
    assert_eq!(
        plan.actions[0].rule,
        Rule::Surge {
            unavailable: false,
            max_surge: 1,
            surging: 0
        }
    );

    // Pass 2: the new pod is not ready: it uses the surge budget, nothing else happens.
    pods.push(pod("q-d", "d", NEW, Health::NotReady, 30));
    let plan = run(&set, &pods, &nodes);
    assert!(plan.actions.is_empty(), "{:?}", rules(&plan));

    // Pass 3: the new pod is available: the manage step deletes the old one.
    pods[4] = pod("q-d", "d", NEW, Health::Available, 30);
    let plan = run(&set, &pods, &nodes);
    assert_eq!(plan.step, Step::Manage);
    assert_eq!(deleted(&plan, &pods), ["p-d"]);
    assert_eq!(rules(&plan), ["new-pod-available"]);

    // Pass 4: d is done; c surges next.
    pods.remove(3);
    let plan = run(&set, &pods, &nodes);
    assert_eq!(created(&plan), ["c"]);
}

#[test]
fn the_rolling_update_also_deletes_replaced_old_pods() {
    // With minReadySeconds the manage step waits for availability, so does the rolling update: ready but not
    // yet available keeps both pods (and asks to look again when it will be available).
    let set = ds_with(json!({"maxSurge": 2, "maxUnavailable": 0}), |v| {
        v["spec"]["minReadySeconds"] = json!(60);
    });
    let mut pods = old_pods(&NAMES);
    pods.push(pod("q-d", "d", NEW, Health::JustReady, 30));
    let plan = run(&set, &pods, &nodes(&NAMES));
    assert_eq!(created(&plan), ["c"], "one of two surge slots is used by d");
    assert_eq!(plan.requeue_after, Some(std::time::Duration::from_secs(60)));
}

#[test]
fn unavailable_old_pods_surge_at_once() {
    let set = ds(json!({"maxSurge": 1, "maxUnavailable": 0}));
    let mut pods = old_pods(&NAMES);
    pods[0] = pod("p-a", "a", OLD, Health::NotReady, 0);
    pods[1] = pod("p-b", "b", OLD, Health::NotReady, 0);
    let plan = run(&set, &pods, &nodes(&NAMES));
    assert_eq!(created(&plan), ["b", "a", "d"]);
    // The manage step replaces a not-ready old pod as soon as the new pod exists.
    pods.push(pod("q-b", "b", NEW, Health::NotReady, 30));
    let plan = run(&set, &pods, &nodes(&NAMES));
    assert_eq!(deleted(&plan, &pods), ["p-b"]);
    assert_eq!(rules(&plan), ["old-pod-not-ready"]);
}

#[test]
fn max_surge_percentage_rounds_up() {
    let set = ds(json!({"maxSurge": "30%", "maxUnavailable": 0}));
    let names: Vec<String> = (0..10).map(|i| format!("n{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let pods = old_pods(&refs);
    let plan = run(&set, &pods, &nodes(&refs));
    assert_eq!(created(&plan), ["n9", "n8", "n7"]);
}

#[test]
fn extra_pods_while_surging_keep_the_oldest_of_each_revision() {
    let set = ds(json!({"maxSurge": 1, "maxUnavailable": 0}));
    let pods: Vec<Pod> = vec![
        pod("old1", "a", OLD, Health::Available, 0),
        pod("old2", "a", OLD, Health::Available, 1),
        pod("new1", "a", NEW, Health::NotReady, 2),
        pod("new2", "a", NEW, Health::NotReady, 3),
    ];
    let plan = run(&set, &pods, &nodes(&["a"]));
    assert_eq!(deleted(&plan, &pods), ["old2", "new2"]);
    assert_eq!(rules(&plan), ["excess-surge-pod", "excess-surge-pod"]);
}

#[test]
fn partition_and_selector_apply_to_surge() {
    let nodes = vec![
        node_json("a", json!({"canary": "1"}), json!({})),
        node_json("b", json!({}), json!({})),
        node_json("c", json!({"canary": "1"}), json!({})),
    ];
    let set = with_status_desired(
        ds(
            json!({"maxSurge": 3, "maxUnavailable": 0, "selector": {"matchLabels": {"canary": "1"}}, "partition": 2}),
        ),
        3,
    );
    let pods = old_pods(&["a", "b", "c"]);
    let plan = run(&set, &pods, &nodes);
    assert_eq!(created(&plan), ["c"]);
}

#[test]
fn a_v1alpha1_surging_daemonset_surges_after_defaults_and_conversion() {
    use kruise_api::apps::{v1alpha1, v1beta1};
    use kruise_api::defaults::ApplyDefaults;
    let mut alpha: v1alpha1::DaemonSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "DaemonSet",
        "metadata": {"name": "ds", "namespace": "ns", "generation": 1},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "img:2"}]}},
            "updateStrategy": {"rollingUpdate": {"rollingUpdateType": "Surging", "partition": 1}},
        },
    }))
    .unwrap();
    alpha.apply_defaults();
    let hub = v1beta1::DaemonSet::from(alpha);
    let pods = old_pods(&NAMES);
    let plan = run(&hub, &pods, &nodes(&NAMES));
    let budgets = plan.budgets.unwrap();
    assert_eq!((budgets.max_surge, budgets.max_unavailable), (1, 0));
    assert_eq!(created(&plan), ["d"]);
}
