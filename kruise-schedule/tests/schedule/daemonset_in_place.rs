//! InPlaceIfPossible (upstream `pkg/controller/daemonset/daemonset_update.go`): image changes are made in place
//! through kruise_inplace, other changes recreate the pod; pods without the readiness gate or with an unknown
//! revision are recreated; in place only without surge; in-place progress is refreshed every pass.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support::daemonset::*;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;
use kruise_schedule::daemonset::{ActionKind, KnownRevision, Rule, Step, UpdateHow};
use serde_json::{Value, json};

/// A ControllerRevision as Go writes it for a template with this one container.
fn revision(name: &str, hash: &str, container: Value) -> ControllerRevision {
    let mut template = json!({"metadata": {"labels": {"app": "d"}}, "spec": {}});
    template["spec"]["containers"] = json!([]);
    template["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .push(container);
    let template = serde_json::from_value(template).unwrap();
    let data = kruise_inplace::revision::template_data_value(&template).unwrap();
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"controller-revision-hash": hash}},
        "data": data,
        "revision": 1,
    }))
    .unwrap()
}

fn gated(pod: Pod) -> Pod {
    edit_pod(pod, |v| {
        v["spec"]["readinessGates"] = json!([{"conditionType": "InPlaceUpdateReady"}]);
        v["status"]["conditions"]
            .as_array_mut()
            .unwrap()
            .push(json!({"type": "InPlaceUpdateReady", "status": "True"}));
        v["status"]["containerStatuses"] = json!([{"name": "c", "image": "img:1", "imageID": "sha256:one", "ready": true, "restartCount": 0}]);
    })
}

