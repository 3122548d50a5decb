use super::*;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + seconds).unwrap()
}

fn spread(strategy: &serde_json::Value, status: &serde_json::Value) -> WorkloadSpread {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": "ws", "namespace": "ns", "generation": 3},
        "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "subsets": [{"name": "a", "maxReplicas": "50%"}, {"name": "b"}],
            "scheduleStrategy": strategy},
        "status": status,
    }))
    .unwrap()
}

fn pod(name: &str, subset: &str, cost: Option<&str>, node: Option<&str>) -> Pod {
    let mut annotations = serde_json::json!({
        "apps.kruise.io/matched-workloadspread": format!("{{\"name\":\"ws\",\"subset\":\"{subset}\"}}")});
    if let Some(cost) = cost {
        annotations["controller.kubernetes.io/pod-deletion-cost"] = cost.into();
    }
    let scheduled = if node.is_some() {
        serde_json::json!({"type": "PodScheduled", "status": "True"})
    } else {
        serde_json::json!({"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "lastTransitionTime": Time(at(-20))})
    };
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "annotations": annotations, "creationTimestamp": Time(at(-100))},
        "spec": {"nodeName": node, "containers": []},
        "status": {"phase": if node.is_some() { "Running" } else { "Pending" }, "conditions": [scheduled]}}))
    .unwrap()
}

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

#[test]
fn fixed_status_and_costs() {
    let spread = spread(
        &serde_json::json!({}),
        &serde_json::json!({"subsetStatuses": [
            {"name": "a", "missingReplicas": 0, "creatingPods": {"a-new": Time(at(-5))}}]}),
    );
    let pods = [
        pod("a-1", "a", Some("200"), Some("n1")),
        pod("a-2", "a", None, Some("n1")),
        pod("a-3", "a", None, None),
        pod("b-1", "b", None, Some("n2")),
        pod("other", "b", None, Some("n2")),
    ];
    let mut pods = pods.to_vec();
    // Another spread's pod is ignored.
    pods[4].metadata.annotations.as_mut().unwrap().insert(
        "apps.kruise.io/matched-workloadspread".into(),
        r#"{"name":"other","subset":"b"}"#.into(),
    );
    let plan = plan(&PlanInput {
        spread: &spread,
        pods: &pods,
        workload_replicas: Some(6),
        now: at(0),
    })
    .unwrap();
    let a = &plan.status.subset_statuses[0];
    let b = &plan.status.subset_statuses[1];
    assert_eq!(plan.status.observed_generation, 3);
    assert_eq!(
        (a.replicas, a.missing_replicas),
        (3, 0),
        "3 of 50% of 6, a-new still coming"
    );
    assert_eq!((b.replicas, b.missing_replicas), (1, -1));
    assert!(a.conditions.is_empty(), "Fixed: no Schedulable condition");
    // a holds 3 of its 3: all kept at 200 (a-1 has it already); b's pod 100.
    assert_eq!(
        plan.deletion_costs,
        [
            ("a-2".to_owned(), "200".to_owned()),
            ("a-3".to_owned(), "200".to_owned()),
            ("b-1".to_owned(), "100".to_owned())
        ]
    );
    assert!(plan.reschedule.is_empty());
    assert_eq!(plan.requeue_after, Some(std::time::Duration::from_secs(25)));
}

#[test]
fn surplus_gets_negative_cost() {
    let spread = spread(&serde_json::json!({}), &serde_json::json!({}));
    let pods = [
        pod("a-1", "a", None, Some("n1")),
        pod("a-2", "a", None, None),
        pod("a-3", "a", None, Some("n1")),
    ];
    let plan = plan(&PlanInput {
        spread: &spread,
        pods: &pods,
        workload_replicas: Some(4),
        now: at(0),
    })
    .unwrap();
    assert_eq!(
        plan.deletion_costs,
        [
            ("a-1".to_owned(), "200".to_owned()),
            ("a-2".to_owned(), "-200".to_owned()),
            ("a-3".to_owned(), "200".to_owned())
        ]
    );
}

#[test]
fn adaptive_reschedules_stuck_pods_and_marks_the_subset() {
    let spread = spread(
        &serde_json::json!({"type": "Adaptive", "adaptive": {"rescheduleCriticalSeconds": 10}}),
        &serde_json::json!({}),
    );
    let pods = [
        pod("a-1", "a", None, None),
        pod("b-1", "b", None, Some("n")),
    ];
    let plan = plan(&PlanInput {
        spread: &spread,
        pods: &pods,
        workload_replicas: Some(2),
        now: at(0),
    })
    .unwrap();
    assert_eq!(plan.reschedule, ["a-1"]);
    let a = &plan.status.subset_statuses[0];
    assert_eq!(a.conditions[0].status, "False");
    assert_eq!(plan.status.subset_statuses[1].conditions[0].status, "True");
    assert_eq!(
        plan.requeue_after,
        Some(crate::spread::workload_spread::UNSCHEDULABLE_RECOVERY)
    );
}

#[test]
fn a_percentage_without_replicas_is_an_error() {
    let spread = spread(&serde_json::json!({}), &serde_json::json!({}));
    let error = plan(&PlanInput {
        spread: &spread,
        pods: &[] as &[Pod],
        workload_replicas: None,
        now: at(0),
    })
    .unwrap_err();
    assert!(
        error.to_string().contains("spec.subsets[a].maxReplicas"),
        "{error}"
    );
}
