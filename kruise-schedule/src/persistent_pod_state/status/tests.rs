use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;

use super::*;

const ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";

fn spec(extra: serde_json::Value) -> PersistentPodStateSpec {
    let mut value = json!({
        "targetRef": {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "web"},
        "requiredPersistentTopology": {"nodeTopologyKeys": [ZONE]},
        "preferredPersistentTopology": [{"weight": 100, "preference": {"nodeTopologyKeys": [HOST]}}],
        "persistentPodAnnotations": [{"key": "ip"}],
    });
    if let (Some(target), serde_json::Value::Object(extra)) = (value.as_object_mut(), extra) {
        target.extend(extra);
    }
    serde_json::from_value(value).unwrap()
}

fn pod(name: &str, node: &str, ready: bool) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "annotations": {"ip": format!("10.0.0.{}", name.len()), "other": "x"}},
        "spec": {"containers": [], "nodeName": node},
        "status": {"conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]},
    }))
    .unwrap()
}

fn nodes() -> BTreeMap<String, BTreeMap<String, String>> {
    ["a", "b", "c"]
        .into_iter()
        .map(|zone| {
            let node = format!("node-{zone}");
            let labels = BTreeMap::from([
                (ZONE.to_owned(), format!("zone-{zone}")),
                (HOST.to_owned(), node.clone()),
                ("unrelated".to_owned(), "1".to_owned()),
            ]);
            (node, labels)
        })
        .collect()
}

fn state(node: &str, zone: &str) -> PodState {
    PodState {
        node_name: node.to_owned(),
        node_topology_labels: BTreeMap::from([
            (HOST.to_owned(), node.to_owned()),
            (ZONE.to_owned(), zone.to_owned()),
        ]),
        annotations: BTreeMap::from([("ip".to_owned(), "10.0.0.5".to_owned())]),
    }
}

fn workload(replicas: i32) -> WorkloadView {
    WorkloadView {
        replicas,
        ..WorkloadView::default()
    }
}

fn names(status: &PersistentPodStateStatus) -> Vec<&str> {
    status.pod_states.keys().map(String::as_str).collect()
}

#[test]
fn ready_pods_with_a_node_are_recorded_with_the_keys_asked_for() {
    let spec = spec(json!({}));
    let nodes = nodes();
    let pods = [
        pod("web-0", "node-a", true),
        pod("web-1", "node-b", false),
        pod("web-2", "", true),
        pod("web-3", "node-gone", true),
    ];
    let status = next_status(&StatusInput {
        spec: &spec,
        previous: None,
        generation: 3,
        workload: Some(&workload(4)),
        pods: &pods,
        node_labels: &nodes,
    });
    assert_eq!(status.observed_generation, 3);
    // Passing row: web-0. Failing rows: not ready, no node, node unknown.
    assert_eq!(names(&status), ["web-0"]);
    assert_eq!(status.pod_states["web-0"], state("node-a", "zone-a"));
}

#[test]
fn a_current_record_is_kept_and_a_stale_one_rewritten() {
    let spec = spec(json!({}));
    let nodes = nodes();
    // The recorded zone of web-0 is stale but the node and the keys are unchanged: kept as recorded.
    let kept = state("node-a", "zone-old");
    // web-1 moved to node-c: rewritten.
    let moved = state("node-b", "zone-b");
    let mut narrow = state("node-a", "zone-a");
    narrow.node_topology_labels.remove(HOST);
    let previous = PersistentPodStateStatus {
        observed_generation: 1,
        pod_states: BTreeMap::from([
            ("web-0".to_owned(), kept.clone()),
            ("web-1".to_owned(), moved),
            ("web-2".to_owned(), narrow),
        ]),
    };
    let pods = [
        pod("web-0", "node-a", true),
        pod("web-1", "node-c", true),
        pod("web-2", "node-a", true),
    ];
    let status = next_status(&StatusInput {
        spec: &spec,
        previous: Some(&previous),
        generation: 2,
        workload: Some(&workload(3)),
        pods: &pods,
        node_labels: &nodes,
    });
    assert_eq!(status.pod_states["web-0"], kept);
    assert_eq!(status.pod_states["web-1"], state("node-c", "zone-c"));
    // Recorded under fewer keys than asked for: rewritten with the hostname too.
    assert_eq!(status.pod_states["web-2"], state("node-a", "zone-a"));
}

