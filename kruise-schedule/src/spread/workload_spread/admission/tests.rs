use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use proptest::prelude::*;

use super::*;

fn now() -> Timestamp {
    "2024-05-01T10:00:00Z".parse().unwrap()
}

fn spread(subsets: &serde_json::Value, statuses: Option<&serde_json::Value>) -> WorkloadSpread {
    let mut value = serde_json::json!({
        "metadata": {"name": "ws", "namespace": "ns"},
        "spec": {"targetRef": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "name": "web"},
            "subsets": subsets.clone()},
    });
    if let Some(statuses) = statuses {
        value["status"] = serde_json::json!({"subsetStatuses": statuses.clone()});
    }
    serde_json::from_value(value).unwrap()
}

fn unschedulable() -> Condition {
    Condition {
        type_: SUBSET_SCHEDULABLE.into(),
        status: "False".into(),
        last_transition_time: Time(now()),
        message: String::new(),
        observed_generation: None,
        reason: "Unschedulable".into(),
    }
}

#[test]
fn the_first_subset_with_room_in_spec_order() {
    // (statuses of a, b, c) -> chosen subset
    let table: &[(i32, i32, i32, Option<&str>)] = &[
        (2, -1, -1, Some("a")),
        (0, 1, -1, Some("b")),
        (0, 0, -1, Some("c")),
        (0, 0, 0, None),
        (-1, 0, 0, Some("a")),
    ];
    for &(a, b, c, expected) in table {
        let spread = spread(
            &serde_json::json!([{"name": "a"}, {"name": "b"}, {"name": "c"}]),
            Some(&serde_json::json!([
                {"name": "a", "missingReplicas": a},
                {"name": "b", "missingReplicas": b},
                {"name": "c", "missingReplicas": c}])),
        );
        let chosen = admit_create(&spread, "p", now()).unwrap();
        assert_eq!(
            chosen
                .as_ref()
                .map(|admitted| admitted.subset.name.as_str()),
            expected,
            "{a} {b} {c}"
        );
        if let Some(admitted) = chosen {
            let entry = &admitted.status.subset_statuses[admitted.subset_index];
            let before = [a, b, c][admitted.subset_index];
            let spent = if before > 0 { before - 1 } else { before };
            assert_eq!(entry.missing_replicas, spent);
            assert_eq!(entry.creating_pods.get("p"), Some(&Time(now())));
            assert!(admitted.changed);
        }
    }
}

#[test]
fn unschedulable_subsets_are_skipped() {
    let mut spread = spread(
        &serde_json::json!([{"name": "a"}, {"name": "b"}]),
        Some(
            &serde_json::json!([{"name": "a", "missingReplicas": -1}, {"name": "b", "missingReplicas": -1}]),
        ),
    );
    spread.status.as_mut().unwrap().subset_statuses[0]
        .conditions
        .push(unschedulable());
    let admitted = admit_create(&spread, "p", now()).unwrap().unwrap();
    assert_eq!(admitted.subset.name, "b");
}

#[test]
fn a_status_without_entries_starts_from_the_spec() {
    let spread = spread(
        &serde_json::json!([{"name": "a", "maxReplicas": 1}, {"name": "b", "maxReplicas": "50%"}, {"name": "c"}]),
        None,
    );
    let status = aligned_status(&spread);
    let missing: Vec<_> = status
        .subset_statuses
        .iter()
        .map(|s| s.missing_replicas)
        .collect();
    assert_eq!(missing, [1, 0, -1], "a percentage waits for the controller");
    let admitted = admit_create(&spread, "p", now()).unwrap().unwrap();
    assert_eq!(admitted.subset.name, "a");
}

#[test]
fn admitting_the_same_pod_twice_spends_once() {
    let spread1 = spread(
        &serde_json::json!([{"name": "a", "maxReplicas": 3}]),
        Some(&serde_json::json!([{"name": "a", "missingReplicas": 3}])),
    );
    let first = admit_create(&spread1, "p", now()).unwrap().unwrap();
    let mut spread2 = spread1.clone();
    spread2.status = Some(first.status.clone());
    let again = admit_create(&spread2, "p", now()).unwrap().unwrap();
    assert!(!again.changed);
    assert_eq!(again.status, first.status);
    assert_eq!(again.status.subset_statuses[0].missing_replicas, 2);
}

