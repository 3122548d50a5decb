//! Which nodes should run a daemon pod (upstream `nodeShouldRunDaemonPod`): nodeName, nodeSelector, required node
//! affinity, taints against the template's tolerations plus the default daemon tolerations, unschedulable nodes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support::daemonset::*;
use k8s_openapi::api::core::v1::{PodSpec, Taint, Toleration};
use kruise_schedule::daemonset::node_affinity::target_node;
use kruise_schedule::daemonset::toleration::{tolerates, with_daemon_tolerations};
use kruise_schedule::daemonset::{DaemonPodFit, Unfit};
use serde_json::{Value, json};

fn spec(value: Value) -> PodSpec {
    let mut value = value;
    value["containers"] = json!([{"name": "c", "image": "i"}]);
    serde_json::from_value(value).unwrap()
}

fn taint(key: &str, value: &str, effect: &str) -> Value {
    json!({"key": key, "value": value, "effect": effect})
}

/// (should_run, should_continue_running) of a pod spec on a node.
fn fit(pod_spec: Value, labels: Value, node_spec: Value) -> (bool, bool) {
    let spec = spec(pod_spec);
    let node = node_json("n1", labels, node_spec);
    let fit = DaemonPodFit::new(&spec).check(&node);
    (fit.should_run, fit.should_continue_running)
}

