//! Pods per node (upstream `manage` in `pkg/controller/daemonset`): create the missing pod, delete extra, failed,
//! misplaced and `PreparingDelete` pods keeping the oldest, burstReplicas and slow start, preDelete hook,
//! partitioned scaling.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support::daemonset::*;
use kruise_api::lifecycle::LifecycleStateType;
use kruise_schedule::daemonset::{ActionKind, Rule, Step};
use serde_json::json;

#[test]
fn creates_one_pod_per_node_in_name_order_with_slow_start() {
    let set = with_status_desired(ds(json!({})), 10);
    let names: Vec<String> = (0..7).map(|i| format!("n{i}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let plan = run(&set, &[], &nodes(&refs));
    assert_eq!(plan.step, Step::Manage);
    assert_eq!(created(&plan), names);
    let batches: Vec<u32> = plan
        .actions
        .iter()
        .map(|a| match &a.kind {
            ActionKind::CreatePod { batch, .. } => *batch,
            _ => panic!(),
        })
        .collect();
    assert_eq!(batches, [0, 1, 1, 2, 2, 2, 2]);
    assert_eq!(
        plan.status.observed_generation, 2,
        "observedGeneration waits for the creations"
    );
}

#[test]
fn the_created_pod_is_pinned_labelled_and_owned() {
    let set = ds_with(json!({"rollingUpdateType": "InPlaceIfPossible"}), |v| {
        v["metadata"]["annotations"] = json!({"deprecated.daemonset.template.generation": "4"});
        v["spec"]["template"]["spec"]["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]}]}]}}});
    });
    let nodes = vec![node_json(
        "n1",
        json!({"kubernetes.io/os": "linux"}),
        json!({}),
    )];
    let plan = run(&set, &[], &nodes);
    let ActionKind::CreatePod { pod, node, .. } = &plan.actions[0].kind else {
        panic!()
    };
    assert_eq!(node.as_deref(), Some("n1"));
    let value = serde_json::to_value(pod.as_ref()).unwrap();
    assert_eq!(value["metadata"]["generateName"], "ds-");
    assert_eq!(value["metadata"]["namespace"], "ns");
    assert_eq!(
        value["metadata"]["labels"],
        json!({"app": "d", "controller-revision-hash": NEW, "pod-template-generation": "4"})
    );
    assert_eq!(
        value["metadata"]["ownerReferences"],
        json!([{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "DaemonSet", "name": "ds", "uid": "ds-uid",
                "controller": true, "blockOwnerDeletion": true}])
    );
    assert_eq!(
        value["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"],
        json!({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]})
    );
    assert_eq!(
        value["spec"]["readinessGates"],
        json!([{"conditionType": "InPlaceUpdateReady"}])
    );
    assert_eq!(value["spec"]["tolerations"].as_array().unwrap().len(), 6);
    assert!(
        value["spec"].get("nodeName").is_none(),
        "the scheduler binds it"
    );
}

#[test]
fn standard_pods_get_no_readiness_gate() {
    let plan = run(&ds(json!({})), &[], &nodes(&["n1"]));
    let ActionKind::CreatePod { pod, .. } = &plan.actions[0].kind else {
        panic!()
    };
    assert!(pod.spec.as_ref().unwrap().readiness_gates.is_none());
}

#[test]
fn extra_pods_go_keeping_the_oldest_scheduled_pod() {
    let set = ds(json!({}));
    let pending = edit_pod(pod("p0", "n1", NEW, Health::NotReady, 0), |v| {
        v["spec"]["nodeName"] = json!(null);
        v["spec"]["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}});
    });
    let pods = vec![
        pod("p3", "n1", NEW, Health::Available, 3),
        pending,
        pod("p1", "n1", OLD, Health::Available, 1),
        pod("p2", "n1", NEW, Health::Available, 1),
    ];
    let plan = run(&set, &pods, &nodes(&["n1"]));
    assert_eq!(
        deleted(&plan, &pods),
        ["p2", "p3", "p0"],
        "same age: by name; unscheduled last"
    );
    assert_eq!(plan.actions[0].rule, Rule::ExcessPod { kept: "p1".into() });
}

#[test]
fn failed_pods_go_and_terminating_pods_block_creation() {
    let set = ds(json!({}));
    let terminating = edit_pod(pod("t", "n2", OLD, Health::Available, 0), |v| {
        v["metadata"]["deletionTimestamp"] = json!("2024-05-01T09:59:00Z");
    });
    let pods = vec![pod("f", "n1", NEW, Health::Failed, 0), terminating];
    let plan = run(&set, &pods, &nodes(&["n1", "n2"]));
    assert_eq!(deleted(&plan, &pods), ["f"]);
    assert_eq!(rules(&plan), ["failed-pod"]);
    assert!(
        created(&plan).is_empty(),
        "n1 has a pod (failed), n2 a terminating one"
    );
    assert_eq!(plan.status.current_number_scheduled, 2);
}

#[test]
fn unscheduled_pods_of_missing_nodes_go() {
    let set = ds(json!({}));
    let lost = edit_pod(pod("lost", "gone", NEW, Health::NotReady, 0), |v| {
        v["spec"]["nodeName"] = json!(null);
        v["spec"]["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gone"]}]}]}}});
    });
    let bound = pod("bound", "gone2", NEW, Health::Available, 0);
    let pods = vec![lost, bound, pod("a", "n1", NEW, Health::Available, 0)];
    let plan = run(&set, &pods, &nodes(&["n1"]));
    assert_eq!(
        deleted(&plan, &pods),
        ["lost"],
        "a bound pod on a missing node is left to pod GC"
    );
    assert_eq!(rules(&plan), ["node-gone"]);
}

