use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;

use super::*;

fn at(seconds: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + seconds).unwrap()
}

fn time(seconds: i64) -> Time {
    Time(at(seconds))
}

fn pod(name: &str, ready: bool) -> Pod {
    serde_json::from_value(json!({"metadata": {"name": name, "namespace": "ns"},
        "status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}}))
    .unwrap()
}

fn budget(max_unavailable: i32, status: PodUnavailableBudgetStatus) -> PodUnavailableBudget {
    let mut budget = PodUnavailableBudget::default();
    budget.metadata.name = Some("pub".into());
    budget.metadata.namespace = Some("ns".into());
    budget.metadata.generation = Some(3);
    budget.spec.selector =
        Some(serde_json::from_value(json!({"matchLabels": {"app": "web"}})).unwrap());
    budget.spec.max_unavailable = Some(IntOrString::Int(max_unavailable));
    budget.status = Some(status);
    budget
}

#[test]
fn counts_available_pods_outside_the_lists() {
    let pods: Vec<Pod> = (0..10).map(|i| pod(&format!("web-{i}"), i != 9)).collect();
    let refs: Vec<&Pod> = pods.iter().collect();
    let status = PodUnavailableBudgetStatus {
        disrupted_pods: [("web-0".to_owned(), time(0))].into(),
        ..PodUnavailableBudgetStatus::default()
    };
    let budget = budget(2, status);
    let expected = expected_count(&budget, None, &refs);
    assert_eq!(expected, 10);
    let computed = compute_status(&budget, &refs, expected, at(30)).unwrap();
    assert_eq!(computed.status.current_available, 8); // web-9 not ready, web-0 disrupted
    assert_eq!(computed.status.desired_available, 8);
    assert_eq!(computed.status.unavailable_allowed, 0);
    assert_eq!(computed.status.total_replicas, 10);
    assert_eq!(computed.status.observed_generation, 3);
    assert_eq!(computed.requeue_after, Some(Duration::from_secs(90)));
}

#[test]
fn disrupted_entries_expire_after_the_deletion_timeout_or_with_their_pod() {
    let mut deleting = pod("web-1", true);
    deleting.metadata.deletion_timestamp = Some(time(5));
    let pods = [pod("web-0", true), deleting];
    let refs: Vec<&Pod> = pods.iter().collect();
    let status = PodUnavailableBudgetStatus {
        disrupted_pods: [
            ("web-0".to_owned(), time(0)),
            ("web-1".to_owned(), time(0)),
            ("gone".to_owned(), time(0)),
        ]
        .into(),
        ..PodUnavailableBudgetStatus::default()
    };
    let budget = budget(1, status);
    let kept = compute_status(&budget, &refs, 2, at(119)).unwrap();
    assert_eq!(
        kept.status.disrupted_pods.keys().collect::<Vec<_>>(),
        ["web-0"]
    );
    assert_eq!(kept.status.current_available, 0);
    assert_eq!(kept.requeue_after, Some(Duration::from_secs(1)));
    let expired = compute_status(&budget, &refs, 2, at(120)).unwrap();
    assert!(expired.status.disrupted_pods.is_empty());
    assert_eq!(expired.status.current_available, 1);
    assert_eq!(expired.status.unavailable_allowed, 0);
    assert_eq!(expired.requeue_after, None);
}

#[test]
fn unavailable_entries_stay_while_settling_or_updating() {
    let mut updating = pod("web-1", true);
    updating.metadata.annotations = Some(
        [(
            "apps.kruise.io/inplace-update-state".to_owned(),
            json!({"revision": "r2", "updateTimestamp": "2023-11-14T22:13:20Z",
                "lastContainerStatuses": {"main": {"imageID": "old"}}})
            .to_string(),
        )]
        .into(),
    );
    updating.spec = Some(
        serde_json::from_value(json!({"containers": [{"name": "main", "image": "nginx:2"}]}))
            .unwrap(),
    );
    if let Some(status) = updating.status.as_mut() {
        status.container_statuses = Some(vec![
            serde_json::from_value(json!({"name": "main",
            "image": "nginx:1", "imageID": "old", "ready": true, "restartCount": 0}))
            .unwrap(),
        ]);
    }
    let pods = [pod("web-0", true), updating, pod("web-2", false)];
    let refs: Vec<&Pod> = pods.iter().collect();
    let status = PodUnavailableBudgetStatus {
        unavailable_pods: [
            ("web-0".to_owned(), time(0)),
            ("web-1".to_owned(), time(0)),
            ("web-2".to_owned(), time(0)),
        ]
        .into(),
        ..PodUnavailableBudgetStatus::default()
    };
    let budget = budget(1, status);
    let settling = compute_status(&budget, &refs, 3, at(5)).unwrap();
    assert_eq!(settling.status.unavailable_pods.len(), 3);
    assert_eq!(settling.requeue_after, Some(Duration::from_secs(5)));
    let settled = compute_status(&budget, &refs, 3, at(11)).unwrap();
    // web-0 is ready and untouched: done; web-1's update has not applied; web-2 is not ready.
    assert_eq!(
        settled.status.unavailable_pods.keys().collect::<Vec<_>>(),
        ["web-1", "web-2"]
    );
    assert_eq!(settled.status.current_available, 1);
    assert_eq!(settled.status.unavailable_allowed, 0);
}

#[test]
fn the_expected_count_prefers_protect_total_replicas_then_the_target() {
    let pods = [pod("a", true), pod("b", false)];
    let refs: Vec<&Pod> = pods.iter().collect();
    let mut budget = budget(1, PodUnavailableBudgetStatus::default());
    assert_eq!(expected_count(&budget, Some(7), &refs), 2);
    budget.spec.target_reference = Some(kruise_api::policy::v1beta1::TargetReference {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: "web".into(),
    });
    assert_eq!(expected_count(&budget, Some(7), &refs), 7);
    assert_eq!(expected_count(&budget, None, &refs), 0);
    budget.spec.protect_total_replicas = Some(5);
    assert_eq!(expected_count(&budget, Some(7), &refs), 5);
}