#[test]
fn taints_and_tolerations_table() {
    let cases: Vec<(&str, Value, Value, (bool, bool))> = vec![
        ("no taints", json!({}), json!({}), (true, true)),
        (
            "NoSchedule untolerated: stays if already there",
            json!({}),
            json!({"taints": [taint("dedicated", "gpu", "NoSchedule")]}),
            (false, true),
        ),
        (
            "NoExecute untolerated: evicted",
            json!({}),
            json!({"taints": [taint("dedicated", "gpu", "NoExecute")]}),
            (false, false),
        ),
        (
            "PreferNoSchedule is ignored",
            json!({}),
            json!({"taints": [taint("dedicated", "gpu", "PreferNoSchedule")]}),
            (true, true),
        ),
        (
            "Equal toleration with the same value",
            json!({"tolerations": [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]}),
            json!({"taints": [taint("dedicated", "gpu", "NoSchedule")]}),
            (true, true),
        ),
        (
            "Equal toleration with another value",
            json!({"tolerations": [{"key": "dedicated", "value": "cpu"}]}),
            json!({"taints": [taint("dedicated", "gpu", "NoSchedule")]}),
            (false, true),
        ),
        (
            "Exists with an empty key tolerates everything",
            json!({"tolerations": [{"operator": "Exists"}]}),
            json!({"taints": [taint("a", "b", "NoExecute"), taint("c", "", "NoSchedule")]}),
            (true, true),
        ),
        (
            "toleration effect must match",
            json!({"tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]}),
            json!({"taints": [taint("dedicated", "gpu", "NoExecute")]}),
            (false, false),
        ),
        (
            "unschedulable node: the default toleration covers its taint",
            json!({}),
            json!({"unschedulable": true, "taints": [taint("node.kubernetes.io/unschedulable", "", "NoSchedule")]}),
            (true, true),
        ),
        (
            "unschedulable without the taint yet: not read",
            json!({}),
            json!({"unschedulable": true}),
            (true, true),
        ),
        (
            "not-ready NoExecute is tolerated by default",
            json!({}),
            json!({"taints": [taint("node.kubernetes.io/not-ready", "", "NoExecute"), taint("node.kubernetes.io/unreachable", "", "NoExecute")]}),
            (true, true),
        ),
        (
            "memory/disk/pid pressure are tolerated by default",
            json!({}),
            json!({"taints": [taint("node.kubernetes.io/memory-pressure", "", "NoSchedule"), taint("node.kubernetes.io/disk-pressure", "", "NoSchedule"), taint("node.kubernetes.io/pid-pressure", "", "NoSchedule")]}),
            (true, true),
        ),
        (
            "network-unavailable only for host-network pods",
            json!({}),
            json!({"taints": [taint("node.kubernetes.io/network-unavailable", "", "NoSchedule")]}),
            (false, true),
        ),
        (
            "network-unavailable tolerated with hostNetwork",
            json!({"hostNetwork": true}),
            json!({"taints": [taint("node.kubernetes.io/network-unavailable", "", "NoSchedule")]}),
            (true, true),
        ),
        (
            "unknown operator tolerates nothing",
            json!({"tolerations": [{"key": "dedicated", "operator": "Gt", "value": "1"}]}),
            json!({"taints": [taint("dedicated", "2", "NoSchedule")]}),
            (false, true),
        ),
    ];
    for (name, pod_spec, node_spec, expected) in cases {
        assert_eq!(fit(pod_spec, json!({}), node_spec), expected, "{name}");
    }
}

#[test]
fn node_selector_affinity_and_node_name_table() {
    let required = |terms: Value| json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}});
    let labels = json!({"zone": "a", "cpus": "8", "role": "worker"});
    let cases: Vec<(&str, Value, bool)> = vec![
        (
            "nodeSelector matches",
            json!({"nodeSelector": {"zone": "a"}}),
            true,
        ),
        (
            "nodeSelector differs",
            json!({"nodeSelector": {"zone": "b"}}),
            false,
        ),
        (
            "nodeSelector key missing",
            json!({"nodeSelector": {"gpu": "yes"}}),
            false,
        ),
        (
            "In",
            required(
                json!([{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]),
            ),
            true,
        ),
        (
            "NotIn",
            required(
                json!([{"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}]),
            ),
            false,
        ),
        (
            "NotIn on a missing key",
            required(
                json!([{"matchExpressions": [{"key": "gpu", "operator": "NotIn", "values": ["x"]}]}]),
            ),
            true,
        ),
        (
            "Exists",
            required(json!([{"matchExpressions": [{"key": "role", "operator": "Exists"}]}])),
            true,
        ),
        (
            "DoesNotExist",
            required(json!([{"matchExpressions": [{"key": "role", "operator": "DoesNotExist"}]}])),
            false,
        ),
        (
            "Gt",
            required(
                json!([{"matchExpressions": [{"key": "cpus", "operator": "Gt", "values": ["4"]}]}]),
            ),
            true,
        ),
        (
            "Lt",
            required(
                json!([{"matchExpressions": [{"key": "cpus", "operator": "Lt", "values": ["4"]}]}]),
            ),
            false,
        ),
        (
            "Gt with a non-integer bound is invalid",
            required(
                json!([{"matchExpressions": [{"key": "cpus", "operator": "Gt", "values": ["x"]}]}]),
            ),
            false,
        ),
        (
            "terms are ORed",
            required(json!([
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z"]}]},
                {"matchExpressions": [{"key": "role", "operator": "In", "values": ["worker"]}]},
            ])),
            true,
        ),
        (
            "expressions in a term are ANDed",
            required(json!([{"matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["a"]},
                {"key": "role", "operator": "In", "values": ["control-plane"]},
            ]}])),
            false,
        ),
        (
            "an empty term matches nothing",
            required(json!([{}])),
            false,
        ),
        ("no terms match nothing", required(json!([])), false),
        (
            "an invalid term never matches but others still do",
            required(json!([
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": []}]},
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]},
            ])),
            true,
        ),
        (
            "matchFields metadata.name In",
            required(
                json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]),
            ),
            true,
        ),
        (
            "matchFields metadata.name NotIn",
            required(
                json!([{"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}]),
            ),
            false,
        ),
        (
            "matchFields other keys are invalid",
            required(
                json!([{"matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["n1"]}]}]),
            ),
            false,
        ),
        (
            "nodeSelector and affinity both apply",
            {
                let mut v = required(
                    json!([{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]),
                );
                v["nodeSelector"] = json!({"role": "db"});
                v
            },
            false,
        ),
        (
            "template nodeName is this node",
            json!({"nodeName": "n1"}),
            true,
        ),
        (
            "template nodeName is another node",
            json!({"nodeName": "n2"}),
            false,
        ),
    ];
    for (name, pod_spec, expected) in cases {
        let (should_run, continue_running) = fit(pod_spec, labels.clone(), json!({}));
        assert_eq!(should_run, expected, "{name}");
        assert_eq!(
            continue_running, expected,
            "{name}: affinity failures also evict"
        );
    }
}

#[test]
fn unfit_reasons_name_the_cause() {
    let spec = spec(json!({"nodeSelector": {"zone": "a"}}));
    let node = node_json(
        "n1",
        json!({"zone": "a"}),
        json!({"taints": [taint("k", "v", "NoSchedule")]}),
    );
    let fit = DaemonPodFit::new(&spec).check(&node);
    assert_eq!(
        fit.reason,
        Some(Unfit::Taint {
            taint: "k=v:NoSchedule".into()
        })
    );
    assert_eq!(
        fit.reason.unwrap().to_string(),
        "taint k=v:NoSchedule is not tolerated"
    );
    let fit = DaemonPodFit::new(&spec).check(&node_json("n2", json!({}), json!({})));
    assert_eq!(fit.reason, Some(Unfit::NodeAffinity));
}

#[test]
fn default_tolerations_are_added_once_in_order() {
    let own: Toleration = serde_json::from_value(json!({"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5})).unwrap();
    let mine: Toleration =
        serde_json::from_value(json!({"key": "x", "operator": "Exists"})).unwrap();
    let out = with_daemon_tolerations(&[mine.clone(), own], false);
    let keys: Vec<_> = out.iter().map(|t| t.key.clone().unwrap()).collect();
    assert_eq!(
        keys,
        [
            "x",
            "node.kubernetes.io/unschedulable",
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
            "node.kubernetes.io/disk-pressure",
            "node.kubernetes.io/memory-pressure",
            "node.kubernetes.io/pid-pressure",
        ],
        "an equal toleration is replaced in place, the others appended"
    );
    assert_eq!(out[1].toleration_seconds, None);
    assert_eq!(out[0], mine);
    assert_eq!(with_daemon_tolerations(&[], true).len(), 7);
}

#[test]
fn toleration_matching_rules() {
    let t = |v: Value| -> Toleration { serde_json::from_value(v).unwrap() };
    let taint = Taint {
        key: "k".into(),
        value: Some("v".into()),
        effect: "NoSchedule".into(),
        time_added: None,
    };
    assert!(
        tolerates(&t(json!({"key": "k", "value": "v"})), &taint),
        "empty operator is Equal"
    );
    assert!(
        !tolerates(&t(json!({"key": "k"})), &taint),
        "Equal with an empty value"
    );
    assert!(tolerates(
        &t(json!({"key": "k", "operator": "Exists"})),
        &taint
    ));
    assert!(!tolerates(
        &t(json!({"key": "other", "operator": "Exists"})),
        &taint
    ));
}

#[test]
fn pods_are_grouped_by_target_node() {
    let scheduled = spec(json!({"nodeName": "n1"}));
    assert_eq!(target_node(Some(&scheduled)), Some("n1"));
    let pending = spec(
        json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n7"]}]},
        ]}}}}),
    );
    assert_eq!(target_node(Some(&pending)), Some("n7"));
    let ambiguous = spec(
        json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n7", "n8"]}]},
        ]}}}}),
    );
    assert_eq!(target_node(Some(&ambiguous)), None);
    assert_eq!(target_node(Some(&spec(json!({})))), None);
}

