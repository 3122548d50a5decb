use proptest::prelude::*;
use serde_json::json;

use super::*;

fn pod(name: &str, ready: bool) -> Pod {
    serde_json::from_value(
        json!({"metadata": {"name": name, "namespace": "ns", "labels": {"app": "web"}},
        "status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": if ready { "True" } else { "False" }}]}}),
    )
    .unwrap()
}

fn budget(allowed: i32, extra: &serde_json::Value) -> PodUnavailableBudget {
    let mut value = json!({"metadata": {"name": "pub", "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "maxUnavailable": 2},
        "status": {"unavailableAllowed": allowed, "currentAvailable": 8 + allowed, "desiredAvailable": 8,
            "totalReplicas": 10, "disruptedPods": {"web-d": "2024-01-01T00:00:00Z"},
            "unavailablePods": {"web-u": "2024-01-01T00:00:00Z"}}});
    if let (Some(target), Some(extra)) = (value.as_object_mut(), extra.as_object()) {
        for (key, field) in extra {
            if key == "spec" {
                for (name, item) in field.as_object().into_iter().flatten() {
                    target["spec"][name] = item.clone();
                }
            } else {
                target.insert(key.clone(), field.clone());
            }
        }
    }
    serde_json::from_value(value).unwrap()
}

fn now() -> Timestamp {
    Timestamp::from_second(1_700_000_000).unwrap()
}

#[test]
fn free_spend_and_refuse() {
    use PubOperation::{Delete, Evict, Resize, Update};
    let free = |verdict: Verdict| match verdict {
        Verdict::Free(free) => Some(free),
        _ => None,
    };
    let table = [
        (
            budget(1, &json!({})),
            pod("web-1", true),
            Resize,
            Some(Free::NotProtected),
        ),
        (
            budget(0, &json!({"spec": {"protectOperations": ["DELETE"]}})),
            pod("web-1", true),
            Evict,
            Some(Free::NotProtected),
        ),
        (
            budget(0, &json!({})),
            pod("web-1", false),
            Evict,
            Some(Free::AlreadyUnavailable),
        ),
        (
            budget(0, &json!({})),
            pod("web-d", true),
            Update,
            Some(Free::AlreadyCounted),
        ),
        (
            budget(0, &json!({})),
            pod("web-u", true),
            Delete,
            Some(Free::AlreadyCounted),
        ),
        (
            budget(
                0,
                &json!({"spec": {"ignoredPodSelector": {"matchLabels": {"app": "web"}}}}),
            ),
            pod("web-1", true),
            Delete,
            Some(Free::Ignored),
        ),
        (budget(0, &json!({})), pod("web-1", true), Delete, None),
        (budget(1, &json!({})), pod("web-1", true), Delete, None),
    ];
    for (budget, pod, operation, expected) in table {
        let verdict = decide(&budget, &pod, &operation, now()).unwrap();
        assert_eq!(free(verdict.clone()), expected, "{operation:?} {verdict:?}");
    }
}

#[test]
fn a_spend_lists_the_pod_and_takes_one_unit() {
    let Verdict::Spend(status) = decide(
        &budget(2, &json!({})),
        &pod("web-1", true),
        &PubOperation::Evict,
        now(),
    )
    .unwrap() else {
        panic!("budget left")
    };
    assert_eq!(status.unavailable_allowed, 1);
    assert_eq!(status.disrupted_pods.get("web-1"), Some(&Time(now())));
    let Verdict::Spend(status) = decide(
        &budget(2, &json!({})),
        &pod("web-1", true),
        &PubOperation::Update,
        now(),
    )
    .unwrap() else {
        panic!("budget left")
    };
    assert!(status.unavailable_pods.contains_key("web-1"));
    assert!(!status.disrupted_pods.contains_key("web-1"));
}

#[test]
fn a_refusal_names_pod_budget_and_numbers() {
    let Verdict::Refused(refusal) = decide(
        &budget(0, &json!({})),
        &pod("web-3", true),
        &PubOperation::Delete,
        now(),
    )
    .unwrap() else {
        panic!("no budget left")
    };
    assert_eq!(
        refusal.to_string(),
        "pod ns/web-3 may not be deleted: PodUnavailableBudget ns/pub allows no more unavailable pods \
         (currentAvailable 8, desiredAvailable 8)"
    );
}

/// The budget as the API server keeps it: a status and its version.
struct Stored {
    budget: PodUnavailableBudget,
    version: u64,
}

/// One admission in flight.
#[derive(Clone)]
enum Step {
    /// About to read.
    Read { attempts: u32 },
    /// Read the budget at `version` and decided.
    Decided {
        attempts: u32,
        version: u64,
        verdict: Verdict,
    },
    /// Finished: admitted (true) or refused.
    Done(bool),
}

const ATTEMPTS: u32 = 4;

/// Advances admission `index` by one step (reading, or a conditional write).
fn advance(stored: &mut Stored, steps: &mut [Step], index: usize, pods: &[Pod]) {
    let (Some(step), Some(pod)) = (steps.get_mut(index), pods.get(index)) else {
        return;
    };
    *step = match step.clone() {
        Step::Read { attempts } => Step::Decided {
            attempts,
            version: stored.version,
            verdict: decide(&stored.budget, pod, &PubOperation::Evict, now()).unwrap(),
        },
        Step::Decided {
            attempts,
            version,
            verdict,
        } => match verdict {
            Verdict::Free(_) => Step::Done(true),
            Verdict::Spend(status) if version == stored.version => {
                stored.budget.status = Some(*status);
                stored.version += 1;
                Step::Done(true)
            }
            // 409: read again, a few times.
            Verdict::Spend(_) if attempts + 1 < ATTEMPTS => Step::Read {
                attempts: attempts + 1,
            },
            Verdict::Refused(_) | Verdict::Spend(_) => Step::Done(false),
        },
        done @ Step::Done(_) => done,
    };
}

proptest! {
    /// However N concurrent evictions interleave (each reads, decides and writes only if the version it read
    /// is still current, else reads again), they never admit more than the budget allows.
    #[test]
    fn concurrent_admissions_never_exceed_the_budget(
        allowed in 0..5i32,
        admissions in 1..12usize,
        schedule in proptest::collection::vec(0..12usize, 0..120),
    ) {
        let pods: Vec<Pod> = (0..admissions).map(|i| pod(&format!("web-{i}"), true)).collect();
        let mut stored = Stored { budget: budget(allowed, &json!({})), version: 0 };
        let mut steps = vec![Step::Read { attempts: 0 }; admissions];
        // The random interleaving, then everyone runs to the end in turn.
        let tail = (0..admissions).flat_map(|index| std::iter::repeat_n(index, 2 * ATTEMPTS as usize + 2));
        for index in schedule.into_iter().chain(tail) {
            advance(&mut stored, &mut steps, index % admissions, &pods);
        }
        let admitted = steps.iter().filter(|step| matches!(step, Step::Done(true))).count();
        prop_assert!(steps.iter().all(|step| matches!(step, Step::Done(_))));
        let status = stored.budget.status.clone().unwrap_or_default();
        let spent = status.disrupted_pods.len() - 1; // web-d was listed before
        prop_assert_eq!(admitted, spent);
        prop_assert!(i32::try_from(spent).unwrap() <= allowed, "{} admitted, {} allowed", spent, allowed);
        prop_assert_eq!(status.unavailable_allowed, allowed - i32::try_from(spent).unwrap());
        prop_assert!(status.unavailable_allowed >= 0);
    }
}
