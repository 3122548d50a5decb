#![allow(clippy::needless_pass_by_value)] // table helpers take owned JSON values

use serde_json::{Value, json};

use super::*;

fn ts(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn job(spec: Value, status: Value) -> ImagePullJob {
    let mut full =
        json!({"image": "127.0.0.1:5000/kruise-test/busybox:v2", "completionPolicy": {}});
    if let (Some(full), Some(extra)) = (full.as_object_mut(), spec.as_object()) {
        full.extend(extra.clone());
    }
    serde_json::from_value(json!({
        "metadata": {"name": "pull", "namespace": "ns", "uid": "job-uid"},
        "spec": full, "status": status,
    }))
    .unwrap()
}

const NAME: &str = "127.0.0.1:5000/kruise-test/busybox";

fn node_image(name: &str, tags: Value, statuses: Value) -> NodeImage {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"pool": if name.ends_with('0') { "a" } else { "b" }}},
        "spec": {"images": if tags.is_null() { json!({}) } else { json!({NAME: {"tags": tags}}) }},
        "status": {"desired": 0, "succeeded": 0, "failed": 0, "pulling": 0, "waiting": 0,
            "imageStatuses": if statuses.is_null() { json!({}) } else { json!({NAME: {"tags": statuses}}) }},
    }))
    .unwrap()
}

fn owned(version: i64) -> Value {
    json!([{"tag": "v2", "version": version, "ownerReferences": [{"uid": "job-uid", "name": "pull"}]}])
}

fn reported(version: i64, phase: &str) -> Value {
    json!([{"tag": "v2", "version": version, "phase": phase}])
}

#[test]
fn status_counts_each_node_once() {
    let now = ts("2024-05-01T10:00:30Z");
    let nodes = [
        node_image("n0", Value::Null, Value::Null),
        node_image("n1", owned(0), Value::Null),
        node_image("n2", owned(0), reported(0, "Pulling")),
        node_image("n3", owned(1), reported(0, "Succeeded")),
        node_image("n4", owned(0), reported(0, "Succeeded")),
        node_image("n5", owned(0), reported(0, "Failed")),
        node_image(
            "n6",
            json!([{"tag": "v2", "version": 0, "ownerReferences": [{"uid": "other"}]}]),
            Value::Null,
        ),
    ];
    let refs: Vec<&NodeImage> = nodes.iter().collect();
    let pull = job(json!({}), json!({"startTime": "2024-05-01T10:00:00Z"}));
    let (status, not_synced) = calculate_status(&pull, &refs, &[], now).unwrap();
    assert_eq!(not_synced, ["n0", "n6"]);
    assert_eq!(
        (
            status.desired,
            status.active,
            status.succeeded,
            status.failed
        ),
        (7, 3, 1, 1),
        "n1 (no report), n2 (pulling), n3 (an older version) are active"
    );
    assert_eq!(status.failed_nodes, ["n5"]);
    assert_eq!(status.message, "job is running, progress 28.6%");
    assert_eq!(status.start_time.unwrap().0, ts("2024-05-01T10:00:00Z"));
    assert!(status.completion_time.is_none());
}

#[test]
fn completion_and_the_deadline() {
    let now = ts("2024-05-01T10:00:30Z");
    let done = [
        node_image("n0", owned(0), reported(0, "Succeeded")),
        node_image("n1", owned(0), reported(0, "Failed")),
    ];
    let refs: Vec<&NodeImage> = done.iter().collect();
    let (status, _) = calculate_status(&job(json!({}), json!({})), &refs, &[], now).unwrap();
    assert_eq!(status.completion_time.unwrap().0, now);
    assert_eq!(status.message, "job has completed");
    assert_eq!(
        status.start_time.unwrap().0,
        now,
        "the first status starts the job"
    );
    let (forever, _) = calculate_status(
        &job(json!({"completionPolicy": {"type": "Never"}}), json!({})),
        &refs,
        &[],
        now,
    )
    .unwrap();
    assert!(forever.completion_time.is_none(), "Never never completes");

    let late = [
        node_image("n0", owned(0), reported(0, "Succeeded")),
        node_image("n1", Value::Null, Value::Null),
    ];
    let refs: Vec<&NodeImage> = late.iter().collect();
    let deadline = job(
        json!({"completionPolicy": {"activeDeadlineSeconds": 20}}),
        json!({"startTime": "2024-05-01T10:00:00Z"}),
    );
    let (status, not_synced) = calculate_status(&deadline, &refs, &[], now).unwrap();
    assert_eq!(
        (
            status.succeeded,
            status.failed,
            status.failed_nodes.clone(),
            status.message.as_str()
        ),
        (
            1,
            1,
            vec!["n1".to_owned()],
            "job exceeds activeDeadlineSeconds"
        )
    );
    assert!(not_synced.is_empty() && status.completion_time.is_some());
    assert_eq!(
        deadline_requeue(&deadline, &status, ts("2024-05-01T10:00:05Z")),
        Some(Duration::from_secs(15))
    );
    assert_eq!(deadline_requeue(&deadline, &status, now), Some(MIN_REQUEUE));
}

