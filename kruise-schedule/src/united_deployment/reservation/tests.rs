use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::united_deployment::UnitedDeploymentError;
use crate::united_deployment::allocation::allocate_reserving;
use crate::united_deployment::workload::{SubsetCounts, WorkloadKind};

fn time(seconds: i64) -> Time {
    Time(k8s_openapi::jiff::Timestamp::from_second(seconds).unwrap())
}

/// An Adaptive UnitedDeployment reserving unschedulable pods (critical 10 s), with the given subsets and
/// the previous conditions of subset a.
fn ud(subsets: &Value, previous: &Value) -> UnitedDeployment {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1beta1", "kind": "UnitedDeployment",
        "metadata": {"name": "web", "namespace": "ns"},
        "spec": {
            "replicas": 4, "selector": {},
            "topology": {
                "subsets": subsets,
                "scheduleStrategy": {"type": "Adaptive", "adaptive": {
                    "rescheduleCriticalSeconds": 10, "reserveUnschedulablePods": true}}}
        },
        "status": {"subsetStatuses": [{"name": "a", "conditions": previous}]}
    }))
    .unwrap()
}

fn observed(replicas: i32) -> ObservedSubset {
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
            ready: 0,
            updated: 0,
            updated_ready: 0,
        },
        status_current: true,
        deleting: false,
        created: 0,
    }
}

/// A pod created at second 0: `(unschedulable, ready, deleting, label)`.
fn pod(name: &str, state: (bool, bool, bool, Option<bool>)) -> PodSchedule {
    let (unschedulable, ready, deleting, reserved_label) = state;
    PodSchedule {
        name: name.to_owned(),
        created_ms: Some(0),
        unschedulable,
        ready,
        deleting,
        reserved_label,
    }
}

#[test]
fn pods_are_reserved_after_the_critical_time_until_they_are_ready() {
    /// (case, pod state, now, reserved, relabel, recheck after)
    type Row = (
        &'static str,
        (bool, bool, bool, Option<bool>),
        i64,
        i32,
        Option<bool>,
        Option<u64>,
    );
    let table: [Row; 9] = [
        (
            "young unschedulable",
            (true, false, false, None),
            4,
            0,
            None,
            Some(6),
        ),
        (
            "timed out",
            (true, false, false, None),
            10,
            1,
            Some(true),
            None,
        ),
        (
            "timed out, labelled",
            (true, false, false, Some(true)),
            30,
            1,
            None,
            None,
        ),
        (
            "timed out, labelled false",
            (true, false, false, Some(false)),
            30,
            1,
            Some(true),
            None,
        ),
        (
            "labelled, bound, not ready",
            (false, false, false, Some(true)),
            30,
            1,
            None,
            None,
        ),
        (
            "labelled, ready",
            (false, true, false, Some(true)),
            30,
            0,
            Some(false),
            None,
        ),
        (
            "labelled, being deleted",
            (false, false, true, Some(true)),
            30,
            0,
            None,
            None,
        ),
        (
            "running, never reserved",
            (false, true, false, None),
            30,
            0,
            None,
            None,
        ),
        (
            "running, labelled false",
            (false, true, false, Some(false)),
            30,
            0,
            None,
            None,
        ),
    ];
    for (case, state, now, reserved, relabel, recheck) in table {
        let subsets = BTreeMap::from([("a".to_owned(), observed(1))]);
        let pods = BTreeMap::from([("a".to_owned(), vec![pod("a-1", state)])]);
        let decided = reservation(
            &ud(&json!([{"name": "a"}]), &json!([])),
            &subsets,
            &pods,
            &time(now),
        );
        let subset = &decided.subsets["a"];
        assert_eq!(subset.reserved, reserved, "{case}: reserved");
        assert_eq!(subset.unschedulable, reserved > 0, "{case}: unschedulable");
        assert_eq!(subset.running, 1 - reserved, "{case}: running");
        let expected: Vec<(String, bool)> = relabel
            .map(|value| ("a-1".to_owned(), value))
            .into_iter()
            .collect();
        assert_eq!(decided.relabel, expected, "{case}: relabel");
        assert_eq!(
            decided.recheck_after,
            recheck.map(Duration::from_secs),
            "{case}: recheck"
        );
        let condition = &subset.conditions[0];
        let wanted = if reserved > 0 { "False" } else { "True" };
        assert_eq!(condition.status, wanted, "{case}: condition");
        assert_eq!(condition.reason, "reschedule", "{case}: reason");
    }
}