#[test]
fn plan_counts_and_cleans_by_fit() {
    // n1 runs it, n2 is tainted NoSchedule (its pod may stay), n3 is tainted NoExecute (its pod goes),
    // m1 fails the nodeSelector (its pod goes), u1 is unschedulable (it still runs a pod).
    let set = ds_with(json!({}), |v| {
        v["spec"]["template"]["spec"]["nodeSelector"] = json!({"pool": "w"});
    });
    let worker = json!({"pool": "w"});
    let nodes = vec![
        node_json("n1", worker.clone(), json!({})),
        node_json(
            "n2",
            worker.clone(),
            json!({"taints": [taint("d", "", "NoSchedule")]}),
        ),
        node_json(
            "n3",
            worker.clone(),
            json!({"taints": [taint("d", "", "NoExecute")]}),
        ),
        node_json("m1", json!({}), json!({})),
        node_json(
            "u1",
            worker,
            json!({"unschedulable": true, "taints": [taint("node.kubernetes.io/unschedulable", "", "NoSchedule")]}),
        ),
    ];
    let pods = vec![
        pod("a", "n1", NEW, Health::Available, 1),
        pod("b", "n2", NEW, Health::Available, 2),
        pod("c", "n3", NEW, Health::Available, 3),
        pod("d", "m1", NEW, Health::Available, 4),
    ];
    let plan = run(&set, &pods, &nodes);
    assert_eq!(created(&plan), ["u1"]);
    assert_eq!(
        deleted(&plan, &pods),
        ["d", "c"],
        "name order: m1 before n3"
    );
    assert_eq!(
        rules(&plan),
        ["missing-pod", "node-ineligible", "node-ineligible"]
    );
    assert_eq!(plan.status.desired_number_scheduled, 2);
    assert_eq!(plan.status.current_number_scheduled, 1);
    assert_eq!(plan.status.number_misscheduled, 3);
}
