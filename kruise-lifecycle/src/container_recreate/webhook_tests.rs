#![allow(clippy::needless_pass_by_value)] // table helpers take owned JSON values

use serde_json::{Value, json};

use super::*;

fn crr(spec: Value) -> ContainerRecreateRequest {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "ContainerRecreateRequest",
        "metadata": {"name": "r", "namespace": "ns"},
        "spec": spec,
    }))
    .unwrap()
}

fn pod(phase: &str, node: &str) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "ns", "uid": "uid-1"},
        "spec": {"nodeName": node, "terminationGracePeriodSeconds": 20, "containers": [
            {"name": "app", "ports": [{"name": "http", "containerPort": 80}],
             "lifecycle": {"preStop": {"httpGet": {"path": "/quit", "port": "http"}}}},
            {"name": "log", "lifecycle": {"preStop": {"exec": {"command": ["sh", "-c", "sleep 1"]}}}},
            {"name": "new"},
        ]},
        "status": {"phase": phase, "containerStatuses": [
            {"name": "app", "containerID": "containerd://a", "restartCount": 1, "ready": true, "image": "x", "imageID": ""},
            {"name": "log", "containerID": "containerd://l", "restartCount": 0, "ready": true, "image": "x", "imageID": ""},
            {"name": "new", "restartCount": 0, "ready": false, "image": "x", "imageID": ""},
        ]},
    }))
    .unwrap()
}

fn rejected(spec: Value, pod: Option<&Pod>) -> String {
    let mut request = crr(spec);
    default_on_create(&mut request, pod, None)
        .unwrap_err()
        .message
}

#[test]
fn defaults_and_injection() {
    let mut request =
        crr(json!({"podName": "web", "containers": [{"name": "app"}, {"name": "log"}]}));
    default_on_create(&mut request, Some(&pod("Running", "node-0")), None).unwrap();
    let value = serde_json::to_value(&request).unwrap();
    assert_eq!(
        value["metadata"]["labels"],
        json!({"crr.apps.kruise.io/active": "true", "crr.apps.kruise.io/node-name": "node-0",
            "crr.apps.kruise.io/pod-uid": "uid-1"})
    );
    assert_eq!(
        value["spec"]["strategy"],
        json!({"failurePolicy": "Fail", "terminationGracePeriodSeconds": 20})
    );
    assert_eq!(
        value["spec"]["containers"],
        json!([
            {"name": "app", "preStop": {"httpGet": {"path": "/quit", "port": "http"}},
             "ports": [{"name": "http", "containerPort": 80}],
             "statusContext": {"containerID": "containerd://a", "restartCount": 1}},
            {"name": "log", "preStop": {"exec": {"command": ["sh", "-c", "sleep 1"]}},
             "statusContext": {"containerID": "containerd://l", "restartCount": 0}},
        ])
    );
    let mut again = request.clone();
    again.spec.containers.iter_mut().for_each(|c| {
        c.pre_stop = None;
        c.ports.clear();
        c.status_context = None;
    });
    default_on_create(&mut again, Some(&pod("Running", "node-0")), None).unwrap();
    assert_eq!(again, request, "the same pod gives the same request");
}

#[test]
fn set_strategy_values_are_kept_and_virtual_kubelet_is_copied() {
    let mut request = crr(json!({"podName": "web", "containers": [{"name": "log"}],
        "strategy": {"failurePolicy": "Ignore", "terminationGracePeriodSeconds": 0, "orderedRecreate": true}}));
    let node = BTreeMap::from([("type".to_owned(), "virtual-kubelet".to_owned())]);
    default_on_create(&mut request, Some(&pod("Running", "vk-0")), Some(&node)).unwrap();
    let strategy = request.spec.strategy.as_ref().unwrap();
    assert_eq!(strategy.failure_policy, Some(FailurePolicy::Ignore));
    assert_eq!(strategy.termination_grace_period_seconds, Some(0));
    assert_eq!(
        request.metadata.labels.as_ref().unwrap()["type"],
        "virtual-kubelet"
    );
}