#[test]
fn when_scaled_drops_records_beyond_the_replicas_once_the_pod_is_gone() {
    let spec = spec(json!({}));
    let nodes = nodes();
    let previous = PersistentPodStateStatus {
        observed_generation: 1,
        pod_states: ["web-0", "web-1", "web-2", "web-3", "web"]
            .into_iter()
            .map(|name| (name.to_owned(), state("node-a", "zone-a")))
            .collect(),
    };
    // web-3 still exists (terminating pods are not passed, but a pod the controller has not deleted yet
    // is): its record stays until it is gone. web-2 is gone: dropped. A name without an ordinal stays.
    let pods = [pod("web-3", "node-a", false)];
    let status = next_status(&StatusInput {
        spec: &spec,
        previous: Some(&previous),
        generation: 1,
        workload: Some(&workload(2)),
        pods: &pods,
        node_labels: &nodes,
    });
    assert_eq!(names(&status), ["web", "web-0", "web-1", "web-3"]);
}

#[test]
fn when_deleted_keeps_records_beyond_the_replicas() {
    let spec = spec(json!({"persistentPodStateRetentionPolicy": "WhenDeleted"}));
    let nodes = nodes();
    let previous = PersistentPodStateStatus {
        observed_generation: 1,
        pod_states: BTreeMap::from([("web-5".to_owned(), state("node-a", "zone-a"))]),
    };
    let status = next_status(&StatusInput {
        spec: &spec,
        previous: Some(&previous),
        generation: 1,
        workload: Some(&workload(1)),
        pods: &[],
        node_labels: &nodes,
    });
    assert_eq!(names(&status), ["web-5"]);
}

#[test]
fn a_deleted_or_missing_workload_clears_every_record_whatever_the_policy() {
    let spec = spec(json!({"persistentPodStateRetentionPolicy": "WhenDeleted"}));
    let nodes = nodes();
    let previous = PersistentPodStateStatus {
        observed_generation: 1,
        pod_states: BTreeMap::from([("web-0".to_owned(), state("node-a", "zone-a"))]),
    };
    let deleting = WorkloadView {
        deleting: true,
        ..workload(3)
    };
    for target in [None, Some(&deleting)] {
        let status = next_status(&StatusInput {
            spec: &spec,
            previous: Some(&previous),
            generation: 4,
            workload: target,
            pods: &[pod("web-0", "node-a", true)],
            node_labels: &nodes,
        });
        assert!(status.pod_states.is_empty(), "{target:?}");
        assert_eq!(status.observed_generation, 4);
    }
    // The live workload keeps it.
    let status = next_status(&StatusInput {
        spec: &spec,
        previous: Some(&previous),
        generation: 4,
        workload: Some(&workload(3)),
        pods: &[],
        node_labels: &nodes,
    });
    assert_eq!(names(&status), ["web-0"]);
}

#[test]
fn replicas_skip_reserved_ordinals() {
    let reserved =
        ReservedOrdinals::parse(&[IntOrString::Int(1), IntOrString::String("3-4".into())]).unwrap();
    let view = WorkloadView {
        replicas: 3,
        reserved,
        deleting: false,
    };
    // The three replicas are ordinals 0, 2 and 5.
    let rows = [
        (0, true),
        (1, false),
        (2, true),
        (3, false),
        (4, false),
        (5, true),
        (6, false),
        (-1, false),
    ];
    for (ordinal, expected) in rows {
        assert_eq!(
            is_within_replicas(ordinal, &view),
            expected,
            "ordinal {ordinal}"
        );
    }
    assert!(!is_within_replicas(0, &workload(0)));
}

#[test]
fn ordinals_are_read_after_the_last_dash() {
    let rows = [
        ("web-12", Some(12)),
        ("my-web-3", Some(3)),
        ("web-+4", Some(4)),
        ("web-x", None),
        ("web-", None),
        ("7", Some(7)),
    ];
    for (name, expected) in rows {
        assert_eq!(ordinal_of(name), expected, "{name}");
    }
}