#[test]
fn deletion_gives_the_replica_back_once() {
    let spread = spread(
        &serde_json::json!([{"name": "a", "maxReplicas": 3}, {"name": "b"}]),
        Some(&serde_json::json!([
            {"name": "a", "missingReplicas": 0, "creatingPods": {"new": "2024-05-01T09:59:00Z"}},
            {"name": "b", "missingReplicas": -1}])),
    );
    let status = admit_delete(&spread, "a", "old", now()).unwrap();
    assert_eq!(status.subset_statuses[0].missing_replicas, 1);
    assert!(status.subset_statuses[0].deleting_pods.contains_key("old"));
    let mut again = spread.clone();
    again.status = Some(status);
    assert_eq!(
        admit_delete(&again, "a", "old", now()),
        None,
        "recorded already"
    );
    let status = admit_delete(&spread, "a", "new", now()).unwrap();
    assert!(
        status.subset_statuses[0].creating_pods.is_empty(),
        "no longer coming"
    );
    assert!(status.subset_statuses[0].deleting_pods.is_empty());
    let status = admit_delete(&spread, "b", "x", now()).unwrap();
    assert_eq!(
        status.subset_statuses[1].missing_replicas, -1,
        "unlimited stays unlimited"
    );
    assert_eq!(admit_delete(&spread, "gone", "x", now()), None);
}

/// A store holding one WorkloadSpread with a resourceVersion, written only with the version read: what
/// the API server does for the webhook's conditional status writes.
struct Store {
    spread: WorkloadSpread,
    version: u64,
}

proptest! {
    /// Concurrent pod creations, each reading the spread, deciding, and writing conditionally (deciding
    /// again after a conflict), never put more pods into a subset than its maxReplicas.
    #[test]
    fn concurrent_admissions_never_overfill(
        limits in proptest::collection::vec(proptest::option::of(0i32..4), 1..4),
        schedule in proptest::collection::vec(0usize..8, 1..60),
    ) {
        let subsets: Vec<_> = limits
            .iter()
            .enumerate()
            .map(|(index, limit)| match limit {
                Some(limit) => serde_json::json!({"name": format!("s{index}"), "maxReplicas": limit}),
                None => serde_json::json!({"name": format!("s{index}")}),
            })
            .collect();
        let mut store = Store { spread: spread(&serde_json::Value::Array(subsets), None), version: 0 };
        // Eight pods; each is either idle, or has read (version, status) and waits to write.
        let mut read: Vec<Option<(u64, WorkloadSpread)>> = vec![None; 8];
        let mut placed: Vec<Option<usize>> = vec![None; 8];
        for step in schedule {
            if placed[step].is_some() {
                continue;
            }
            match read[step].take() {
                None => read[step] = Some((store.version, store.spread.clone())),
                Some((version, seen)) => {
                    let key = format!("pod-{step}");
                    let Some(admitted) = admit_create(&seen, &key, now()).unwrap() else { continue };
                    if version == store.version {
                        store.spread.status = Some(admitted.status.clone());
                        store.version += 1;
                        placed[step] = Some(admitted.subset_index);
                    }
                    // On a conflict the pod reads again at its next turn.
                }
            }
        }
        for (index, limit) in limits.iter().enumerate() {
            let count = placed.iter().filter(|placed| **placed == Some(index)).count();
            if let Some(limit) = limit {
                prop_assert!(count <= usize::try_from(*limit).unwrap(), "subset {index}: {count} > {limit}");
            }
            let recorded = store.spread.status.as_ref().map_or(0, |status| status.subset_statuses[index].creating_pods.len());
            prop_assert_eq!(recorded, count);
        }
    }
}
