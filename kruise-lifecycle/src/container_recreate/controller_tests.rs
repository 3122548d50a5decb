#![allow(clippy::needless_pass_by_value)] // table helpers take owned JSON values

use serde_json::{Value, json};

use super::*;

fn ts(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn crr(metadata: Value, spec: Value, status: Value) -> ContainerRecreateRequest {
    let mut meta = json!({"name": "r", "namespace": "ns", "creationTimestamp": "2024-05-01T10:00:00Z",
        "labels": {"crr.apps.kruise.io/pod-uid": "uid-1", "crr.apps.kruise.io/active": "true"}});
    if let (Some(meta), Some(extra)) = (meta.as_object_mut(), metadata.as_object()) {
        meta.extend(extra.clone());
    }
    let mut full_spec = json!({"podName": "web", "containers": [{"name": "app"}, {"name": "log"}]});
    if let (Some(full), Some(extra)) = (full_spec.as_object_mut(), spec.as_object()) {
        full.extend(extra.clone());
    }
    serde_json::from_value(json!({"metadata": meta, "spec": full_spec, "status": status})).unwrap()
}

fn pod(gated: bool, statuses: Value) -> Pod {
    let gates = if gated {
        json!([{"conditionType": "KruisePodReady"}])
    } else {
        json!([])
    };
    serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "ns", "uid": "uid-1"},
        "spec": {"containers": [{"name": "app"}, {"name": "log"}], "readinessGates": gates},
        "status": {"containerStatuses": statuses},
    }))
    .unwrap()
}

fn running(name: &str, id: &str, started: &str, ready: bool) -> Value {
    json!({"name": name, "containerID": id, "restartCount": 1, "ready": ready, "image": "x", "imageID": "",
        "state": {"running": {"startedAt": started}}})
}

#[test]
fn completed_requests_release_then_lose_the_label_then_expire() {
    let now = ts("2024-05-01T10:10:00Z");
    let done = json!({"phase": "Completed", "completionTime": "2024-05-01T10:05:00Z"});
    let held = crr(
        json!({"finalizers": ["crr.apps.kruise.io/unready-acquired"]}),
        json!({"ttlSecondsAfterFinished": 600}),
        done.clone(),
    );
    assert_eq!(
        decide(&held, Some(&pod(true, json!([]))), now).actions,
        [
            Action::ReleaseNotReady { remove_key: true },
            Action::RemoveActiveLabel
        ]
    );
    assert_eq!(
        decide(&held, Some(&pod(false, json!([]))), now).actions[0],
        Action::ReleaseNotReady { remove_key: false }
    );
    assert_eq!(
        decide(&held, None, now).actions[0],
        Action::ReleaseNotReady { remove_key: false },
        "the finalizer goes even when the pod is gone"
    );
    let mut inactive = crr(
        json!({}),
        json!({"ttlSecondsAfterFinished": 600}),
        done.clone(),
    );
    inactive
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .remove(keys::ACTIVE_LABEL);
    let plan = decide(&inactive, None, now);
    assert_eq!(
        (plan.actions.len(), plan.requeue_after),
        (0, Some(Duration::from_secs(300)))
    );
    assert_eq!(
        decide(&inactive, None, ts("2024-05-01T10:15:00Z")).actions,
        [Action::Delete]
    );
    let mut no_ttl = inactive.clone();
    no_ttl.spec.ttl_seconds_after_finished = None;
    assert_eq!(decide(&no_ttl, None, now), Plan::default());

    let mut deleting = held.clone();
    deleting.metadata.deletion_timestamp = Some(Time(now));
    assert_eq!(
        decide(&deleting, Some(&pod(true, json!([]))), now).actions,
        [Action::ReleaseNotReady { remove_key: true }],
        "a deleting request only releases"
    );
}

#[test]
fn requests_whose_pod_went_away_complete() {
    let now = ts("2024-05-01T10:00:05Z");
    let request = crr(json!({}), json!({}), json!({"phase": "Recreating"}));
    let gone = [Action::Complete("pod has gone".into())];
    assert_eq!(decide(&request, None, now).actions, gone);
    let mut replaced = pod(false, json!([]));
    replaced.metadata.uid = Some("uid-2".into());
    assert_eq!(decide(&request, Some(&replaced), now).actions, gone);
    let mut deleting = pod(false, json!([]));
    deleting.metadata.deletion_timestamp = Some(Time(now));
    assert_eq!(decide(&request, Some(&deleting), now).actions, gone);
}

