//! Table tests of `refresh` (upstream `Refresh` in `pkg/util/inplaceupdate`), from upstream's TestRefresh and the
//! grace-period rules.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::needless_pass_by_value
)] // test code

use std::time::Duration;

use crate::support::*;
use k8s_openapi::api::core::v1::Pod;
use kruise_api::keys::inplace::{GRACE_ANNOTATION, LEGACY_GRACE_ANNOTATION, STATE_ANNOTATION};
use kruise_inplace::{Error, FeatureGates, RevisionLabels, Subresource, UpdateOptions, refresh};
use serde_json::{Value, json};

const HOUR_AGO: &str = "2024-05-01T09:00:00Z";
const NOW: &str = "2024-05-01T10:00:00Z";
const TEN_SECONDS_AGO: &str = "2024-05-01T09:59:50Z";

fn options() -> UpdateOptions {
    UpdateOptions::default()
}

fn run(pod: &Pod) -> kruise_inplace::Outcome {
    let outcome = refresh(pod, at(NOW), &options()).unwrap();
    assert_patches_reproduce(pod, &outcome);
    outcome
}

fn with_gate(mut value: Value) -> Pod {
    value["spec"]["readinessGates"] = json!([{"conditionType": "InPlaceUpdateReady"}]);
    if value["spec"].get("containers").is_none() {
        value["spec"]["containers"] = json!([]);
    }
    pod(value)
}

#[test]
fn no_readiness_gate() {
    let outcome = run(&pod(json!({})));
    assert!(!outcome.changed());
}

#[test]
fn not_in_place_updated_yet() {
    let pod = with_gate(json!({
        "metadata": {"labels": {"controller-revision-hash": "new-revision"},
            "annotations": {STATE_ANNOTATION: r#"{"revision":"new-revision","lastContainerStatuses":{"c1":{"imageID":"img01"}}}"#}},
        "spec": {}
    }));
    assert!(!run(&pod).changed());
}

#[test]
fn condition_goes_true() {
    // No existing condition: appended with lastTransitionTime = now.
    let pod = with_gate(json!({"metadata": {"resourceVersion": "7"}, "spec": {}}));
    let outcome = run(&pod);
    assert_eq!(outcome.writes.len(), 1);
    assert_eq!(outcome.writes[0].subresource, Subresource::Status);
    let condition = condition(&outcome.pod, "InPlaceUpdateReady").unwrap();
    assert_eq!(condition.status, "True");
    assert_eq!(condition.last_transition_time.as_ref().unwrap().0, at(NOW));

    // False: replaced by True; Ready is left to kubelet.
    let pod = with_gate(json!({"spec": {}, "status": {"conditions": [
        {"type": "ContainersReady", "status": "True"},
        {"type": "InPlaceUpdateReady", "status": "False", "reason": "StartInPlaceUpdate"}]}}));
    let outcome = run(&pod);
    let conditions = outcome
        .pod
        .status
        .as_ref()
        .unwrap()
        .conditions
        .as_ref()
        .unwrap();
    assert_eq!(conditions.len(), 2);
    assert_eq!(conditions[1].status, "True");
    assert_eq!(conditions[1].reason, None);

    // Already True: nothing.
    let pod = with_gate(json!({"spec": {}, "status": {"conditions": [
        {"type": "ContainersReady", "status": "False"}, {"type": "InPlaceUpdateReady", "status": "True"}]}}));
    assert!(!run(&pod).changed());
}

fn graced(grace: &str, revision_label: &str) -> Pod {
    with_gate(json!({
        "metadata": {"labels": {"controller-revision-hash": revision_label},
            "annotations": {
                STATE_ANNOTATION: format!(r#"{{"revision":"new-revision","updateTimestamp":"{TEN_SECONDS_AGO}","lastContainerStatuses":{{"c1":{{"imageID":"img01"}}}}}}"#),
                GRACE_ANNOTATION: grace}},
        "spec": {"containers": [{"name": "main", "image": "img-name01"}]}
    }))
}

#[test]
fn still_in_grace_waits_the_rest_rounded_up() {
    let pod = graced(
        r#"{"revision":"new-revision","containerImages":{"main":"img-name02"},"graceSeconds":30}"#,
        "new-revision",
    );
    let outcome = run(&pod);
    assert!(!outcome.changed());
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(20)));
    // Sub-second `now`: 19.7 s left rounds up to 20.
    let later: k8s_openapi::jiff::Timestamp = "2024-05-01T10:00:00.3Z".parse().unwrap();
    let outcome = refresh(&pod, later, &options()).unwrap();
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(20)));
    // Exactly on a second boundary nothing is added.
    let outcome = refresh(&pod, plus(at(NOW), 10), &options()).unwrap();
    assert_eq!(outcome.requeue_after, Some(Duration::from_secs(10)));
}

