#![allow(clippy::needless_pass_by_value)] // table helpers take owned JSON values

use serde_json::{Value, json};

use super::*;

fn ts(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn node_image(tags: Value, statuses: Value) -> NodeImage {
    serde_json::from_value(json!({
        "metadata": {"name": "n0", "labels": {"zone": "a"}},
        "spec": {"images": {"app": {"tags": tags}}},
        "status": {"desired": 0, "succeeded": 0, "failed": 0, "pulling": 0, "waiting": 0,
            "imageStatuses": {"app": {"tags": statuses}}},
    }))
    .unwrap()
}

fn owner(uid: &str) -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob", "namespace": "ns", "name": "job", "uid": uid})
}

#[test]
fn creation_waits_for_a_ready_node() {
    let node: Node = serde_json::from_value(json!({"metadata": {"name": "n0"},
        "status": {"conditions": [{"type": "Ready", "status": "False"}]}}))
    .unwrap();
    assert_eq!(
        creation(&node, ts("2024-05-01T10:00:00Z"), DEFAULT_CREATION_DELAY),
        Creation::NotReady
    );
    assert_eq!(
        creation(&Node::default(), ts("2024-05-01T10:00:00Z"), Duration::ZERO),
        Creation::NotReady
    );
}

#[test]
fn spec_cleanup_table() {
    let now = ts("2024-05-01T10:10:00Z");
    let jobs: LiveJobs = [(("ns".to_owned(), "job".to_owned()), "uid-1".to_owned())].into();
    let labels = BTreeMap::from([("zone".to_owned(), "a".to_owned())]);
    let keep = json!([{"tag": "v1", "createdAt": "2024-05-01T10:00:00Z", "ownerReferences": [owner("uid-1")]}]);
    let unchanged = clean_spec(
        &node_image(keep.clone(), json!([])),
        Some(&labels),
        &jobs,
        now,
    );
    assert_eq!(unchanged, SpecChange::default());

    let relabelled = clean_spec(
        &node_image(keep, json!([])),
        Some(&BTreeMap::from([("zone".to_owned(), "b".to_owned())])),
        &jobs,
        now,
    );
    assert_eq!(relabelled.labels.unwrap()["zone"], "b");
    assert!(relabelled.images.is_none());

    let tags = json!([
        {"tag": "a", "createdAt": "2024-05-01T10:00:00Z", "ownerReferences": [owner("uid-1"), owner("old")]},
        {"tag": "b"},
        {"tag": "c", "createdAt": "2024-05-01T10:00:00Z", "ownerReferences": [owner("gone")]},
        {"tag": "d", "createdAt": "2024-05-01T10:00:00Z", "pullPolicy": {"ttlSecondsAfterFinished": 60}},
        {"tag": "e", "createdAt": "2024-05-01T10:00:00Z", "pullPolicy": {"ttlSecondsAfterFinished": 600},
         "ownerReferences": [{"kind": "CloneSet", "name": "x"}]},
    ]);
    let statuses = json!([
        {"tag": "d", "phase": "Succeeded", "completionTime": "2024-05-01T10:01:00Z"},
        {"tag": "e", "phase": "Succeeded", "completionTime": "2024-05-01T10:05:00Z"},
    ]);
    let change = clean_spec(&node_image(tags, statuses), Some(&labels), &jobs, now);
    let images = change.images.unwrap();
    let kept: Vec<(&str, usize)> = images["app"]
        .tags
        .iter()
        .map(|tag| (tag.tag.as_str(), tag.owner_references.len()))
        .collect();
    assert_eq!(
        kept,
        [("a", 1), ("e", 1)],
        "b: no createdAt; c: owner gone; d: TTL over; e: not a job"
    );
    assert_eq!(change.requeue_after, Some(Duration::from_secs(300)));

    let empty = clean_spec(
        &node_image(json!([{"tag": "b"}]), json!([])),
        None,
        &jobs,
        now,
    );
    assert!(
        empty.images.unwrap().is_empty(),
        "an image without tags goes"
    );
}

#[test]
fn silent_and_overdue_pulls_fail() {
    let tags = json!([
        {"tag": "new", "createdAt": "2024-05-01T10:05:00Z", "version": 1},
        {"tag": "silent", "createdAt": "2024-05-01T09:00:00Z", "version": 1},
        {"tag": "slow", "createdAt": "2024-05-01T09:00:00Z", "version": 1,
         "pullPolicy": {"activeDeadlineSeconds": 60}},
        {"tag": "done", "createdAt": "2024-05-01T09:00:00Z", "version": 1},
    ]);
    let statuses = json!([
        {"tag": "silent", "phase": "Pulling", "version": 0},
        {"tag": "slow", "phase": "Pulling", "version": 1},
        {"tag": "done", "phase": "Succeeded", "version": 1, "completionTime": "2024-05-01T09:01:00Z"},
        {"tag": "dropped", "phase": "Succeeded"},
    ]);
    let now = ts("2024-05-01T10:10:00Z");
    let (status, requeue) = refresh_status(&node_image(tags, statuses), now);
    let status = status.unwrap();
    let phases: Vec<(&str, &str, &str)> = status.image_statuses["app"]
        .tags
        .iter()
        .map(|tag| (tag.tag.as_str(), tag.phase.as_str(), tag.message.as_str()))
        .collect();
    assert_eq!(
        phases,
        [
            ("done", "Succeeded", ""),
            ("silent", "Failed", "node has not responded for a long time"),
            (
                "slow",
                "Failed",
                "pulling exceeds the activeDeadlineSeconds"
            ),
        ]
    );
    assert_eq!(
        (
            status.desired,
            status.succeeded,
            status.failed,
            status.pulling,
            status.waiting
        ),
        (4, 1, 2, 0, 1)
    );
    assert_eq!(
        requeue,
        Some(Duration::from_secs(300)),
        "the new tag's response timeout"
    );

    let quiet = node_image(
        json!([{"tag": "done", "createdAt": "2024-05-01T09:00:00Z", "version": 1}]),
        json!([{"tag": "done", "phase": "Succeeded", "version": 1, "completionTime": "2024-05-01T09:01:00Z"}]),
    );
    assert_eq!(refresh_status(&quiet, now), (None, None));
}
