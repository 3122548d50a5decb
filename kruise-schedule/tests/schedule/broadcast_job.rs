//! BroadcastJob decisions (upstream `pkg/controller/broadcastjob`), table by table.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::needless_pass_by_value
)]

use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1::{BroadcastJob, JobConditionType};
use kruise_schedule::broadcast_job::{PlanInput, PodState, is_finished, new_pod, plan, pods};
use serde_json::{Value, json};

fn now() -> Timestamp {
    "2024-05-01T00:10:00Z".parse().unwrap()
}

fn job(spec: Value, status: Value) -> BroadcastJob {
    let mut full =
        json!({"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]});
    if let Some(extra) = spec.pointer("/template/spec").and_then(Value::as_object) {
        for (key, value) in extra {
            full[key] = value.clone();
        }
    }
    let mut spec = spec;
    spec["template"] = json!({"metadata": {"labels": {"app": "bcj"}}, "spec": full});
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "BroadcastJob",
        "metadata": {"name": "bcj", "namespace": "ns", "uid": "u-1"},
        "spec": spec, "status": status
    }))
    .unwrap()
}

fn node(name: &str, extra: Value) -> Node {
    let mut node = json!({"metadata": {"name": name, "labels": {"zone": "a"}}});
    if let Some(spec) = extra.get("spec") {
        node["spec"] = spec.clone();
    }
    if let Some(labels) = extra.get("labels") {
        node["metadata"]["labels"] = labels.clone();
    }
    serde_json::from_value(node).unwrap()
}

fn nodes(names: &[&str]) -> Vec<Node> {
    names.iter().map(|name| node(name, json!({}))).collect()
}

fn pod(name: &str, node: &str, phase: &str, restarts: i32) -> Pod {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"nodeName": node, "restartPolicy": "OnFailure", "containers": [{"name": "main"}]},
        "status": {"phase": phase, "containerStatuses": [{"name": "main", "image": "busybox",
            "imageID": "", "ready": phase == "Running", "restartCount": restarts}]}
    }))
    .unwrap()
}

#[test]
fn one_pod_per_eligible_node() {
    let candidates = vec![
        node("a", json!({})),
        node(
            "b",
            json!({"spec": {"taints": [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]}}),
        ),
        node("c", json!({"spec": {"unschedulable": true}})),
        node("d", json!({"labels": {"zone": "b"}})),
        node(
            "e",
            json!({"spec": {"taints": [{"key": "team", "effect": "NoExecute"}]}}),
        ),
        node(
            "f",
            json!({"spec": {"taints": [{"key": "soft", "effect": "PreferNoSchedule"}]}}),
        ),
    ];
    let job = job(
        json!({"template": {"spec": {"nodeSelector": {"zone": "a"},
            "tolerations": [{"key": "team", "operator": "Exists"}]}}}),
        json!({}),
    );
    let plan = plan(&PlanInput::new(&job, &[], &candidates, now()));
    assert_eq!(plan.create_on, ["a", "e", "f"]);
    assert_eq!(plan.status.desired, 3);
    assert_eq!(plan.status.active, 3);
    assert_eq!(plan.status.phase.as_str(), "running");
    assert_eq!(plan.status.start_time.unwrap().0, now());
    assert!(plan.status.conditions.is_empty());
}

