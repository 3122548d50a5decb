//! Table tests: for each rule, a row where it applies and a row where it does not.

use super::request::{self, EphemeralApi, Refusal};
use super::*;
use serde_json::{Value, json};

const NOW: &str = "2024-05-01T00:10:00Z";

fn now() -> Timestamp {
    NOW.parse().unwrap()
}

fn job(spec: Value, status: Value) -> EphemeralJob {
    let mut full = json!({"selector": {"matchLabels": {"app": "web"}},
        "template": {"ephemeralContainers": [{"name": "sh", "image": "busybox"}]}});
    if let Value::Object(fields) = spec {
        for (key, value) in fields {
            full[key] = value;
        }
    }
    let mut value = json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "EphemeralJob",
        "metadata": {"name": "debug", "namespace": "default", "uid": "u-1"},
    });
    value["spec"] = full;
    value["status"] = status;
    serde_json::from_value(value).unwrap()
}

/// A running pod `name` created at minute `minute`, with extra pod JSON merged at the top level.
fn pod(name: &str, minute: u32, extra: Value) -> Pod {
    let mut value = json!({
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"},
            "creationTimestamp": format!("2024-05-01T00:{minute:02}:00Z")},
        "spec": {"containers": [{"name": "main", "image": "nginx"}]},
        "status": {"phase": "Running"}
    });
    if let Value::Object(parts) = extra {
        for (key, part) in parts {
            if let Value::Object(fields) = part {
                for (field, inner) in fields {
                    value[&key][field] = inner;
                }
            }
        }
    }
    serde_json::from_value(value).unwrap()
}

fn own(uid: &str) -> Value {
    json!({"ephemeralContainers": [{"name": "sh", "image": "busybox",
        "env": [{"name": "KRUISE_EJOB_ID", "value": uid}]}]})
}

fn injected(state: Value) -> Value {
    let mut value = json!({"spec": own("u-1"),
        "status": {"ephemeralContainerStatuses": [{"name": "sh", "image": "busybox", "imageID": "",
            "ready": false, "restartCount": 0}]}});
    value["status"]["ephemeralContainerStatuses"][0]["state"] = state;
    value
}

fn running() -> Value {
    injected(json!({"running": {"startedAt": "2024-05-01T00:05:00Z"}}))
}

fn exited(code: i32) -> Value {
    injected(json!({"terminated": {"exitCode": code, "finishedAt": "2024-05-01T00:06:00Z"}}))
}

fn run(job: &EphemeralJob, pods: &[Pod]) -> Plan {
    plan(&PlanInput::new(job, pods, now()))
}

fn has_condition(plan: &Plan, type_: &str, reason: &str) -> bool {
    plan.status
        .conditions
        .iter()
        .any(|c| c.type_.as_str() == type_ && c.reason == reason && c.status == "True")
}

#[test]
fn targets_follow_selector_activity_conflicts_replicas_and_age() {
    let rows: Vec<(&str, EphemeralJob, Vec<Pod>, Vec<&str>)> = vec![
        (
            "oldest first, then by name",
            job(json!({"parallelism": 5}), Value::Null),
            vec![
                pod("c", 1, json!({})),
                pod("b", 2, json!({})),
                pod("a", 2, json!({})),
            ],
            vec!["c", "a", "b"],
        ),
        (
            "other labels and namespaces are left out",
            job(json!({"parallelism": 5}), Value::Null),
            vec![
                pod("a", 1, json!({"metadata": {"labels": {"app": "db"}}})),
                pod("b", 1, json!({"metadata": {"namespace": "other"}})),
                pod("c", 1, json!({})),
            ],
            vec!["c"],
        ),
        (
            "finished and deleting pods are left out",
            job(json!({"parallelism": 5}), Value::Null),
            vec![
                pod("a", 1, json!({"status": {"phase": "Succeeded"}})),
                pod(
                    "b",
                    1,
                    json!({"metadata": {"deletionTimestamp": "2024-05-01T00:00:00Z"}}),
                ),
                pod("c", 1, json!({"status": {"phase": "Pending"}})),
            ],
            vec!["c"],
        ),
        (
            "a same-named container of someone else is a conflict; ours is not",
            job(json!({"parallelism": 5}), Value::Null),
            vec![
                pod("a", 1, json!({"spec": own("other")})),
                pod("b", 2, json!({"spec": own("u-1")})),
            ],
            vec!["b"],
        ),
        (
            "replicas caps the targets",
            job(json!({"parallelism": 5, "replicas": 2}), Value::Null),
            vec![
                pod("a", 1, json!({})),
                pod("b", 2, json!({})),
                pod("c", 3, json!({})),
            ],
            vec!["a", "b"],
        ),
        (
            "without replicas every matching pod is a target",
            job(json!({"parallelism": 5}), Value::Null),
            vec![
                pod("a", 1, json!({})),
                pod("b", 2, json!({})),
                pod("c", 3, json!({})),
            ],
            vec!["a", "b", "c"],
        ),
    ];
    for (name, job, pods, expected) in rows {
        let targets: Vec<&str> = target_pods(&job, &pods)
            .unwrap()
            .iter()
            .map(|pod| pod.metadata.name.as_deref().unwrap())
            .collect();
        assert_eq!(targets, expected, "{name}");
        assert_eq!(
            run(&job, &pods).status.matches,
            expected.len() as i32,
            "{name}"
        );
    }
}