#[test]
fn burst_replicas_caps_creations_and_deletions() {
    let set = ds_with(json!({}), |v| v["spec"]["burstReplicas"] = json!(2));
    let plan = run(&set, &[], &nodes(&["a", "b", "c"]));
    assert_eq!(created(&plan), ["a", "b"]);
    // A percentage scales down over status.desiredNumberScheduled: 50% of 5 is 2.
    let set = with_status_desired(
        ds_with(json!({}), |v| v["spec"]["burstReplicas"] = json!("50%")),
        5,
    );
    assert_eq!(
        created(&run(&set, &[], &nodes(&["a", "b", "c"]))),
        ["a", "b"]
    );
    let set = ds_with(json!({}), |v| v["spec"]["burstReplicas"] = json!("2"));
    let plan = run(&set, &[], &nodes(&["a"]));
    assert!(plan.actions.is_empty());
    assert_eq!(
        plan.stopped.unwrap().to_string(),
        "DaemonSet ns/ds: spec.burstReplicas: invalid value \"2\": string is not a percentage"
    );
}

#[test]
fn pre_delete_hook_turns_deletion_into_preparing_delete() {
    let set = ds_with(json!({}), |v| {
        v["spec"]["lifecycle"] =
            json!({"preDelete": {"labelsHandler": {"hold": "true"}, "markPodNotReady": true}});
    });
    let hooked = edit_pod(pod("hooked", "m1", NEW, Health::Available, 0), |v| {
        v["metadata"]["labels"]["hold"] = json!("true");
    });
    let free = pod("free", "m2", NEW, Health::Available, 0);
    let pods = vec![hooked, free];
    let mut nodes = nodes(&["n1"]);
    nodes.push(node_json(
        "m1",
        json!({}),
        json!({"taints": [{"key": "d", "effect": "NoExecute"}]}),
    ));
    nodes.push(node_json(
        "m2",
        json!({}),
        json!({"taints": [{"key": "d", "effect": "NoExecute"}]}),
    ));
    let plan = run(&set, &pods, &nodes);
    assert_eq!(held(&plan, &pods), ["hooked"]);
    assert_eq!(deleted(&plan, &pods), ["free"]);
    let ActionKind::Lifecycle { transition, .. } = &plan.actions[0].kind else {
        panic!()
    };
    assert_eq!(transition.to, Some(LifecycleStateType::PreparingDelete));
    assert!(plan.actions[0].reason().contains("preDelete hook holds it"));

    // Released later: a PreparingDelete pod goes once the hook no longer holds it, and the node waits for it.
    let released = edit_pod(pod("pd", "n1", NEW, Health::Available, 0), |v| {
        v["metadata"]["labels"]["lifecycle.apps.kruise.io/state"] = json!("PreparingDelete");
    });
    let pods = vec![released];
    let plan = run(&set, &pods, &nodes[..1]);
    assert_eq!(deleted(&plan, &pods), ["pd"]);
    assert_eq!(rules(&plan), ["preparing-delete"]);
    assert!(created(&plan).is_empty());
}

#[test]
fn partitioned_scaling_limits_creations() {
    // desired 5, partition 3, one new pod: 5 - 1 - 3 = 1 creation, on the lexicographically first node.
    let set = ds_with(json!({"partition": 3}), |v| {
        v["spec"]["scaleStrategy"] = json!({"partitionedScaling": true});
    });
    let pods = vec![pod("p", "a", NEW, Health::Available, 0)];
    let plan = run(&set, &pods, &nodes(&["e", "d", "c", "b", "a"]));
    assert_eq!(created(&plan), ["b"]);
    assert_eq!(
        plan.actions[0].rule,
        Rule::MissingPod {
            partitioned: Some(1)
        }
    );

    // Partition >= desired: nothing.
    let set = ds_with(json!({"partition": 9}), |v| {
        v["spec"]["scaleStrategy"] = json!({"partitionedScaling": true});
    });
    assert!(created(&run(&set, &[], &nodes(&["a", "b"]))).is_empty());

    // Without partitionedScaling (or with partition 0) every node gets its pod.
    let set = ds(json!({"partition": 3}));
    assert_eq!(created(&run(&set, &[], &nodes(&["b", "a"]))), ["a", "b"]);
    let set = ds_with(json!({"partition": 0}), |v| {
        v["spec"]["scaleStrategy"] = json!({"partitionedScaling": true});
    });
    assert_eq!(created(&run(&set, &[], &nodes(&["b", "a"]))).len(), 2);

    // A percentage partition scales down over the nodes that should run the pod: 50% of 5 is 2.
    let set = ds_with(json!({"partition": "50%"}), |v| {
        v["spec"]["scaleStrategy"] = json!({"partitionedScaling": true});
    });
    assert_eq!(
        created(&run(&set, &[], &nodes(&["a", "b", "c", "d", "e"]))),
        ["a", "b", "c"]
    );
}

#[test]
fn paused_still_manages_pods() {
    let set = ds(json!({"paused": true}));
    assert_eq!(created(&run(&set, &[], &nodes(&["a"]))), ["a"]);
}