#[test]
fn rejections_table() {
    let running = pod("Running", "node-0");
    let succeeded = pod("Succeeded", "node-0");
    let pending = pod("Pending", "");
    let app = json!([{"name": "app"}]);
    let cases: Vec<(Value, Option<&Pod>, &str)> = vec![
        (
            json!({"podName": "", "containers": app}),
            Some(&running),
            "podName can not be empty",
        ),
        (
            json!({"podName": "web", "containers": []}),
            Some(&running),
            "containers list can not be null",
        ),
        (
            json!({"podName": "web", "containers": app, "activeDeadlineSeconds": 2}),
            Some(&running),
            "activeDeadlineSeconds can not be less than 3s",
        ),
        (
            json!({"podName": "web", "containers": app, "strategy": {"terminationGracePeriodSeconds": -1}}),
            Some(&running),
            "terminationGracePeriodSeconds must be non-negative integer",
        ),
        (
            json!({"podName": "web", "containers": app, "strategy": {"unreadyGracePeriodSeconds": -1}}),
            Some(&running),
            "unreadyGracePeriodSeconds must be non-negative integer",
        ),
        (
            json!({"podName": "web", "containers": app, "strategy": {"failurePolicy": "Retry"}}),
            Some(&running),
            "unknown failurePolicy Retry",
        ),
        (
            json!({"podName": "web", "containers": app}),
            None,
            "no found Pod named web",
        ),
        (
            json!({"podName": "web", "containers": app}),
            Some(&succeeded),
            "not allowed to recreate containers in an inactive Pod",
        ),
        (
            json!({"podName": "web", "containers": app}),
            Some(&pending),
            "not allowed to recreate containers in a pending Pod",
        ),
        (
            json!({"podName": "web", "containers": [{"name": "app"}, {"name": "app"}]}),
            Some(&running),
            "can not recreate app multi times",
        ),
        (
            json!({"podName": "web", "containers": [{"name": "app", "statusContext": {"containerID": "x", "restartCount": 0}}]}),
            Some(&running),
            "preStop, ports, statusContext in container are ready-only fields",
        ),
        (
            json!({"podName": "web", "containers": [{"name": "ghost"}]}),
            Some(&running),
            "container ghost not found in Pod",
        ),
        (
            json!({"podName": "web", "containers": [{"name": "new"}]}),
            Some(&running),
            "no containerID in new containerStatus, maybe the container has not been initialized",
        ),
    ];
    for (spec, pod, message) in cases {
        assert_eq!(rejected(spec.clone(), pod), message, "{spec}");
    }
}

#[test]
fn a_pod_terminated_by_the_sidecar_terminator_is_accepted() {
    let mut finished = pod("Succeeded", "node-0");
    finished.status.as_mut().unwrap().conditions =
        Some(vec![k8s_openapi::api::core::v1::PodCondition {
            type_: SIDECAR_TERMINATED_CONDITION.into(),
            status: "True".into(),
            ..Default::default()
        }]);
    let mut request = crr(json!({"podName": "web", "containers": [{"name": "log"}]}));
    assert!(default_on_create(&mut request, Some(&finished), None).is_ok());
}

#[test]
fn updates_keep_the_spec_and_identity() {
    let mut old = crr(json!({"podName": "web", "containers": [{"name": "app"}]}));
    default_on_create(&mut old, Some(&pod("Running", "node-0")), None).unwrap();
    let mut new = old.clone();
    new.metadata
        .labels
        .as_mut()
        .unwrap()
        .remove(keys::ACTIVE_LABEL);
    assert!(check_update(&old, &new).is_ok(), "the active label may go");
    new.spec.active_deadline_seconds = Some(60);
    assert_eq!(
        check_update(&old, &new).unwrap_err(),
        forbidden("spec of ContainerRecreateRequest is immutable")
    );
    let mut moved = old.clone();
    moved
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert(keys::NODE_NAME_LABEL.into(), "elsewhere".into());
    assert_eq!(check_update(&old, &moved).unwrap_err().code, 403);
    let mut acquired = old.clone();
    acquired.metadata.annotations = Some(
        [(
            keys::UNREADY_ACQUIRED_KEY.to_owned(),
            "2024-05-01T10:00:00Z".to_owned(),
        )]
        .into(),
    );
    assert!(
        check_update(&old, &acquired).is_ok(),
        "setting it is allowed"
    );
    let mut changed = acquired.clone();
    changed.metadata.annotations = Some(
        [(
            keys::UNREADY_ACQUIRED_KEY.to_owned(),
            "2024-05-01T11:00:00Z".to_owned(),
        )]
        .into(),
    );
    assert!(check_update(&acquired, &changed).is_err());
}