#[test]
fn timeouts() {
    let fresh = crr(
        json!({}),
        json!({"activeDeadlineSeconds": 30}),
        json!({"phase": ""}),
    );
    let plan = decide(
        &fresh,
        Some(&pod(false, json!([]))),
        ts("2024-05-01T10:00:20Z"),
    );
    assert_eq!(
        (plan.actions.len(), plan.requeue_after),
        (0, Some(Duration::from_secs(10))),
        "the sooner of the daemon's 60 s and the 30 s deadline"
    );
    assert_eq!(
        decide(
            &fresh,
            Some(&pod(false, json!([]))),
            ts("2024-05-01T10:00:40Z")
        )
        .actions,
        [Action::Complete(
            "recreating has exceeded the activeDeadlineSeconds".into()
        )]
    );
    let silent = crr(json!({}), json!({}), json!({"phase": ""}));
    assert_eq!(
        decide(
            &silent,
            Some(&pod(false, json!([]))),
            ts("2024-05-01T10:01:00Z")
        )
        .actions,
        [Action::Complete(
            "daemon has not responded for a long time".into()
        )]
    );
    let pending = crr(json!({}), json!({}), json!({"phase": "Pending"}));
    assert_eq!(
        decide(
            &pending,
            Some(&pod(false, json!([]))),
            ts("2024-05-01T10:05:00Z")
        ),
        Plan::default(),
        "a Pending request waits for the daemon without a deadline"
    );
}

#[test]
fn recreating_requests_sync_the_snapshot() {
    let now = ts("2024-05-01T10:00:30Z");
    let request = crr(json!({}), json!({}), json!({"phase": "Recreating"}));
    let statuses = json!([
        running("app", "containerd://a1", "2024-05-01T10:00:10Z", true),
        running("log", "containerd://l0", "2024-05-01T09:00:00Z", true),
    ]);
    let plan = decide(&request, Some(&pod(false, statuses.clone())), now);
    let expected = vec![ContainerStatusSnapshot {
        name: "app".into(),
        ready: true,
        restart_count: 1,
        container_id: "containerd://a1".into(),
    }];
    assert_eq!(plan.actions, [Action::SyncSnapshot(expected.clone())]);
    assert_eq!(plan.requeue_after, Some(RECREATING_RESYNC));

    let synced = crr(
        json!({}),
        json!({}),
        json!({"phase": "Recreating", "containerStatusSnapshot": expected}),
    );
    assert!(
        decide(&synced, Some(&pod(false, statuses)), now)
            .actions
            .is_empty()
    );
    let stopped = json!([{"name": "app", "restartCount": 1, "ready": false, "image": "x", "imageID": "",
        "state": {"terminated": {"exitCode": 137}}}]);
    assert!(
        decide(&synced, Some(&pod(false, stopped)), now)
            .actions
            .is_empty(),
        "the last snapshot stays while nothing runs"
    );
}

#[test]
fn the_unready_grace_is_acquired_once() {
    let now = ts("2024-05-01T10:00:30Z");
    let request = crr(
        json!({"generation": 1}),
        json!({"strategy": {"unreadyGracePeriodSeconds": 3}}),
        json!({"phase": "Recreating"}),
    );
    let plan = decide(&request, Some(&pod(true, json!([]))), now);
    let [
        Action::AcquireNotReady {
            has_gate,
            condition,
        },
    ] = plan.actions.as_slice()
    else {
        panic!("{:?}", plan.actions)
    };
    assert!(*has_gate);
    assert_eq!(
        (
            condition.type_.as_str(),
            condition.status.as_str(),
            condition.last_transition_time.0
        ),
        ("PreRecreateGrace", "True", now)
    );
    assert!(matches!(
        decide(&request, Some(&pod(false, json!([]))), now)
            .actions
            .as_slice(),
        [Action::AcquireNotReady {
            has_gate: false,
            ..
        }]
    ));
    let mut acquired = request.clone();
    acquired.status.as_mut().unwrap().conditions = vec![condition.clone()];
    assert!(
        decide(&acquired, Some(&pod(true, json!([]))), now)
            .actions
            .is_empty()
    );
    assert_eq!(
        not_ready_entry(&request),
        not_ready::container_recreate_request_entry("ns", "r")
    );
}