#[test]
fn grace_over_patches_the_spec() {
    let pod = graced(
        r#"{"revision":"new-revision","containerImages":{"main":"img-name02"},"graceSeconds":5}"#,
        "new-revision",
    );
    let outcome = run(&pod);
    assert_eq!(image(&outcome.pod, "main"), "img-name02");
    assert_eq!(annotation(&outcome.pod, GRACE_ANNOTATION), None);
    // The state keeps its revision and timestamp and records the batch at `now`.
    assert_eq!(
        annotation(&outcome.pod, STATE_ANNOTATION),
        Some(
            r#"{"revision":"new-revision","updateTimestamp":"2024-05-01T09:59:50Z","lastContainerStatuses":{"c1":{"imageID":"img01"}},"containerBatchesRecord":[{"timestamp":"2024-05-01T10:00:00Z","containers":["main"]}]}"#
        )
    );
    // Nothing else in that call: the condition is not touched.
    assert_eq!(condition(&outcome.pod, "InPlaceUpdateReady"), None);
    assert_eq!(outcome.requeue_after, None);
}

#[test]
fn grace_of_another_revision_is_dropped() {
    let pod = graced(
        r#"{"revision":"new-revision","containerImages":{"main":"img-name02"},"graceSeconds":30}"#,
        "newer-revision",
    );
    let outcome = run(&pod);
    assert_eq!(image(&outcome.pod, "main"), "img-name01");
    assert_eq!(annotation(&outcome.pod, GRACE_ANNOTATION), None);
    // CloneSet labels compare short hashes: "cs-abc" matches a spec revision "abc".
    let pod = graced(
        r#"{"revision":"abc","containerImages":{"main":"img-name02"},"graceSeconds":5}"#,
        "cs-abc",
    );
    let cloneset = UpdateOptions {
        revision_labels: RevisionLabels::CloneSet { short_hash: false },
        ..options()
    };
    assert_eq!(
        image(&refresh(&pod, at(NOW), &cloneset).unwrap().pod, "main"),
        "img-name02"
    );
    assert_eq!(
        image(&refresh(&pod, at(NOW), &options()).unwrap().pod, "main"),
        "img-name01"
    );
}

#[test]
fn legacy_grace_key_and_errors() {
    let mut pod = graced(
        r#"{"revision":"new-revision","containerImages":{"main":"img-name02"},"graceSeconds":5}"#,
        "new-revision",
    );
    let annotations = pod.metadata.annotations.as_mut().unwrap();
    let grace = annotations.remove(GRACE_ANNOTATION).unwrap();
    annotations.insert(LEGACY_GRACE_ANNOTATION.into(), grace);
    let outcome = run(&pod);
    assert_eq!(annotation(&outcome.pod, LEGACY_GRACE_ANNOTATION), None);
    assert_eq!(image(&outcome.pod, "main"), "img-name02");

    let mut no_state = pod.clone();
    no_state
        .metadata
        .annotations
        .as_mut()
        .unwrap()
        .remove(STATE_ANNOTATION);
    no_state.metadata.name = Some("p".into());
    let error = refresh(&no_state, at(NOW), &options()).unwrap_err();
    assert!(matches!(error, Error::GraceWithoutState { .. }));
    assert_eq!(
        error.to_string(),
        "pod /p has apps.kruise.io/inplace-update-grace but apps.kruise.io/inplace-update-state not found"
    );

    let mut bad = pod.clone();
    bad.metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert(LEGACY_GRACE_ANNOTATION.into(), "{".into());
    assert!(matches!(
        refresh(&bad, at(NOW), &options()),
        Err(Error::GraceSpec { .. })
    ));

    // An empty grace value is ignored by refresh (upstream checks for a non-empty value there) ...
    let mut empty =
        with_gate(json!({"metadata": {"annotations": {GRACE_ANNOTATION: ""}}, "spec": {}}));
    assert!(run(&empty).changed());
    // ... but still means "not completed" to the completion check.
    assert!(!kruise_inplace::completion::is_completed(
        &empty,
        &options()
    ));
    empty.metadata.annotations = None;
    assert!(kruise_inplace::completion::is_completed(&empty, &options()));
}

