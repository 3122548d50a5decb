//! In-place against recreate (`podUpdatePolicy`), and the lifecycle hooks (preNormal, inPlaceUpdate,
//! preDelete) through `kruise_lifecycle` (upstream `inPlaceUpdatePod`,
//! `pkg/util/lifecycle/lifecycle_utils.go`).

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    missing_docs
)]

use crate::support::asts;

use crate::support::asts::{finalizer, pod, run, state, summary};
use kruise_schedule::statefulset::{ActionKind, Error, Rule, UpdateHow, Wait};
use serde_json::{Value, json};

fn with_policy(policy: &str, extra: Value) -> kruise_api::apps::v1beta1::StatefulSet {
    let mut spec = json!({
        "replicas": 1,
        "updateStrategy": {"rollingUpdate": {"podUpdatePolicy": policy}},
    });
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            spec[k] = v;
        }
    }
    asts::set(spec)
}

#[test]
fn recreate_policy_deletes() {
    let set = with_policy("ReCreate", json!({}));
    let pods = vec![pod("web-0", "r1")];
    let plan = run(&set, &pods);
    assert_eq!(summary(&plan, &pods, &[]), ["delete web-0"]);
    assert!(matches!(
        &plan.actions[0].rule,
        Rule::Update {
            how: UpdateHow::RecreatePolicy,
            ..
        }
    ));
}

#[test]
fn in_place_if_possible_updates_the_image_in_place() {
    let set = with_policy("InPlaceIfPossible", json!({}));
    let pods = vec![pod("web-0", "r1")];
    let plan = run(&set, &pods);
    assert_eq!(summary(&plan, &pods, &[]), ["inplace web-0"]);
    assert!(matches!(
        &plan.actions[0].rule,
        Rule::Update {
            how: UpdateHow::InPlace,
            ..
        }
    ));
    assert_eq!(
        plan.status.current_replicas, 0,
        "the pod leaves the current revision"
    );
    let now = asts::NOW.parse().unwrap();
    let outcome = plan.actions[0]
        .kind
        .in_place_outcome(&pods[0], now, &plan.update_options)
        .unwrap()
        .unwrap();
    let updated = &outcome.pod;
    assert_eq!(
        updated.spec.as_ref().unwrap().containers[0]
            .image
            .as_deref(),
        Some("nginx:2")
    );
    assert_eq!(
        updated.metadata.labels.as_ref().unwrap()["controller-revision-hash"],
        "r2"
    );
    // No lifecycle label before: ASTS writes no Updating state.
    assert!(
        !updated
            .metadata
            .labels
            .as_ref()
            .unwrap()
            .contains_key("lifecycle.apps.kruise.io/state")
    );
    // InPlaceUpdateReady goes False first.
    let condition = updated
        .status
        .as_ref()
        .unwrap()
        .conditions
        .as_ref()
        .unwrap()
        .iter()
        .find(|c| c.type_ == "InPlaceUpdateReady")
        .unwrap();
    assert_eq!(condition.status, "False");

    // A pod with a lifecycle state gets Updating in the same write.
    let pods = vec![state(pod("web-0", "r1"), "Normal")];
    let plan = run(&set, &pods);
    let ActionKind::UpdateInPlace {
        lifecycle: Some(lifecycle),
        ..
    } = &plan.actions[0].kind
    else {
        panic!()
    };
    assert_eq!(lifecycle.to.as_ref().unwrap().as_str(), "Updating");
}

#[test]
fn in_place_if_possible_falls_back_to_recreate() {
    let set = with_policy("InPlaceIfPossible", json!({}));
    // r0 has no known data: cannot compute the update.
    let pods = vec![pod("web-0", "r0")];
    let plan = run(&set, &pods);
    assert_eq!(summary(&plan, &pods, &[]), ["delete web-0"]);
    assert!(matches!(
        &plan.actions[0].rule,
        Rule::Update {
            how: UpdateHow::RecreateRequired(_),
            ..
        }
    ));

    // A template change beyond images (a new container) is not in place either.
    let mut set = with_policy("InPlaceIfPossible", json!({}));
    set.spec
        .template
        .spec
        .as_mut()
        .unwrap()
        .containers
        .push(serde_json::from_value(json!({"name": "d", "image": "x"})).unwrap());
    let known_update = set.clone();
    let pods = vec![pod("web-0", "r1")];
    let data = asts::revision_data(&["r1"]);
    let mut refs = asts::refs(&data);
    let template_data =
        kruise_inplace::revision::template_data_value(&known_update.spec.template).unwrap();
    refs.push(kruise_inplace::calculate::RevisionRef {
        name: "r2",
        data: Some(&template_data),
        annotations: None,
    });
    let now = asts::now();
    let options = kruise_schedule::statefulset::Options::default();
    let input = kruise_schedule::statefulset::PlanInput::new(
        &set,
        &pods,
        kruise_schedule::statefulset::Revisions::named("r1", "r2").with_known(&refs),
        &now,
        &options,
    );
    let plan = kruise_schedule::statefulset::plan(&input);
    assert_eq!(summary(&plan, &pods, &[]), ["delete web-0"]);
}

#[test]
fn in_place_only_is_an_error_when_impossible() {
    let set = with_policy("InPlaceOnly", json!({}));
    let pods = vec![pod("web-0", "r0")];
    let plan = run(&set, &pods);
    assert!(plan.actions.is_empty());
    let error = plan.stopped.unwrap();
    assert!(matches!(error, Error::InPlaceOnly { .. }));
    assert!(error.to_string().contains("default/web-0"));
    let pods = vec![pod("web-0", "r1")];
    assert_eq!(summary(&run(&set, &pods), &pods, &[]), ["inplace web-0"]);
}

