//! `volumeClaimUpdateStrategy` (gate `StatefulSetAutoResizePVCGate`): with `OnPodRollingUpdate`, a pod's
//! claims are expanded to their templates' storage before the rolling update updates it, and it waits
//! (unavailable, within `maxUnavailable`) until they have that capacity; `status.volumeClaims` counts the
//! compatible and compatible-ready claims per template for every strategy.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use crate::support::asts;

use crate::support::asts::{run_with, summary};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kruise_api::apps::v1beta1::{StatefulSet, VolumeClaimStatus};
use kruise_schedule::statefulset::{ActionKind, Error, Options, Rule, SpecificKind, Wait};
use serde_json::{Value, json};

const GATE: &str = "StatefulSetAutoResizePVCGate=true";

fn gate_on() -> Options {
    Options::default().with_feature_gates(GATE).unwrap()
}

/// `web` with 3 replicas, template `data` asking for `storage` of class `expandable`, the claim update
/// strategy `strategy` (none when empty), and `extra` merged over the spec.
fn set(storage: &str, strategy: &str, extra: Value) -> StatefulSet {
    let mut spec = json!({
        "replicas": 3,
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "storageClassName": "expandable",
            "resources": {"requests": {"storage": storage}}}}],
    });
    if !strategy.is_empty() {
        spec["volumeClaimUpdateStrategy"] = json!({"type": strategy});
    }
    if let Value::Object(extra) = extra {
        for (key, value) in extra {
            spec[key] = value;
        }
    }
    asts::set(spec)
}

/// The claim `data-web-<ordinal>` requesting `request` with `capacity` (none when empty).
fn claim(ordinal: i64, request: &str, capacity: &str) -> PersistentVolumeClaim {
    let mut status = json!({"phase": "Bound"});
    if !capacity.is_empty() {
        status["capacity"] = json!({"storage": capacity});
    }
    serde_json::from_value(json!({
        "metadata": {"name": format!("data-web-{ordinal}"), "namespace": "default",
            "resourceVersion": "7"},
        "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "expandable",
            "volumeName": format!("pv-{ordinal}"),
            "resources": {"requests": {"storage": request}}},
        "status": status,
    }))
    .unwrap()
}

/// Running, Ready pods `web-<ordinal>` at `rev`, mounting their claim `data`.
fn pods_at(list: &[(i64, &str)]) -> Vec<Pod> {
    asts::pods(list)
        .into_iter()
        .map(|mut pod| {
            let name = pod.metadata.name.clone().unwrap();
            pod.spec.as_mut().unwrap().volumes = Some(vec![
                serde_json::from_value(json!({"name": "data",
                    "persistentVolumeClaim": {"claimName": format!("data-{name}")}}))
                .unwrap(),
            ]);
            pod
        })
        .collect()
}

/// Three Running, Ready pods at `r1` (the update revision is `r2`).
fn old_pods() -> Vec<Pod> {
    pods_at(&[(0, "r1"), (1, "r1"), (2, "r1")])
}

fn counts(plan: &kruise_schedule::statefulset::Plan) -> Vec<(String, i32, i32)> {
    plan.status
        .volume_claims
        .iter()
        .map(|c: &VolumeClaimStatus| {
            (
                c.volume_claim_name.clone(),
                c.compatible_replicas,
                c.compatible_ready_replicas,
            )
        })
        .collect()
}