#[test]
fn the_schedulable_condition_keeps_its_transition_time_while_unchanged() {
    let previous = json!([{"type": "Schedulable", "status": "False", "reason": "reschedule",
        "lastTransitionTime": "1970-01-01T00:00:05Z"}]);
    let subsets = BTreeMap::from([("a".to_owned(), observed(1))]);
    let reserved = BTreeMap::from([(
        "a".to_owned(),
        vec![pod("a-1", (true, false, false, Some(true)))],
    )]);
    let decided = reservation(
        &ud(&json!([{"name": "a"}]), &previous),
        &subsets,
        &reserved,
        &time(40),
    );
    let condition = &decided.subsets["a"].conditions[0];
    assert_eq!(condition.last_transition_time, Some(time(5)));
    let recovered = BTreeMap::from([(
        "a".to_owned(),
        vec![pod("a-1", (false, true, false, Some(true)))],
    )]);
    let decided = reservation(
        &ud(&json!([{"name": "a"}]), &previous),
        &subsets,
        &recovered,
        &time(40),
    );
    let condition = &decided.subsets["a"].conditions[0];
    assert_eq!(
        (
            condition.status.as_str(),
            condition.last_transition_time.clone()
        ),
        ("True", Some(time(40)))
    );
}

fn decided(unschedulable: bool, workload_replicas: i32, reserved: i32) -> SubsetSchedulability {
    SubsetSchedulability {
        unschedulable,
        pending: 0,
        reserved,
        workload_replicas,
        running: workload_replicas - reserved,
        conditions: Vec::new(),
    }
}

#[test]
fn reserved_pods_are_made_up_for_by_the_following_subsets() {
    type Row = (
        &'static str,
        Value,
        Vec<(&'static str, SubsetSchedulability)>,
        Result<Vec<(&'static str, i32)>, &'static str>,
    );
    let three = json!([{"name": "a"}, {"name": "b", "maxReplicas": 1}, {"name": "c"}]);
    let table: Vec<Row> = vec![
        (
            "no workloads: in order",
            three.clone(),
            vec![],
            Ok(vec![("a", 4), ("b", 0), ("c", 0)]),
        ),
        (
            "a reserves 2 of its 4",
            three.clone(),
            vec![("a", decided(true, 4, 2))],
            Ok(vec![("a", 4), ("b", 1), ("c", 1)]),
        ),
        (
            "a reserves all 4",
            three.clone(),
            vec![("a", decided(true, 4, 4))],
            Ok(vec![("a", 4), ("b", 1), ("c", 3)]),
        ),
        (
            "a recovered: the temporary pods go",
            three.clone(),
            vec![("a", decided(false, 4, 0)), ("b", decided(false, 1, 0))],
            Ok(vec![("a", 4), ("b", 0), ("c", 0)]),
        ),
        (
            "minimums first, reserved ones not counted",
            json!([{"name": "a", "minReplicas": 2}, {"name": "b", "minReplicas": 1}, {"name": "c"}]),
            vec![("a", decided(true, 2, 2))],
            Ok(vec![("a", 2), ("b", 4), ("c", 0)]),
        ),
        (
            "minimum above maximum",
            json!([{"name": "a", "minReplicas": 3, "maxReplicas": 2}]),
            vec![],
            Err("minReplicas 3 is above maxReplicas 2"),
        ),
        (
            "bad percentage",
            json!([{"name": "a", "maxReplicas": "half"}]),
            vec![],
            Err("spec.topology.subsets[0].maxReplicas"),
        ),
    ];
    for (case, subsets, decisions, expected) in table {
        let spec = ud(&subsets, &json!([])).spec;
        let decisions: BTreeMap<String, SubsetSchedulability> = decisions
            .into_iter()
            .map(|(name, decided)| (name.to_owned(), decided))
            .collect();
        let got = allocate_reserving(&spec, &decisions);
        match expected {
            Ok(pairs) => {
                let wanted: BTreeMap<String, i32> = pairs
                    .iter()
                    .map(|(name, n)| ((*name).to_owned(), *n))
                    .collect();
                assert_eq!(got, Ok(wanted), "{case}");
            }
            Err(text) => {
                let error: UnitedDeploymentError = got.unwrap_err();
                assert!(error.to_string().contains(text), "{case}: {error}");
            }
        }
    }
}