#[test]
fn injections_respect_parallelism_injected_pods_pause_and_deadline() {
    let three = || {
        vec![
            pod("a", 1, json!({})),
            pod("b", 2, json!({})),
            pod("c", 3, json!({})),
        ]
    };
    let rows: Vec<(&str, EphemeralJob, Vec<Pod>, Vec<&str>)> = vec![
        (
            "default parallelism is 1",
            job(json!({}), Value::Null),
            three(),
            vec!["a"],
        ),
        (
            "parallelism 2",
            job(json!({"parallelism": 2}), Value::Null),
            three(),
            vec!["a", "b"],
        ),
        (
            "a running injected pod takes a slot",
            job(json!({"parallelism": 2}), Value::Null),
            vec![
                pod("a", 1, running()),
                pod("b", 2, json!({})),
                pod("c", 3, json!({})),
            ],
            vec!["b"],
        ),
        (
            "an injected pod whose container waits takes a slot",
            job(json!({"parallelism": 1}), Value::Null),
            vec![
                pod("a", 1, json!({"spec": own("u-1")})),
                pod("b", 2, json!({})),
            ],
            vec![],
        ),
        (
            "a finished injected pod frees its slot and is not injected again",
            job(json!({"parallelism": 1}), Value::Null),
            vec![pod("a", 1, exited(0)), pod("b", 2, json!({}))],
            vec!["b"],
        ),
        (
            "paused injects nothing",
            job(json!({"paused": true}), Value::Null),
            three(),
            vec![],
        ),
        (
            "past the deadline injects nothing",
            job(
                json!({"activeDeadlineSeconds": 60}),
                json!({"startTime": "2024-05-01T00:00:00Z"}),
            ),
            three(),
            vec![],
        ),
        (
            "before the deadline injects",
            job(
                json!({"activeDeadlineSeconds": 3600}),
                json!({"startTime": "2024-05-01T00:00:00Z"}),
            ),
            three(),
            vec!["a"],
        ),
        (
            "an empty template injects nothing",
            job(
                json!({"template": {"ephemeralContainers": []}}),
                Value::Null,
            ),
            three(),
            vec![],
        ),
    ];
    for (name, job, pods, expected) in rows {
        assert_eq!(run(&job, &pods).inject, expected, "{name}");
    }
}