#[test]
fn image_changes_go_in_place_others_recreate() {
    let old = revision("ds-old", OLD, json!({"name": "c", "image": "img:1"}));
    let env = revision(
        "ds-env",
        "env-hash",
        json!({"name": "c", "image": "img:1", "env": [{"name": "X", "value": "1"}]}),
    );
    let new = revision("ds-new", NEW, json!({"name": "c", "image": "img:2"}));
    let known = [
        KnownRevision::of(&old).unwrap(),
        KnownRevision::of(&env).unwrap(),
        KnownRevision::of(&new).unwrap(),
    ];
    let set = ds(json!({"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 4}));
    let pods = vec![
        gated(pod("p-a", "a", OLD, Health::Available, 0)),
        gated(pod("p-b", "b", "env-hash", Health::Available, 0)),
        pod("p-c", "c", OLD, Health::Available, 0),
        gated(pod("p-d", "d", "unknown", Health::Available, 0)),
    ];
    let plan = run_with(&set, &pods, &nodes(&["a", "b", "c", "d"]), &known);
    assert_eq!(plan.step, Step::Update);
    assert_eq!(in_place(&plan, &pods), ["p-a"]);
    assert_eq!(deleted(&plan, &pods), ["p-d", "p-c", "p-b"]);
    let reasons: Vec<String> = plan
        .actions
        .iter()
        .map(kruise_schedule::daemonset::Action::reason)
        .collect();
    assert!(
        reasons[1].contains("not among the known revisions"),
        "{}",
        reasons[1]
    );
    assert!(
        reasons[2].contains("no InPlaceUpdateReady readiness gate"),
        "{}",
        reasons[2]
    );
    assert!(
        reasons[3].contains("cannot update in place"),
        "{}",
        reasons[3]
    );

    // The update writes the new image, the update hash and InPlaceUpdateReady=False.
    let action = plan
        .actions
        .iter()
        .find(|a| matches!(a.kind, ActionKind::UpdateInPlace { .. }))
        .unwrap();
    assert!(matches!(
        action.rule,
        Rule::Replace {
            how: UpdateHow::InPlace,
            ..
        }
    ));
    let now = now().timestamp();
    let outcome = action
        .kind
        .in_place_outcome(&pods[0], now, &plan.update_options)
        .unwrap()
        .unwrap();
    let updated = serde_json::to_value(&outcome.pod).unwrap();
    assert_eq!(updated["spec"]["containers"][0]["image"], "img:2");
    assert_eq!(
        updated["metadata"]["labels"]["controller-revision-hash"],
        NEW
    );
    let gate = updated["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "InPlaceUpdateReady")
        .unwrap()
        .clone();
    assert_eq!(gate["status"], "False");
    let state: Value = serde_json::from_str(
        updated["metadata"]["annotations"]["apps.kruise.io/inplace-update-state"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(state["revision"], NEW);
}

#[test]
fn the_update_revision_defaults_to_the_template() {
    let old = revision("ds-old", OLD, json!({"name": "c", "image": "img:1"}));
    let known = [KnownRevision::of(&old).unwrap()];
    let set = ds(json!({"rollingUpdateType": "InPlaceIfPossible"}));
    let pods = vec![gated(pod("p-a", "a", OLD, Health::Available, 0))];
    let plan = run_with(&set, &pods, &nodes(&["a"]), &known);
    assert_eq!(in_place(&plan, &pods), ["p-a"]);
    let ActionKind::UpdateInPlace { spec, .. } = &plan.actions[0].kind else {
        panic!()
    };
    assert_eq!(spec.revision, NEW);
    assert_eq!(spec.container_images["c"], "img:2");
}

#[test]
fn standard_and_surge_never_update_in_place() {
    let old = revision("ds-old", OLD, json!({"name": "c", "image": "img:1"}));
    let known = [KnownRevision::of(&old).unwrap()];
    let pods = vec![gated(pod("p-a", "a", OLD, Health::Available, 0))];
    let plan = run_with(&ds(json!({})), &pods, &nodes(&["a"]), &known);
    assert_eq!(deleted(&plan, &pods), ["p-a"]);
    let set =
        ds(json!({"rollingUpdateType": "InPlaceIfPossible", "maxSurge": 1, "maxUnavailable": 0}));
    let plan = run_with(&set, &pods, &nodes(&["a"]), &known);
    assert_eq!(created(&plan), ["a"]);
    assert!(in_place(&plan, &pods).is_empty());
}

#[test]
fn burst_replicas_caps_in_place_updates() {
    let old = revision("ds-old", OLD, json!({"name": "c", "image": "img:1"}));
    let known = [KnownRevision::of(&old).unwrap()];
    let set = ds_with(
        json!({"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 3}),
        |v| {
            v["spec"]["burstReplicas"] = json!(2);
        },
    );
    let pods: Vec<Pod> = ["a", "b", "c"]
        .iter()
        .map(|n| gated(pod(&format!("p-{n}"), n, OLD, Health::Available, 0)))
        .collect();
    let plan = run_with(&set, &pods, &nodes(&["a", "b", "c"]), &known);
    assert_eq!(in_place(&plan, &pods), ["p-c", "p-b"]);
    assert!(deleted(&plan, &pods).is_empty());
}

#[test]
fn refresh_sets_the_gate_true_and_does_not_stop_the_update() {
    // A new pod with the gate but no condition yet gets InPlaceUpdateReady=True from the refresh.
    let set = ds(json!({"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 2}));
    let fresh = edit_pod(pod("q-a", "a", NEW, Health::NotReady, 0), |v| {
        v["spec"]["readinessGates"] = json!([{"conditionType": "InPlaceUpdateReady"}]);
    });
    let pods = vec![fresh, pod("p-b", "b", OLD, Health::Available, 0)];
    let plan = run(&set, &pods, &nodes(&["a", "b"]));
    assert_eq!(rules(&plan), ["in-place-refresh", "replace"]);
    let ActionKind::RefreshInPlace { outcome, .. } = &plan.actions[0].kind else {
        panic!()
    };
    let conditions = serde_json::to_value(&outcome.pod).unwrap()["status"]["conditions"].clone();
    assert!(
        conditions
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "InPlaceUpdateReady" && c["status"] == "True")
    );
    assert_eq!(
        deleted(&plan, &pods),
        ["p-b"],
        "recreated: its revision is unknown"
    );
}