#[test]
fn unschedulable_nodes_fit_when_the_cordon_is_tolerated() {
    let job = job(
        json!({"template": {"spec": {"tolerations": [
            {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]}}}),
        json!({}),
    );
    let plan = plan(&PlanInput::new(
        &job,
        &[],
        &[node("c", json!({"spec": {"unschedulable": true}}))],
        now(),
    ));
    assert_eq!(plan.create_on, ["c"]);
}

#[test]
fn required_node_affinity_limits_the_nodes() {
    let job = job(
        json!({"template": {"spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}}}}),
        json!({}),
    );
    let plan = plan(&PlanInput::new(&job, &[], &nodes(&["a", "b", "c"]), now()));
    assert_eq!(plan.create_on, ["b"]);
    assert_eq!(plan.status.desired, 1);
}

#[test]
fn parallelism_limits_creations() {
    for (parallelism, existing, expected) in [
        (json!(2), vec![], vec!["a", "b"]),
        (json!("50%"), vec![], vec!["a", "b"]),
        (json!("30%"), vec![], vec!["a", "b"]), // 1.2 rounds up
        (json!(2), vec![pod("p-a", "a", "Running", 0)], vec!["b"]),
        (
            json!(2),
            vec![pod("p-a", "a", "Running", 0), pod("p-b", "b", "Running", 0)],
            vec![],
        ),
        (json!(1), vec![pod("p-a", "a", "Succeeded", 0)], vec!["b"]),
        (json!("bad"), vec![], vec![]),
    ] {
        let job = job(json!({"parallelism": parallelism}), json!({}));
        let plan = plan(&PlanInput::new(
            &job,
            &existing,
            &nodes(&["a", "b", "c", "d"]),
            now(),
        ));
        assert_eq!(plan.create_on, expected, "parallelism {parallelism}");
    }
}

#[test]
fn completes_when_every_node_ran_its_pod() {
    let job = job(
        json!({"completionPolicy": {"ttlSecondsAfterFinished": 30}}),
        json!({"startTime": "2024-05-01T00:00:00Z", "phase": "running"}),
    );
    let pods = [
        pod("p-a", "a", "Succeeded", 0),
        pod("p-b", "b", "Succeeded", 0),
    ];
    let plan = plan(&PlanInput::new(&job, &pods, &nodes(&["a", "b"]), now()));
    assert!(plan.create_on.is_empty());
    assert_eq!(plan.status.phase.as_str(), "completed");
    assert_eq!(plan.status.succeeded, 2);
    assert_eq!(plan.status.active, 0);
    let condition = &plan.status.conditions[0];
    assert_eq!(condition.type_, JobConditionType::Complete);
    assert_eq!(condition.status, "True");
    assert_eq!(condition.reason, "Complete");
    assert_eq!(plan.status.completion_time.as_ref().unwrap().0, now());
    assert_eq!(plan.requeue_after, Some(Duration::from_secs(31)));
    assert_eq!(plan.events[0].reason, "JobComplete");
}

#[test]
fn running_pods_keep_it_running() {
    let job = job(json!({}), json!({}));
    let pods = [
        pod("p-a", "a", "Succeeded", 0),
        pod("p-b", "b", "Running", 0),
    ];
    let plan = plan(&PlanInput::new(&job, &pods, &nodes(&["a", "b"]), now()));
    assert!(plan.status.conditions.is_empty());
    assert_eq!(plan.status.active, 1);
    assert_eq!(plan.status.succeeded, 1);
}

#[test]
fn completion_policy_never_never_completes() {
    let job = job(json!({"completionPolicy": {"type": "Never"}}), json!({}));
    let pods = [pod("p-a", "a", "Succeeded", 0)];
    let first = plan(&PlanInput::new(&job, &pods, &nodes(&["a"]), now()));
    assert!(first.status.conditions.is_empty());
    assert_eq!(first.status.phase.as_str(), "running");
    // A node that joins later still gets a pod.
    let later = plan(&PlanInput::new(&job, &pods, &nodes(&["a", "z"]), now()));
    assert_eq!(later.create_on, ["z"]);
}

#[test]
fn fail_fast_fails_the_job_and_deletes_active_pods() {
    let job = job(json!({}), json!({}));
    let pods = [pod("p-a", "a", "Failed", 0), pod("p-b", "b", "Running", 0)];
    let plan = plan(&PlanInput::new(
        &job,
        &pods,
        &nodes(&["a", "b", "c"]),
        now(),
    ));
    assert_eq!(plan.status.phase.as_str(), "failed");
    assert_eq!(plan.delete, ["p-b"]);
    assert!(plan.create_on.is_empty());
    assert_eq!(plan.status.failed, 1);
    assert_eq!(plan.status.conditions[0].type_, JobConditionType::Failed);
    assert_eq!(plan.status.conditions[0].reason, "Failed");
    assert!(plan.events[0].warning);
}

#[test]
fn continue_ignores_failures_and_completes() {
    let job = job(json!({"failurePolicy": {"type": "Continue"}}), json!({}));
    let pods = [
        pod("p-a", "a", "Failed", 0),
        pod("p-b", "b", "Succeeded", 0),
    ];
    let plan = plan(&PlanInput::new(&job, &pods, &nodes(&["a", "b"]), now()));
    assert_eq!(plan.status.phase.as_str(), "completed");
    assert_eq!(plan.status.failed, 1);
    assert_eq!(plan.status.succeeded, 1);
}

#[test]
fn pause_policy_pauses_the_job() {
    let job = job(json!({"failurePolicy": {"type": "Pause"}}), json!({}));
    let pods = [pod("p-a", "a", "Failed", 0)];
    let plan = plan(&PlanInput::new(&job, &pods, &nodes(&["a", "b"]), now()));
    assert!(plan.pause);
    assert_eq!(plan.status.phase.as_str(), "paused");
    assert!(plan.create_on.is_empty());
}

#[test]
fn paused_jobs_create_nothing_and_resume() {
    let paused = job(json!({"paused": true}), json!({"phase": "running"}));
    let plan_paused = plan(&PlanInput::new(&paused, &[], &nodes(&["a"]), now()));
    assert_eq!(plan_paused.status.phase.as_str(), "paused");
    assert!(plan_paused.create_on.is_empty());
    let resumed = job(json!({}), json!({"phase": "paused"}));
    let plan_resumed = plan(&PlanInput::new(&resumed, &[], &nodes(&["a"]), now()));
    assert_eq!(plan_resumed.status.phase.as_str(), "running");
    assert_eq!(plan_resumed.create_on, ["a"]);
}

#[test]
fn restarts_beyond_the_limit_count_as_failed() {
    let within = pod("p", "a", "Running", 2);
    let beyond = pod("p", "a", "Running", 3);
    assert_eq!(pods::state(&within, 2), PodState::Active);
    assert_eq!(pods::state(&beyond, 2), PodState::Failed);
    let mut never = beyond.clone();
    never.spec.as_mut().unwrap().restart_policy = Some("Never".into());
    assert_eq!(pods::state(&never, 2), PodState::Active);

    let job = job(json!({"failurePolicy": {"restartLimit": 2}}), json!({}));
    let plan = plan(&PlanInput::new(&job, &[beyond], &nodes(&["a"]), now()));
    assert_eq!(plan.status.phase.as_str(), "failed");
    assert_eq!(plan.delete, ["p"], "the crash-looping pod is deleted");
}

#[test]
fn active_deadline() {
    let job_with = |start: &str| {
        job(
            json!({"completionPolicy": {"activeDeadlineSeconds": 60}}),
            json!({"startTime": start}),
        )
    };
    let running = [pod("p-a", "a", "Running", 0)];
    let early = plan(&PlanInput::new(
        &job_with("2024-05-01T00:09:30Z"),
        &running,
        &nodes(&["a"]),
        now(),
    ));
    assert_eq!(early.requeue_after, Some(Duration::from_secs(30)));
    assert!(early.status.conditions.is_empty());
    let late = plan(&PlanInput::new(
        &job_with("2024-05-01T00:09:00Z"),
        &running,
        &nodes(&["a"]),
        now(),
    ));
    assert_eq!(late.status.phase.as_str(), "failed");
    assert_eq!(late.status.conditions[0].reason, "DeadlineExceeded");
    assert_eq!(late.delete, ["p-a"]);
}

#[test]
fn finished_jobs_wait_for_their_ttl_then_go() {
    let finished = |completed: &str| {
        job(
            json!({"completionPolicy": {"ttlSecondsAfterFinished": 60}}),
            json!({"phase": "completed", "completionTime": completed,
                "conditions": [{"type": "Complete", "status": "True"}]}),
        )
    };
    let waiting = finished("2024-05-01T00:09:30Z");
    assert!(is_finished(&waiting));
    let plan_waiting = plan(&PlanInput::new(&waiting, &[], &nodes(&["a"]), now()));
    assert!(!plan_waiting.delete_job);
    assert!(plan_waiting.create_on.is_empty());
    assert_eq!(plan_waiting.requeue_after, Some(Duration::from_secs(31)));
    let expired = plan(&PlanInput::new(
        &finished("2024-05-01T00:09:00Z"),
        &[],
        &nodes(&["a"]),
        now(),
    ));
    assert!(expired.delete_job);
}

#[test]
fn active_pods_on_nodes_that_no_longer_fit_are_deleted() {
    let job = job(json!({}), json!({}));
    let pods = [
        pod("p-gone", "gone", "Running", 0),
        pod("p-done", "old", "Succeeded", 0),
    ];
    let plan = plan(&PlanInput::new(&job, &pods, &nodes(&["a"]), now()));
    assert_eq!(plan.delete, ["p-gone"]);
    assert_eq!(plan.create_on, ["a"]);
}

#[test]
fn new_pods_are_pinned_and_labelled() {
    let job = job(json!({}), json!({}));
    let pod = new_pod(&job, "node-7", "apps.kruise.io/v1beta1");
    assert_eq!(pod.metadata.name.as_deref(), Some("bcj-node-7"));
    assert_eq!(pod.metadata.generate_name, None);
    let long = new_pod(&job, &"n".repeat(250), "apps.kruise.io/v1beta1");
    assert_eq!(long.metadata.name, None);
    assert_eq!(long.metadata.generate_name.as_deref(), Some("bcj-"));
    assert_eq!(pod.metadata.namespace.as_deref(), Some("ns"));
    let labels = pod.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["broadcastjob-name"], "bcj");
    assert_eq!(labels["broadcastjob-controller-uid"], "u-1");
    assert_eq!(labels["app"], "bcj");
    assert_eq!(
        pod.spec.as_ref().unwrap().node_name.as_deref(),
        Some("node-7")
    );
    assert_eq!(pods::node_of(&pod), Some("node-7"));
    let owner = &pod.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(owner.kind, "BroadcastJob");
    assert_eq!(owner.uid, "u-1");
    assert_eq!(owner.controller, Some(true));
}