#[test]
fn status_counts_phase_and_conditions() {
    struct Row {
        name: &'static str,
        job: EphemeralJob,
        pods: Vec<Pod>,
        counts: [i32; 5],
        phase: &'static str,
        condition: Option<(&'static str, &'static str)>,
        completed: bool,
    }
    let rows = vec![
        Row {
            name: "no pod: waiting, MatchedEmpty",
            job: job(json!({}), Value::Null),
            pods: vec![],
            counts: [0, 0, 0, 0, 0],
            phase: "Waiting",
            condition: Some(("MatchedEmpty", "MatchEmpty")),
            completed: false,
        },
        Row {
            name: "pods not injected yet are waiting",
            job: job(json!({}), Value::Null),
            pods: vec![pod("a", 1, json!({})), pod("b", 1, json!({}))],
            counts: [2, 0, 0, 2, 0],
            phase: "Waiting",
            condition: Some(("Initialized", "Initialized")),
            completed: false,
        },
        Row {
            name: "one running: Running",
            job: job(json!({}), Value::Null),
            pods: vec![pod("a", 1, running()), pod("b", 1, json!({}))],
            counts: [2, 1, 0, 1, 0],
            phase: "Running",
            condition: None,
            completed: false,
        },
        Row {
            name: "all succeeded: Succeeded, completed",
            job: job(json!({}), Value::Null),
            pods: vec![pod("a", 1, exited(0)), pod("b", 1, exited(0))],
            counts: [2, 0, 2, 0, 0],
            phase: "Succeeded",
            condition: Some(("JobSucceeded", "JobSucceeded")),
            completed: true,
        },
        Row {
            name: "one failed, all finished: Failed",
            job: job(json!({}), Value::Null),
            pods: vec![pod("a", 1, exited(0)), pod("b", 1, exited(2))],
            counts: [2, 0, 1, 0, 1],
            phase: "Failed",
            condition: Some(("JobFailed", "JobFailed")),
            completed: true,
        },
        Row {
            name: "RunContainerError counts as failed",
            job: job(json!({}), Value::Null),
            pods: vec![
                pod(
                    "a",
                    1,
                    injected(json!({"waiting": {"reason": "RunContainerError"}})),
                ),
                pod("b", 1, json!({})),
            ],
            counts: [2, 0, 0, 1, 1],
            phase: "Waiting",
            condition: Some(("JobFailed", "ContainerFailed")),
            completed: false,
        },
        Row {
            name: "paused",
            job: job(json!({"paused": true}), Value::Null),
            pods: vec![pod("a", 1, running())],
            counts: [1, 1, 0, 0, 0],
            phase: "Paused",
            condition: None,
            completed: false,
        },
        Row {
            name: "past the deadline: Failed, DeadlineExceeded",
            job: job(
                json!({"activeDeadlineSeconds": 60}),
                json!({"startTime": "2024-05-01T00:00:00Z"}),
            ),
            pods: vec![pod("a", 1, running())],
            counts: [1, 1, 0, 0, 0],
            phase: "Failed",
            condition: Some(("JobFailed", "DeadlineExceeded")),
            completed: true,
        },
        Row {
            name: "empty template: Error",
            job: job(
                json!({"template": {"ephemeralContainers": []}}),
                Value::Null,
            ),
            pods: vec![pod("a", 1, json!({}))],
            counts: [1, 0, 0, 1, 0],
            phase: "Error",
            condition: Some(("JobError", "Error")),
            completed: false,
        },
        Row {
            name: "invalid selector: Error",
            job: job(
                json!({"selector": {"matchExpressions": [{"key": "app", "operator": "In"}]}}),
                Value::Null,
            ),
            pods: vec![pod("a", 1, json!({}))],
            counts: [0, 0, 0, 0, 0],
            phase: "Error",
            condition: Some(("JobError", "InvalidSelector")),
            completed: false,
        },
    ];
    for row in rows {
        let plan = run(&row.job, &row.pods);
        let s = &plan.status;
        assert_eq!(
            [s.matches, s.running, s.succeeded, s.waiting, s.failed],
            row.counts,
            "{}",
            row.name
        );
        assert_eq!(s.phase.as_str(), row.phase, "{}", row.name);
        if let Some((type_, reason)) = row.condition {
            assert!(
                has_condition(&plan, type_, reason),
                "{}: {:?}",
                row.name,
                s.conditions
            );
        }
        assert_eq!(s.completion_time.is_some(), row.completed, "{}", row.name);
        let given_start = row.job.status.as_ref().and_then(|s| s.start_time.clone());
        assert_eq!(
            s.start_time,
            Some(given_start.unwrap_or(Time(now()))),
            "{}",
            row.name
        );
    }
}

#[test]
fn ttl_deletes_a_finished_job_only_once_it_is_over() {
    let finished = |ttl: Value, completed: &str| {
        job(
            json!({"ttlSecondsAfterFinished": ttl}),
            json!({"completionTime": completed, "phase": "Succeeded"}),
        )
    };
    let rows = [
        (
            "ttl 60, finished 2 minutes ago",
            finished(json!(60), "2024-05-01T00:08:00Z"),
            true,
            None,
        ),
        (
            "ttl 600, finished 2 minutes ago",
            finished(json!(600), "2024-05-01T00:08:00Z"),
            false,
            Some(480),
        ),
        (
            "ttl 0 deletes at once",
            finished(json!(0), "2024-05-01T00:10:00Z"),
            true,
            None,
        ),
        (
            "unset ttl is 1800",
            finished(Value::Null, "2024-05-01T00:08:00Z"),
            false,
            Some(1680),
        ),
    ];
    for (name, job, delete, requeue) in rows {
        let plan = run(&job, &[pod("a", 1, json!({}))]);
        assert_eq!(plan.delete_job, delete, "{name}");
        assert_eq!(
            plan.requeue_after,
            requeue.map(Duration::from_secs),
            "{name}"
        );
        assert!(plan.inject.is_empty(), "{name}");
    }
}

#[test]
fn deadline_requeues_at_the_remaining_time() {
    let with_deadline = job(
        json!({"activeDeadlineSeconds": 900}),
        json!({"startTime": "2024-05-01T00:00:00Z"}),
    );
    assert_eq!(
        run(&with_deadline, &[]).requeue_after,
        Some(Duration::from_secs(300))
    );
    assert_eq!(run(&job(json!({}), Value::Null), &[]).requeue_after, None);
}

