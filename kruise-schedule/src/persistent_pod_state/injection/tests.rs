use serde_json::json;

use super::*;

const ZONE: &str = "topology.kubernetes.io/zone";
const HOST: &str = "kubernetes.io/hostname";

fn persistent_state(
    name: &str,
    target: &serde_json::Value,
    spec: serde_json::Value,
) -> PersistentPodState {
    let mut value = json!({
        "metadata": {"name": name, "namespace": "prod"},
        "spec": {"targetRef": target},
        "status": {"observedGeneration": 1, "podStates": {
            "web-0": {"nodeName": "node-a", "nodeTopologyLabels": {ZONE: "zone-a", HOST: "node-a"}},
            "web-1": {"nodeName": "node-b", "annotations": {"ip": "10.0.0.1"}},
        }},
    });
    if let (Some(target), serde_json::Value::Object(extra)) = (value["spec"].as_object_mut(), spec)
    {
        target.extend(extra);
    }
    serde_json::from_value(value).unwrap()
}

fn web_target() -> serde_json::Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "web"})
}

fn both_topologies() -> serde_json::Value {
    json!({
        "requiredPersistentTopology": {"nodeTopologyKeys": [ZONE, "rack"]},
        "preferredPersistentTopology": [
            {"weight": 80, "preference": {"nodeTopologyKeys": [HOST]}},
            {"weight": 10, "preference": {"nodeTopologyKeys": ["rack"]}},
        ],
    })
}

fn pod(name: &str, owner_api_version: &str, owner_kind: &str, owner_name: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "prod", "annotations": {"keep": "me"},
            "ownerReferences": [{"apiVersion": owner_api_version, "kind": owner_kind,
                "name": owner_name, "uid": "u", "controller": true}]},
        "spec": {
            "containers": [{"name": "main", "image": "nginx"}],
            "nodeSelector": {"disk": "ssd", ZONE: "zone-z"},
            "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "preference": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}}]}},
        },
    }))
    .unwrap()
}

#[test]
fn a_recorded_pod_gets_its_selector_and_preferences_merged_after_its_own() {
    let state = persistent_state("web-state", &web_target(), both_topologies());
    let mut created = pod("web-0", "apps.kruise.io/v1alpha1", "StatefulSet", "web");
    assert_eq!(inject(&mut created, [&state]).as_deref(), Some("web-state"));
    let expected: Pod = serde_json::from_value(json!({
        "metadata": {"name": "web-0", "namespace": "prod",
            "annotations": {"keep": "me", "kruise.io/injected-persistent-pod-state": "web-state"},
            "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1", "kind": "StatefulSet",
                "name": "web", "uid": "u", "controller": true}]},
        "spec": {
            "containers": [{"name": "main", "image": "nginx"}],
            // The recorded zone replaces the pod's own; "rack" was not recorded.
            "nodeSelector": {"disk": "ssd", ZONE: "zone-a"},
            "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 5, "preference": {"matchExpressions": [{"key": "gpu", "operator": "Exists"}]}},
                {"weight": 80, "preference": {"matchExpressions": [
                    {"key": HOST, "operator": "In", "values": ["node-a"]}]}},
                {"weight": 10, "preference": {}},
            ]}},
        },
    }))
    .unwrap();
    assert_eq!(created, expected);
}

#[test]
fn a_bare_pod_gets_the_maps_created() {
    let state = persistent_state(
        "web",
        &web_target(),
        json!({"preferredPersistentTopology": [{"weight": 100, "preference": {"nodeTopologyKeys": [ZONE]}}]}),
    );
    let mut created: Pod = serde_json::from_value(json!({
        "metadata": {"name": "web-0", "ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1",
            "kind": "StatefulSet", "name": "web", "uid": "u", "controller": true}]},
        "spec": {"containers": []},
    }))
    .unwrap();
    assert_eq!(inject(&mut created, [&state]).as_deref(), Some("web"));
    let spec = created.spec.unwrap();
    assert_eq!(
        spec.node_selector, None,
        "no required topology, no selector"
    );
    let preferred = spec
        .affinity
        .and_then(|affinity| affinity.node_affinity)
        .and_then(|node| node.preferred_during_scheduling_ignored_during_execution)
        .unwrap_or_default();
    assert_eq!(preferred.len(), 1);
    assert_eq!(
        created.metadata.annotations.unwrap_or_default()[INJECTED_ANNOTATION],
        "web"
    );
}

#[test]
fn pods_without_a_usable_record_or_owner_are_left_alone() {
    let state = persistent_state("web-state", &web_target(), both_topologies());
    let mut deleting = state.clone();
    deleting.metadata.deletion_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        ));
    let no_topology = persistent_state("bare", &web_target(), json!({}));
    let rows: [(&str, Pod, &PersistentPodState); 7] = [
        (
            "another workload",
            pod("web-0", "apps/v1", "StatefulSet", "db"),
            &state,
        ),
        (
            "another group",
            pod("web-0", "apps/v1", "StatefulSet", "web"),
            &state,
        ),
        (
            "not a StatefulSet",
            pod("web-0", "apps.kruise.io/v1alpha1", "CloneSet", "web"),
            &state,
        ),
        (
            "no record",
            pod("web-2", "apps.kruise.io/v1beta1", "StatefulSet", "web"),
            &state,
        ),
        (
            "a record without labels",
            pod("web-1", "apps.kruise.io/v1beta1", "StatefulSet", "web"),
            &state,
        ),
        (
            "being deleted",
            pod("web-0", "apps.kruise.io/v1beta1", "StatefulSet", "web"),
            &deleting,
        ),
        (
            "no topology in the spec",
            pod("web-0", "apps.kruise.io/v1beta1", "StatefulSet", "web"),
            &no_topology,
        ),
    ];
    for (why, original, candidate) in rows {
        let mut created = original.clone();
        assert_eq!(inject(&mut created, [candidate]), None, "{why}");
        assert_eq!(created, original, "{why}");
    }
}

#[test]
fn the_first_matching_state_is_chosen() {
    let other = persistent_state(
        "db-state",
        &json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web"}),
        both_topologies(),
    );
    let first = persistent_state("first", &web_target(), both_topologies());
    let second = persistent_state("second", &web_target(), both_topologies());
    let workload = owner_workload(&pod(
        "web-0",
        "apps.kruise.io/v1beta1",
        "StatefulSet",
        "web",
    ))
    .unwrap();
    let chosen = select([&other, &first, &second], &workload)
        .and_then(|state| state.metadata.name.as_deref());
    assert_eq!(chosen, Some("first"));
}

#[test]
fn placement_reads_only_recorded_keys() {
    let state = persistent_state("s", &web_target(), both_topologies());
    let record = &state.status.as_ref().unwrap().pod_states["web-0"];
    let made = placement(&state.spec, record);
    assert_eq!(
        made.node_selector,
        Some(BTreeMap::from([(ZONE.to_owned(), "zone-a".to_owned())]))
    );
    assert_eq!(made.preferred.len(), 2);
    assert!(!made.is_empty());
    let empty = placement(&PersistentPodStateSpec::default(), record);
    assert!(empty.is_empty());
}