#[test]
fn missing_secrets_mean_not_synced() {
    let secret = ReferenceObject {
        namespace: "kruise-daemon-config".into(),
        name: "creds-abcde".into(),
        mode: "batch".into(),
    };
    let nodes = [node_image("n0", owned(0), reported(0, "Succeeded"))];
    let refs: Vec<&NodeImage> = nodes.iter().collect();
    let (_, not_synced) = calculate_status(
        &job(json!({}), json!({})),
        &refs,
        std::slice::from_ref(&secret),
        ts("2024-05-01T10:00:00Z"),
    )
    .unwrap();
    assert_eq!(not_synced, ["n0"]);
}

#[test]
fn syncing_adds_or_bumps_tags() {
    let now = ts("2024-05-01T10:00:00Z");
    let pull = job(
        json!({"imagePullPolicy": "Always", "sandboxConfig": {"labels": {"a": "b"}}}),
        json!({}),
    );
    let policy = tag_pull_policy(&pull, 7);
    let fresh = node_image("n0", Value::Null, reported(4, "Succeeded"));
    let (name, spec) = sync_node_image(&fresh, &pull, &[], &policy, now)
        .unwrap()
        .unwrap();
    assert_eq!(name, NAME);
    let tag = &spec.tags[0];
    assert_eq!(
        (tag.tag.as_str(), tag.version),
        ("v2", 5),
        "after the last reported version"
    );
    assert_eq!(tag.owner_references, [owner_reference(&pull)]);
    assert_eq!(
        tag.image_pull_policy,
        Some(kruise_api::apps::v1beta1::ImagePullPolicy::Always)
    );
    assert_eq!(spec.sandbox_config.unwrap().labels["a"], "b");

    let other = node_image(
        "n1",
        json!([{"tag": "v2", "version": 3, "ownerReferences": [{"uid": "other"}]}, {"tag": "a1", "version": 0}]),
        Value::Null,
    );
    let (_, spec) = sync_node_image(&other, &pull, &[], &policy, now)
        .unwrap()
        .unwrap();
    assert_eq!(
        spec.tags.iter().map(|t| t.tag.as_str()).collect::<Vec<_>>(),
        ["a1", "v2"],
        "sorted"
    );
    assert_eq!(spec.tags[1].version, 4);
    assert_eq!(spec.tags[1].owner_references.len(), 2);

    let synced = node_image(
        "n2",
        json!([{"tag": "v2", "version": 0, "ownerReferences": [owner_reference(&pull)]}]),
        Value::Null,
    );
    assert_eq!(
        sync_node_image(&synced, &pull, &[], &policy, now).unwrap(),
        None
    );
}