#[test]
fn an_unchanged_condition_keeps_its_times() {
    let first = run(&job(json!({}), Value::Null), &[]);
    let mut again = job(json!({}), serde_json::to_value(&first.status).unwrap());
    // The next reconcile is later; nothing changed, so the status must be identical (no write, no loop).
    let later: Timestamp = "2024-05-01T00:20:00Z".parse().unwrap();
    let second = plan(&PlanInput::new(&again, &[], later));
    assert_eq!(second.status, first.status);
    // A changed message is a new observation with new times.
    again.status.as_mut().unwrap().conditions[1].message = "old".into();
    let third = plan(&PlanInput::new(&again, &[], later));
    assert_eq!(
        third.status.conditions[1].last_transition_time,
        Some(Time(later))
    );
}

#[test]
fn marked_containers_carry_the_job_id_once() {
    let job = job(
        json!({"template": {"ephemeralContainers": [
            {"name": "sh", "image": "busybox", "env": [{"name": "A", "value": "1"}]},
            {"name": "probe", "image": "curl", "env": [{"name": "KRUISE_EJOB_ID", "value": "stale"}]}]}}),
        Value::Null,
    );
    let containers = request::marked_containers(&job);
    assert_eq!(
        serde_json::to_value(&containers).unwrap(),
        json!([
            {"name": "sh", "image": "busybox",
                "env": [{"name": "A", "value": "1"}, {"name": "KRUISE_EJOB_ID", "value": "u-1"}]},
            {"name": "probe", "image": "curl", "env": [{"name": "KRUISE_EJOB_ID", "value": "u-1"}]}
        ])
    );
    assert!(
        containers
            .iter()
            .all(|c| containers::is_marked_by(c, "u-1"))
    );
    assert!(
        !containers
            .iter()
            .any(|c| containers::is_marked_by(c, "u-2"))
    );
}

#[test]
fn request_bodies_for_both_apis() {
    let containers = request::marked_containers(&job(json!({}), Value::Null));
    let expected_container = json!({"name": "sh", "image": "busybox",
        "env": [{"name": "KRUISE_EJOB_ID", "value": "u-1"}]});
    assert_eq!(
        request::patch_body(EphemeralApi::Pod, &containers),
        json!({"spec": {"ephemeralContainers": [expected_container.clone()]}})
    );
    assert_eq!(
        request::patch_body(EphemeralApi::Alpha, &containers),
        json!({"ephemeralContainers": [expected_container]})
    );
}

#[test]
fn server_versions_pick_the_shape() {
    let rows = [
        ("1", "20", Some(EphemeralApi::Alpha)),
        ("1", "16", Some(EphemeralApi::Alpha)),
        ("1", "22+", Some(EphemeralApi::Alpha)),
        ("1", "23", Some(EphemeralApi::Pod)),
        ("1", "30+", Some(EphemeralApi::Pod)),
        ("1", "15", None),
        ("1", "", None),
        ("x", "20", None),
    ];
    for (major, minor, expected) in rows {
        assert_eq!(
            EphemeralApi::for_server(major, minor),
            expected,
            "{major}.{minor}"
        );
    }
}

#[test]
fn refusals_are_classified() {
    let rows = [
        (
            404,
            "the server could not find the requested resource",
            Refusal::NotEnabled,
        ),
        (405, "method not allowed", Refusal::NotEnabled),
        (
            400,
            "EphemeralContainers in version \"v1\" cannot be handled as a Pod",
            Refusal::OtherShape,
        ),
        (
            400,
            "spec.ephemeralContainers[0].image: Required value",
            Refusal::Other,
        ),
        (403, "forbidden", Refusal::Other),
        (409, "conflict", Refusal::Other),
    ];
    for (code, message, expected) in rows {
        assert_eq!(
            request::classify_refusal(code, message),
            expected,
            "{code} {message}"
        );
    }
}

#[test]
fn not_enabled_turns_the_status_into_an_error_once() {
    let mut status = run(&job(json!({}), Value::Null), &[pod("a", 1, json!({}))]).status;
    assert_eq!(status.phase.as_str(), "Waiting");
    record_not_enabled(
        &mut status,
        request::NOT_ENABLED_REASON,
        request::NOT_ENABLED_MESSAGE,
        now(),
    );
    assert_eq!(status.phase.as_str(), "Error");
    let before = status.clone();
    let later: Timestamp = "2024-05-01T01:00:00Z".parse().unwrap();
    record_not_enabled(
        &mut status,
        request::NOT_ENABLED_REASON,
        request::NOT_ENABLED_MESSAGE,
        later,
    );
    assert_eq!(status, before, "a repeated refusal changes nothing");
    assert!(status.conditions.iter().any(
        |c| c.type_.as_str() == "JobError" && c.message.contains("not enabled on this cluster")
    ));
}