fn two_batch_pod(c1_image_id: &str, pre_check: bool, c1_ready: bool) -> Pod {
    let pre_check = if pre_check {
        r#","preCheckBeforeNext":{"containersRequiredReady":["c1"]}"#
    } else {
        ""
    };
    with_gate(json!({
        "metadata": {"labels": {"controller-revision-hash": "new-revision"},
            "annotations": {STATE_ANNOTATION: format!(r#"{{"revision":"new-revision","updateTimestamp":"{HOUR_AGO}","lastContainerStatuses":{{"c1":{{"imageID":"c1-img1-ID"}}}},"nextContainerImages":{{"c2":"c2-img2"}}{pre_check},"containerBatchesRecord":[{{"timestamp":"{HOUR_AGO}","containers":["c1"]}}]}}"#)}},
        "spec": {"containers": [{"name": "c1", "image": "c1-img2"}, {"name": "c2", "image": "c2-img1"}]},
        "status": {
            "containerStatuses": [
                {"name": "c1", "imageID": c1_image_id, "image": "", "ready": c1_ready, "restartCount": 0},
                {"name": "c2", "imageID": "c2-img1-ID", "image": "", "ready": true, "restartCount": 0}],
            "conditions": [{"type": "ContainersReady", "status": "True"},
                {"type": "InPlaceUpdateReady", "status": "False", "lastTransitionTime": HOUR_AGO}]}
    }))
}

#[test]
fn next_batch_waits_for_consistency_and_readiness() {
    // c1 still has its old imageID: nothing happens.
    assert!(!run(&two_batch_pod("c1-img1-ID", false, true)).changed());
    // c1 runs the new image but is not ready while the pre-check requires it: nothing happens.
    assert!(!run(&two_batch_pod("c1-img2-ID", true, false)).changed());
    // Upstream's "in-place update the next batch if containers have been consistent".
    let outcome = run(&two_batch_pod("c1-img2-ID", true, true));
    assert_eq!(image(&outcome.pod, "c2"), "c2-img2");
    assert_eq!(
        annotation(&outcome.pod, STATE_ANNOTATION),
        Some(
            r#"{"revision":"new-revision","updateTimestamp":"2024-05-01T09:00:00Z","lastContainerStatuses":{"c1":{"imageID":"c1-img1-ID"},"c2":{"imageID":"c2-img1-ID"}},"containerBatchesRecord":[{"timestamp":"2024-05-01T09:00:00Z","containers":["c1"]},{"timestamp":"2024-05-01T10:00:00Z","containers":["c2"]}]}"#
        )
    );
    // The condition stays False in that call.
    assert_eq!(
        condition(&outcome.pod, "InPlaceUpdateReady")
            .unwrap()
            .status,
        "False"
    );
}

/// Decision: like upstream, a remainder made only of `nextContainerResources` is never written by refresh; the
/// call goes on to set `InPlaceUpdateReady=True`, and the completion check keeps reporting the pending batch.
#[test]
fn resources_only_remainder_is_not_patched() {
    let pod = with_gate(json!({
        "metadata": {"labels": {"controller-revision-hash": "r"},
            "annotations": {STATE_ANNOTATION: format!(r#"{{"revision":"r","updateTimestamp":"{HOUR_AGO}","lastContainerStatuses":null,"updateResources":true,"nextContainerResources":{{"c2":{{"requests":{{"cpu":"2"}}}}}},"containerBatchesRecord":[{{"timestamp":"{HOUR_AGO}","containers":["c1"]}}]}}"#)}},
        "spec": {"containers": [
            {"name": "c1", "image": "a", "resources": {"requests": {"cpu": "2"}}},
            {"name": "c2", "image": "b", "resources": {"requests": {"cpu": "1"}}}]},
        "status": {
            "containerStatuses": [
                {"name": "c1", "imageID": "a", "image": "a", "ready": true, "restartCount": 0, "resources": {"requests": {"cpu": "2"}}},
                {"name": "c2", "imageID": "b", "image": "b", "ready": true, "restartCount": 0, "resources": {"requests": {"cpu": "1"}}}],
            "conditions": [{"type": "InPlaceUpdateReady", "status": "False"}]}
    }));
    let vertical = UpdateOptions {
        gates: FeatureGates {
            in_place_workload_vertical_scaling: true,
            ..FeatureGates::default()
        },
        ..options()
    };
    let outcome = refresh(&pod, at(NOW), &vertical).unwrap();
    assert_patches_reproduce(&pod, &outcome);
    assert_eq!(
        outcome
            .writes
            .iter()
            .map(|w| w.subresource)
            .collect::<Vec<_>>(),
        [Subresource::Status]
    );
    assert_eq!(
        condition(&outcome.pod, "InPlaceUpdateReady")
            .unwrap()
            .status,
        "True"
    );
    assert_eq!(
        outcome.pod.spec.as_ref().unwrap().containers[1].resources,
        pod.spec.as_ref().unwrap().containers[1].resources
    );
    assert!(matches!(
        kruise_inplace::completion::check(&outcome.pod, &vertical),
        Err(kruise_inplace::completion::Incomplete::NextBatches)
    ));
}

#[test]
fn invalid_state_is_an_error_naming_the_pod() {
    let pod = with_gate(
        json!({"metadata": {"name": "p", "namespace": "ns", "annotations": {STATE_ANNOTATION: "nope"}}, "spec": {}}),
    );
    let error = refresh(&pod, at(NOW), &options()).unwrap_err();
    assert!(
        error.to_string().starts_with(
            "pod ns/p: annotation apps.kruise.io/inplace-update-state: invalid value \"nope\""
        ),
        "{error}"
    );
}