#[test]
fn pull_policies_and_parallelism() {
    let always = job(
        json!({"pullPolicy": {"timeoutSeconds": 100, "backoffLimit": 2}}),
        json!({}),
    );
    let policy = tag_pull_policy(&always, 1000);
    assert_eq!(
        policy.ttl_seconds_after_finished,
        Some(200 + 300 + 1000 % 300)
    );
    assert_eq!(
        (policy.timeout_seconds, policy.backoff_limit),
        (Some(100), Some(2))
    );
    let ttl = job(
        json!({"completionPolicy": {"ttlSecondsAfterFinished": 60, "activeDeadlineSeconds": 90}}),
        json!({}),
    );
    let policy = tag_pull_policy(&ttl, 0);
    assert_eq!(
        (
            policy.ttl_seconds_after_finished,
            policy.active_deadline_seconds
        ),
        (Some(360), Some(90))
    );
    let never = job(
        json!({"completionPolicy": {"type": "Never"}, "pullPolicy": {"timeoutSeconds": 3600}}),
        json!({}),
    );
    let policy = tag_pull_policy(&never, 1199);
    assert_eq!(policy.ttl_seconds_after_finished, Some(24 * 3600 + 599));
    assert_eq!(policy.active_deadline_seconds, Some(3600));

    assert_eq!(parallelism(&job(json!({}), json!({}))), 1);
    assert_eq!(parallelism(&job(json!({"parallelism": 3}), json!({}))), 3);
    assert_eq!(
        parallelism(&job(json!({"parallelism": "50%"}), json!({}))),
        0,
        "upstream's IntValue"
    );
    let status = ImagePullJobStatus {
        active: 1,
        ..ImagePullJobStatus::default()
    };
    assert_eq!(
        to_sync_now(&job(json!({"parallelism": 3}), json!({})), &status, 5),
        2
    );
    assert_eq!(to_sync_now(&job(json!({}), json!({})), &status, 5), 0);
    assert_eq!(
        to_sync_now(&job(json!({"parallelism": 9}), json!({})), &status, 2),
        2
    );
}

#[test]
fn targets_by_selector() {
    let nodes = [
        node_image("n0", Value::Null, Value::Null),
        node_image("n1", Value::Null, Value::Null),
        node_image("n2", Value::Null, Value::Null),
    ];
    let refs: Vec<&NodeImage> = nodes.iter().collect();
    assert_eq!(
        targets(&job(json!({}), json!({})), &refs, &[]).unwrap(),
        ["n0", "n1", "n2"]
    );
    assert_eq!(
        targets(
            &job(
                json!({"selector": {"names": ["n2", "gone", "n0"]}}),
                json!({})
            ),
            &refs,
            &[]
        )
        .unwrap(),
        ["n2", "n0"]
    );
    assert_eq!(
        targets(
            &job(
                json!({"selector": {"matchLabels": {"pool": "b"}}}),
                json!({})
            ),
            &refs,
            &[]
        )
        .unwrap(),
        ["n1", "n2"]
    );
    let pod = |name: &str, node: &str, phase: &str| -> Pod {
        serde_json::from_value(
            json!({"metadata": {"name": name, "namespace": "ns", "labels": {"app": "web"}},
            "spec": {"nodeName": node, "containers": []}, "status": {"phase": phase}}),
        )
        .unwrap()
    };
    let pods = [
        pod("b", "n2", "Running"),
        pod("a", "n2", "Running"),
        pod("c", "n1", "Succeeded"),
        pod("d", "", "Pending"),
    ];
    let pod_refs: Vec<&Pod> = pods.iter().collect();
    let by_pods = job(
        json!({"podSelector": {"matchLabels": {"app": "web"}}}),
        json!({}),
    );
    assert_eq!(targets(&by_pods, &refs, &pod_refs).unwrap(), ["n2"]);
    let bad = job(
        json!({"selector": {"matchExpressions": [{"key": "x", "operator": "Near"}]}}),
        json!({}),
    );
    assert!(targets(&bad, &refs, &[]).is_err());
}

#[test]
fn ttl_after_completion() {
    let finished = job(
        json!({"completionPolicy": {"ttlSecondsAfterFinished": 60}}),
        json!({"completionTime": "2024-05-01T10:00:00Z"}),
    );
    assert_eq!(
        after_completion(&finished, ts("2024-05-01T10:00:40Z")),
        Finished::Wait(Duration::from_secs(20))
    );
    assert_eq!(
        after_completion(&finished, ts("2024-05-01T10:01:00Z")),
        Finished::Delete
    );
    assert_eq!(
        after_completion(
            &job(json!({}), json!({"completionTime": "2024-05-01T10:00:00Z"})),
            ts("2030-01-01T00:00:00Z")
        ),
        Finished::Keep
    );
}
