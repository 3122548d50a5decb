use serde_json::{Value, json};

use super::*;
use crate::united_deployment::allocation::allocate_with;
use crate::united_deployment::workload::{SubsetCounts, WorkloadKind};

fn time(seconds: i64) -> Time {
    Time(k8s_openapi::jiff::Timestamp::from_second(seconds).unwrap())
}

/// An Adaptive UnitedDeployment (critical 10 s, duration 60 s) with the previous subset conditions given.
fn ud(previous: &Value) -> UnitedDeployment {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {
            "replicas": 4, "selector": {},
            "topology": {
                "subsets": [{"name": "a", "maxReplicas": 4}, {"name": "b", "minReplicas": 0}],
                "scheduleStrategy": {"type": "Adaptive", "adaptive": {
                    "rescheduleCriticalSeconds": 10, "unschedulableDuration": 60}}}
        },
        "status": {"subsetStatuses": [{"name": "a", "conditions": previous}]}
    }))
    .unwrap()
}

fn observed(replicas: i32, ready: i32) -> ObservedSubset {
    ObservedSubset {
        kind: WorkloadKind::CloneSet,
        name: "web-a".to_owned(),
        subset: Some("a".to_owned()),
        revision: String::new(),
        patch: None,
        replicas,
        partition: 0,
        counts: SubsetCounts {
            replicas,
            ready,
            updated: 0,
            updated_ready: 0,
        },
        status_current: true,
        deleting: false,
        created: 0,
    }
}

fn pod(created: i64, unschedulable: bool) -> PodSchedule {
    PodSchedule {
        created_ms: Some(created * 1000),
        unschedulable,
        ..PodSchedule::default()
    }
}

fn decide(
    previous: &Value,
    workload: ObservedSubset,
    pods: Vec<PodSchedule>,
    now: i64,
) -> Schedulability {
    let subsets = BTreeMap::from([("a".to_owned(), workload)]);
    let pods = BTreeMap::from([("a".to_owned(), pods)]);
    schedulability(&ud(previous), &subsets, &pods, &time(now))
}

fn marked(since: i64) -> Value {
    json!([{"type": "Schedulable", "status": "False", "reason": "reschedule",
        "lastTransitionTime": format!("1970-01-01T00:{:02}:{:02}Z", since / 60, since % 60)}])
}

#[test]
fn pods_unschedulable_past_the_critical_time_make_the_subset_unschedulable() {
    // (case, workload (replicas, ready), pods (created, unschedulable), now, pending, unschedulable, recheck)
    let table = [
        (
            "timed out",
            (2, 0),
            vec![pod(0, true), pod(0, true)],
            10,
            2,
            true,
            Some(60),
        ),
        (
            "one of two timed out",
            (2, 0),
            vec![pod(0, true), pod(5, true)],
            12,
            1,
            true,
            Some(3),
        ),
        (
            "not yet",
            (2, 0),
            vec![pod(0, true), pod(0, true)],
            9,
            0,
            false,
            Some(1),
        ),
        (
            "scheduled pods",
            (2, 0),
            vec![pod(0, false), pod(0, false)],
            30,
            0,
            false,
            None,
        ),
        (
            "all ready",
            (2, 2),
            vec![pod(0, true), pod(0, true)],
            30,
            0,
            false,
            None,
        ),
        ("no pods listed", (2, 0), vec![], 30, 0, false, None),
    ];
    for (case, (replicas, ready), pods, now, pending, unschedulable, recheck) in table {
        let decided = decide(&json!([]), observed(replicas, ready), pods, now);
        let subset = &decided.subsets["a"];
        assert_eq!(subset.pending, pending, "{case}");
        assert_eq!(subset.running, replicas - pending, "{case}");
        assert_eq!(subset.unschedulable, unschedulable, "{case}");
        assert_eq!(
            decided.recheck_after,
            recheck.map(Duration::from_secs),
            "{case}"
        );
        let condition = subset.conditions.first();
        if unschedulable {
            let condition = condition.unwrap();
            assert_eq!(
                (condition.status.as_str(), condition.reason.as_str()),
                ("False", "reschedule"),
                "{case}"
            );
            assert_eq!(condition.last_transition_time, Some(time(now)), "{case}");
        } else {
            assert!(condition.is_none(), "{case}: {condition:?}");
        }
    }
}

#[test]
fn a_marked_subset_stays_unschedulable_for_the_duration_then_recovers() {
    // (case, marked at, now, unschedulable, condition status and reason, transition, recheck)
    let table = [
        (
            "within the duration",
            10,
            40,
            true,
            ("False", "reschedule"),
            10,
            Some(30),
        ),
        ("at its end", 10, 70, false, ("True", "recover"), 70, None),
        ("long after", 10, 500, false, ("True", "recover"), 500, None),
    ];
    for (case, since, now, unschedulable, (status, reason), transition, recheck) in table {
        let decided = decide(&marked(since), observed(2, 2), vec![pod(0, false)], now);
        let subset = &decided.subsets["a"];
        assert_eq!(subset.unschedulable, unschedulable, "{case}");
        assert_eq!(subset.running, 2, "{case}");
        let condition = subset.conditions.first().unwrap();
        assert_eq!(
            (condition.status.as_str(), condition.reason.as_str()),
            (status, reason),
            "{case}"
        );
        assert_eq!(
            condition.last_transition_time,
            Some(time(transition)),
            "{case}"
        );
        assert_eq!(
            decided.recheck_after,
            recheck.map(Duration::from_secs),
            "{case}"
        );
    }
}