#[test]
fn in_place_update_hook_holds_the_pod_in_preparing_update() {
    let set = with_policy(
        "InPlaceIfPossible",
        json!({"lifecycle": {"inPlaceUpdate": {"finalizersHandler": ["example.com/hook"]}}}),
    );
    let pods = vec![finalizer(
        state(pod("web-0", "r1"), "Normal"),
        "example.com/hook",
    )];
    let plan = run(&set, &pods);
    assert_eq!(
        summary(&plan, &pods, &[]),
        ["lifecycle web-0 PreparingUpdate"]
    );
    assert!(
        plan.actions[0]
            .reason()
            .contains("inPlaceUpdate hook holds it")
    );
    // OrderedReady: a PreparingUpdate pod is not available, so the slot walk stops at it (as upstream).
    let pods = vec![state(pod("web-0", "r1"), "PreparingUpdate")];
    assert_eq!(
        run(&set, &pods).waiting,
        Some(Wait::NotAvailable {
            pod: "web-0".into()
        })
    );
    // Parallel: released (finalizer gone) in PreparingUpdate, so update now.
    let set = with_policy(
        "InPlaceIfPossible",
        json!({"podManagementPolicy": "Parallel", "lifecycle": {"inPlaceUpdate": {"finalizersHandler": ["example.com/hook"]}}}),
    );
    assert_eq!(summary(&run(&set, &pods), &pods, &[]), ["inplace web-0"]);
    // Still hooked: held, nothing to write.
    let pods = vec![finalizer(
        state(pod("web-0", "r1"), "PreparingUpdate"),
        "example.com/hook",
    )];
    assert!(run(&set, &pods).actions.is_empty());
    // Done: Updating and completed → Updated (the hook is not re-armed), which blocks updates this pass.
    let pods = vec![state(pod("web-0", "r2"), "Updating")];
    let plan = run(&set, &pods);
    assert_eq!(summary(&plan, &pods, &[]), ["lifecycle web-0 Updated"]);
}

#[test]
fn lifecycle_refresh_stops_the_update() {
    let set = asts::set(json!({"replicas": 2, "podManagementPolicy": "Parallel"}));
    let pods = vec![pod("web-0", "r1"), state(pod("web-1", "r2"), "Updated")];
    let plan = run(&set, &pods);
    // No inPlaceUpdate hook: Updated → Normal, and no deletion of web-0 in this pass.
    assert_eq!(summary(&plan, &pods, &[]), ["lifecycle web-1 Normal"]);
    assert_eq!(plan.waiting, Some(Wait::LifecycleRefreshed));
}

#[test]
fn pre_delete_hook_turns_deletions_into_preparing_delete() {
    let hooked =
        json!({"lifecycle": {"preDelete": {"labelsHandler": {"example.com/hold": "true"}}}});
    // Recreate update.
    let set = with_policy("ReCreate", hooked.clone());
    let pods = vec![asts::label(pod("web-0", "r1"), "example.com/hold", "true")];
    let plan = run(&set, &pods);
    assert_eq!(
        summary(&plan, &pods, &[]),
        ["lifecycle web-0 PreparingDelete"]
    );
    assert!(plan.actions[0].reason().contains("preDelete hook holds it"));
    assert_eq!(plan.status.current_replicas, 1, "not deleted yet");
    // Condemned pod (scale-down).
    let set = with_policy("ReCreate", hooked);
    let pods = vec![
        pod("web-0", "r2"),
        asts::label(pod("web-1", "r2"), "example.com/hold", "true"),
    ];
    let plan = run(&set, &pods);
    assert_eq!(
        summary(&plan, &pods, &[]),
        ["lifecycle web-1 PreparingDelete"]
    );
    assert_eq!(
        plan.waiting,
        Some(Wait::CondemnedDeleted {
            pod: "web-1".into()
        })
    );
    // Released: deleted.
    let pods = vec![
        pod("web-0", "r2"),
        state(pod("web-1", "r2"), "PreparingDelete"),
    ];
    assert_eq!(summary(&run(&set, &pods), &pods, &[]), ["delete web-1"]);
}

#[test]
fn new_pods_start_normal_unless_a_pre_normal_hook_waits() {
    let set = asts::set(json!({"replicas": 1}));
    let plan = run(&set, &[]);
    let ActionKind::CreatePod { pod, .. } = &plan.actions[0].kind else {
        panic!()
    };
    assert_eq!(
        pod.metadata.labels.as_ref().unwrap()["lifecycle.apps.kruise.io/state"],
        "Normal"
    );

    let set = asts::set(
        json!({"replicas": 1, "lifecycle": {"preNormal": {"labelsHandler": {"ready-for-traffic": "yes"}}}}),
    );
    let plan = run(&set, &[]);
    let ActionKind::CreatePod { pod, .. } = &plan.actions[0].kind else {
        panic!()
    };
    assert_eq!(
        pod.metadata.labels.as_ref().unwrap()["lifecycle.apps.kruise.io/state"],
        "PreparingNormal"
    );
    // PreparingNormal → Normal once all hooked.
    let pods = vec![asts::label(
        state(asts::pod("web-0", "r2"), "PreparingNormal"),
        "ready-for-traffic",
        "yes",
    )];
    assert_eq!(
        summary(&run(&set, &pods), &pods, &[]),
        ["lifecycle web-0 Normal"]
    );
}