fn expansions(
    plan: &kruise_schedule::statefulset::Plan,
    claims: &[PersistentVolumeClaim],
) -> Vec<String> {
    plan.actions
        .iter()
        .filter_map(|action| match &action.kind {
            ActionKind::Specific(SpecificKind::ExpandClaim { claim, storage, .. }) => {
                Some(format!(
                    "{} {storage}",
                    claims[*claim].metadata.name.as_deref().unwrap()
                ))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn without_the_gate_or_with_on_delete_claims_are_left_alone() {
    let claims = vec![
        claim(0, "1Gi", "1Gi"),
        claim(1, "1Gi", "1Gi"),
        claim(2, "1Gi", "1Gi"),
    ];
    let pods = old_pods();
    for (strategy, options) in [
        ("OnPodRollingUpdate", Options::default()),
        ("OnDelete", gate_on()),
        ("", gate_on()),
    ] {
        let set = set("2Gi", strategy, json!({}));
        let plan = run_with(&set, &pods, &claims, &options);
        assert_eq!(
            summary(&plan, &pods, &claims),
            ["delete web-2"],
            "strategy {strategy:?}, gate {}",
            options.auto_resize_pvc
        );
        // The counts are computed for every strategy.
        assert_eq!(counts(&plan), [("data".to_owned(), 0, 0)]);
    }
}

#[test]
fn a_pod_waits_for_its_claims_to_be_expanded_and_grown() {
    let set = set("2Gi", "OnPodRollingUpdate", json!({}));
    let pods = old_pods();
    // 1. The claims ask for 1Gi: web-2's (the first to update) is expanded, web-2 is not touched, and
    //    with maxUnavailable 1 nothing else moves.
    let claims = vec![
        claim(0, "1Gi", "1Gi"),
        claim(1, "1Gi", "1Gi"),
        claim(2, "1Gi", "1Gi"),
    ];
    let plan = run_with(&set, &pods, &claims, &gate_on());
    assert_eq!(summary(&plan, &pods, &claims), ["expandClaim data-web-2"]);
    assert_eq!(expansions(&plan, &claims), ["data-web-2 2Gi"]);
    assert_eq!(
        plan.actions[0].rule,
        Rule::ExpandClaim {
            slot: 2,
            template: "data".into()
        }
    );
    assert_eq!(
        plan.waiting,
        Some(Wait::MaxUnavailable {
            pod: "web-1".into(),
            unavailable: 1,
            max_unavailable: 1
        })
    );
    assert_eq!(counts(&plan), [("data".to_owned(), 0, 0)]);

    // 2. Expanded, capacity still 1Gi: web-2 waits (and counts against the budget).
    let claims = vec![
        claim(0, "1Gi", "1Gi"),
        claim(1, "1Gi", "1Gi"),
        claim(2, "2Gi", "1Gi"),
    ];
    let plan = run_with(&set, &pods, &claims, &gate_on());
    assert_eq!(summary(&plan, &pods, &claims), Vec::<String>::new());
    assert_eq!(
        plan.waiting,
        Some(Wait::MaxUnavailable {
            pod: "web-1".into(),
            unavailable: 1,
            max_unavailable: 1
        })
    );
    assert_eq!(counts(&plan), [("data".to_owned(), 1, 0)]);

    // 3. The resizer reports 2Gi (written as 2048Mi): web-2 is updated.
    let claims = vec![
        claim(0, "1Gi", "1Gi"),
        claim(1, "1Gi", "1Gi"),
        claim(2, "2Gi", "2048Mi"),
    ];
    let plan = run_with(&set, &pods, &claims, &gate_on());
    assert_eq!(summary(&plan, &pods, &claims), ["delete web-2"]);
    assert_eq!(counts(&plan), [("data".to_owned(), 1, 1)]);
}

#[test]
fn a_waiting_pod_blocks_further_pods_only_through_the_budget() {
    let set = set(
        "2Gi",
        "OnPodRollingUpdate",
        json!({"podManagementPolicy": "Parallel",
            "updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}}}),
    );
    let pods = old_pods();
    let claims = vec![
        claim(0, "1Gi", "1Gi"),
        claim(1, "1Gi", "1Gi"),
        claim(2, "2Gi", "1Gi"),
    ];
    let plan = run_with(&set, &pods, &claims, &gate_on());
    // web-2 is growing (unavailable); web-1 is expanded within the budget; web-0 waits.
    assert_eq!(expansions(&plan, &claims), ["data-web-1 2Gi"]);
    assert_eq!(summary(&plan, &pods, &claims).len(), 1);
    assert_eq!(
        plan.waiting,
        Some(Wait::MaxUnavailable {
            pod: "web-0".into(),
            unavailable: 2,
            max_unavailable: 2
        })
    );
}

#[test]
fn quantities_compare_by_value() {
    let pods = old_pods();
    // (template, claim request, claim capacity) → web-2 is updated now
    let table = [
        ("2Gi", "2048Mi", "2Gi", true),
        ("2G", "2Gi", "2Gi", true),
        ("2Gi", "2G", "2G", false),
        ("1500M", "1.5G", "1500000k", true),
        ("1Gi", "2Gi", "2Gi", true),
    ];
    for (template, request, capacity, updated) in table {
        let set = set(template, "OnPodRollingUpdate", json!({}));
        let claims = vec![
            claim(0, request, capacity),
            claim(1, request, capacity),
            claim(2, request, capacity),
        ];
        let plan = run_with(&set, &pods, &claims, &gate_on());
        let summary = summary(&plan, &pods, &claims);
        assert_eq!(
            summary == ["delete web-2"],
            updated,
            "template {template}, claim {request}/{capacity}: {summary:?}"
        );
    }
}

#[test]
fn a_smaller_template_is_not_applied() {
    let set = set("1Gi", "OnPodRollingUpdate", json!({}));
    let pods = old_pods();
    let claims = vec![
        claim(0, "2Gi", "2Gi"),
        claim(1, "2Gi", "2Gi"),
        claim(2, "2Gi", "2Gi"),
    ];
    let plan = run_with(&set, &pods, &claims, &gate_on());
    assert_eq!(summary(&plan, &pods, &claims), ["delete web-2"]);
    assert_eq!(counts(&plan), [("data".to_owned(), 3, 3)]);
}

#[test]
fn a_pending_file_system_resize_lets_the_pod_update() {
    let set = set("2Gi", "OnPodRollingUpdate", json!({}));
    let pods = old_pods();
    let mut growing = claim(2, "2Gi", "1Gi");
    growing.status.as_mut().unwrap().conditions = Some(vec![
        serde_json::from_value(json!({"type": "FileSystemResizePending", "status": "True"}))
            .unwrap(),
    ]);
    let claims = vec![claim(0, "1Gi", "1Gi"), claim(1, "1Gi", "1Gi"), growing];
    let plan = run_with(&set, &pods, &claims, &gate_on());
    // Still unavailable for the budget (not ready), but completed: upstream updates it.
    assert_eq!(summary(&plan, &pods, &claims), ["delete web-2"]);
}

#[test]
fn missing_and_terminating_claims_are_skipped() {
    let set = set("2Gi", "OnPodRollingUpdate", json!({}));
    let pods = old_pods();
    let mut leaving = claim(2, "1Gi", "1Gi");
    leaving.metadata.deletion_timestamp = Some(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(asts::NOW.parse().unwrap()),
    );
    let claims = vec![claim(0, "1Gi", "1Gi"), leaving];
    let plan = run_with(&set, &pods, &claims, &gate_on());
    assert_eq!(summary(&plan, &pods, &claims), ["delete web-2"]);
}

#[test]
fn in_place_updates_follow_the_claims() {
    let set = set(
        "2Gi",
        "OnPodRollingUpdate",
        json!({"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}}),
    );
    let pods = old_pods();
    let claims = vec![
        claim(0, "1Gi", "1Gi"),
        claim(1, "1Gi", "1Gi"),
        claim(2, "1Gi", "1Gi"),
    ];
    let plan = run_with(&set, &pods, &claims, &gate_on());
    assert_eq!(summary(&plan, &pods, &claims), ["expandClaim data-web-2"]);
    let claims = vec![
        claim(0, "1Gi", "1Gi"),
        claim(1, "1Gi", "1Gi"),
        claim(2, "2Gi", "2Gi"),
    ];
    let plan = run_with(&set, &pods, &claims, &gate_on());
    assert_eq!(summary(&plan, &pods, &claims), ["inplace web-2"]);
}

#[test]
fn a_pod_already_updated_still_gets_its_claims_expanded() {
    // Only the claim template changed (the pods are at the update revision r2).
    let set = set("2Gi", "OnPodRollingUpdate", json!({}));
    let pods = pods_at(&[(0, "r2"), (1, "r2"), (2, "r2")]);
    let claims = vec![
        claim(0, "1Gi", "1Gi"),
        claim(1, "1Gi", "1Gi"),
        claim(2, "1Gi", "1Gi"),
    ];
    let plan = run_with(&set, &pods, &claims, &gate_on());
    assert_eq!(summary(&plan, &pods, &claims), ["expandClaim data-web-2"]);
    // Grown: nothing to do for web-2 (it is not recreated); web-1 is next.
    let claims = vec![
        claim(0, "1Gi", "1Gi"),
        claim(1, "1Gi", "1Gi"),
        claim(2, "2Gi", "2Gi"),
    ];
    let plan = run_with(&set, &pods, &claims, &gate_on());
    assert_eq!(summary(&plan, &pods, &claims), ["expandClaim data-web-1"]);
}

#[test]
fn a_claim_of_another_class_stops_the_update_with_an_error() {
    let set = set("2Gi", "OnPodRollingUpdate", json!({}));
    let pods = old_pods();
    let mut other = claim(2, "1Gi", "1Gi");
    other.spec.as_mut().unwrap().storage_class_name = Some("fixed".into());
    let claims = vec![claim(0, "1Gi", "1Gi"), claim(1, "1Gi", "1Gi"), other];
    let plan = run_with(&set, &pods, &claims, &gate_on());
    assert_eq!(summary(&plan, &pods, &claims), Vec::<String>::new());
    let Some(error @ Error::ClaimNotExpandable { .. }) = &plan.stopped else {
        panic!("{:?}", plan.stopped)
    };
    let message = error.to_string();
    assert!(
        message.contains("default/web")
            && message.contains("data-web-2")
            && message.contains("template data"),
        "{message}"
    );
    // Not compatible, so not counted.
    assert_eq!(counts(&plan), [("data".to_owned(), 0, 0)]);
}

#[test]
fn an_unparsable_template_quantity_is_an_error_naming_it() {
    let set = set("lots", "OnPodRollingUpdate", json!({}));
    let pods = old_pods();
    let claims = vec![
        claim(0, "1Gi", "1Gi"),
        claim(1, "1Gi", "1Gi"),
        claim(2, "1Gi", "1Gi"),
    ];
    let plan = run_with(&set, &pods, &claims, &gate_on());
    assert!(
        plan.actions.is_empty(),
        "{:?}",
        summary(&plan, &pods, &claims)
    );
    let Some(error @ Error::InvalidStorage { value, .. }) = &plan.stopped else {
        panic!("{:?}", plan.stopped)
    };
    assert_eq!(value, "lots");
    let message = error.to_string();
    assert!(
        message.contains("default/web")
            && message.contains("spec.volumeClaimTemplates[data].spec.resources.requests.storage")
            && message.contains("lots"),
        "{message}"
    );
    assert_eq!(counts(&plan), [("data".to_owned(), 0, 0)]);
    // Without the gate the template's storage is not needed to update: the update goes on.
    let plan = run_with(&set, &pods, &claims, &Options::default());
    assert_eq!(summary(&plan, &pods, &claims), ["delete web-2"]);
}

#[test]
fn an_unparsable_claim_quantity_is_an_error_naming_the_claim() {
    let set = set("2Gi", "OnPodRollingUpdate", json!({}));
    let pods = old_pods();
    let claims = vec![
        claim(0, "1Gi", "1Gi"),
        claim(1, "1Gi", "1Gi"),
        claim(2, "1Gi", "a-lot"),
    ];
    let plan = run_with(&set, &pods, &claims, &gate_on());
    // web-2 cannot be read: it counts as unavailable, and its compatibility is an error.
    let message = plan
        .stopped
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        message.contains("data-web-2 status.capacity.storage") && message.contains("a-lot"),
        "{message}"
    );
    assert!(plan.actions.is_empty());
}

#[test]
fn status_counts_the_claims_of_kept_slots() {
    let set = set("2Gi", "", json!({"replicas": 2}));
    let pods = pods_at(&[(0, "r2"), (1, "r2"), (2, "r2")]);
    let claims = vec![
        claim(0, "2Gi", "2Gi"),
        claim(1, "2Gi", "1Gi"),
        // web-2 is condemned (scale-down): not counted.
        claim(2, "2Gi", "2Gi"),
    ];
    let plan = run_with(&set, &pods, &claims, &Options::default());
    assert_eq!(counts(&plan), [("data".to_owned(), 2, 1)]);
    let no_templates = asts::set(json!({"replicas": 1}));
    let plan = run_with(&no_templates, &pods[..1], &[], &Options::default());
    assert!(plan.status.volume_claims.is_empty());
}