#[test]
fn still_pending_pods_keep_the_mark_and_its_time_and_renew_it_after_recovery() {
    let pods = vec![pod(0, true)];
    let within = decide(&marked(10), observed(1, 0), pods.clone(), 40);
    let condition = within.subsets["a"].conditions.first().unwrap();
    assert_eq!(
        condition.last_transition_time,
        Some(time(10)),
        "the mark keeps its time"
    );
    let after = decide(&marked(10), observed(1, 0), pods, 80);
    let condition = after.subsets["a"].conditions.first().unwrap();
    assert_eq!(condition.status, "False");
    assert_eq!(
        condition.last_transition_time,
        Some(time(80)),
        "recovered, then marked again"
    );
    assert!(after.subsets["a"].unschedulable);
}

#[test]
fn pods_are_read_as_unschedulable_only_when_pending_unplaced_and_refused() {
    let refused = json!([{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]);
    // (case, pod, unschedulable)
    let table = [
        (
            "refused",
            json!({"status": {"phase": "Pending", "conditions": refused}}),
            true,
        ),
        (
            "placed",
            json!({"spec": {"nodeName": "n1", "containers": []},
            "status": {"phase": "Pending", "conditions": refused}}),
            false,
        ),
        (
            "running",
            json!({"status": {"phase": "Running", "conditions": refused}}),
            false,
        ),
        (
            "not refused",
            json!({"status": {"phase": "Pending", "conditions": [
            {"type": "PodScheduled", "status": "False", "reason": "SchedulerError"}]}}),
            false,
        ),
        (
            "deleting",
            json!({"metadata": {"deletionTimestamp": "1970-01-01T00:00:05Z"},
            "status": {"phase": "Pending", "conditions": refused}}),
            false,
        ),
    ];
    for (case, value, unschedulable) in table {
        let mut value = value;
        value["metadata"]["name"] = json!("p");
        value["metadata"]["creationTimestamp"] = json!("1970-01-01T00:00:03Z");
        let pod: Pod = serde_json::from_value(value).unwrap();
        let read = PodSchedule::of(&pod);
        assert_eq!(read.unschedulable, unschedulable, "{case}");
        assert_eq!(read.created_ms, Some(3000), "{case}");
    }
}

#[test]
fn pods_are_read_with_their_name_readiness_and_reserved_label() {
    let ready = json!([{"type": "Ready", "status": "True"}]);
    let not_ready = json!([{"type": "Ready", "status": "False"}]);
    let label = "apps.kruise.io/united-deployment-reserved-pod";
    // (case, labels, conditions, ready, reserved label)
    let table = [
        ("no label, ready", json!({}), ready.clone(), true, None),
        (
            "labelled true",
            json!({label: "true"}),
            not_ready.clone(),
            false,
            Some(true),
        ),
        (
            "labelled false",
            json!({label: "false"}),
            ready,
            true,
            Some(false),
        ),
        (
            "labelled other",
            json!({label: "yes"}),
            not_ready,
            false,
            Some(false),
        ),
    ];
    for (case, labels, conditions, ready, reserved_label) in table {
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "labels": labels},
            "status": {"phase": "Running", "conditions": conditions}}))
        .unwrap();
        let read = PodSchedule::of(&pod);
        assert_eq!(read.name, "p", "{case}");
        assert_eq!(read.ready, ready, "{case}");
        assert_eq!(read.reserved_label, reserved_label, "{case}");
        assert!(!read.deleting, "{case}");
    }
}

#[test]
fn the_elastic_allocation_caps_unschedulable_subsets_and_keeps_running_pods() {
    let spec = ud(&json!([])).spec;
    let decided = |unschedulable: bool, running: i32| SubsetSchedulability {
        unschedulable,
        pending: 0,
        reserved: 0,
        workload_replicas: running,
        running,
        conditions: Vec::new(),
    };
    let pairs = |a: i32, b: i32| BTreeMap::from([("a".to_owned(), a), ("b".to_owned(), b)]);
    // (case, decision of a, decision of b, allocation)
    let table = [
        ("no decision", None, None, pairs(4, 0)),
        ("a schedulable", Some(decided(false, 4)), None, pairs(4, 0)),
        (
            "a unschedulable, nothing runs",
            Some(decided(true, 0)),
            None,
            pairs(0, 4),
        ),
        (
            "a unschedulable, one runs",
            Some(decided(true, 1)),
            None,
            pairs(1, 3),
        ),
        (
            "b keeps its running pods",
            Some(decided(false, 0)),
            Some(decided(false, 3)),
            pairs(1, 3),
        ),
    ];
    for (case, a, b, expected) in table {
        let mut subsets = BTreeMap::new();
        subsets.extend(a.map(|a| ("a".to_owned(), a)));
        subsets.extend(b.map(|b| ("b".to_owned(), b)));
        let allocated = allocate_with(&spec, &BTreeMap::new(), Some(&subsets)).unwrap();
        assert_eq!(allocated, expected, "{case}");
    }
}
