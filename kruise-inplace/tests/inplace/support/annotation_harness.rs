//! The fuzz harness of the in-place annotation parsers, shared by `fuzz/fuzz_targets/inplace_state.rs` and the
//! deterministic corpus test (`tests/inplace/annotation_corpus.rs`).
//!
//! Input: up to three NUL-separated values used as the `apps.kruise.io/inplace-update-state`,
//! `apps.kruise.io/inplace-update-grace` and `apps.kruise.io/runtime-containers-meta` annotations of a pod with
//! a readiness gate, two containers and their statuses. Every parser and entry point must return (never panic),
//! and what parses must keep its canonical form through another round trip.

use k8s_openapi::api::core::v1::Pod;
use kruise_api::keys::inplace::{
    GRACE_ANNOTATION, RUNTIME_CONTAINERS_META_ANNOTATION, STATE_ANNOTATION,
};
use kruise_inplace::{
    FeatureGates, UpdateOptions, UpdateSpec, apply, completion, quantity, refresh, state,
};

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\u{0}');
    let state_value = parts.next().unwrap_or_default();
    let grace_value = parts.next();
    let meta_value = parts.next();

    if let Ok(parsed) = state::parse_state(state_value) {
        let written = state::format_state(&parsed);
        let again = state::parse_state(&written).expect("a written state parses");
        assert_eq!(state::format_state(&again), written, "state round trip");
    }
    let mut metadata_patches = Vec::new();
    for candidate in [Some(state_value), grace_value].into_iter().flatten() {
        if let Ok(spec) = UpdateSpec::from_json(candidate) {
            let written = spec.to_json();
            let again = UpdateSpec::from_json(&written).expect("a written spec parses");
            assert_eq!(again.to_json(), written, "update spec round trip");
        }
        if let Ok(parsed) = quantity::parse(candidate)
            && let Some(canonical) = parsed.to_canonical()
        {
            let again = quantity::parse(&canonical).expect("canonical parses");
            assert_eq!(again, parsed, "{candidate}");
        }
        metadata_patches.push(candidate);
    }

    let mut pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "fuzz", "namespace": "default", "resourceVersion": "1",
            "labels": {"controller-revision-hash": "r"}, "annotations": {}},
        "spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
            "containers": [
                {"name": "c1", "image": "a:1", "resources": {"requests": {"cpu": "1"}},
                 "env": [{"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef": {"key": "p_1"}}}]},
                {"name": "c2", "image": "b"}]},
        "status": {"containerStatuses": [
            {"name": "c1", "image": "a:1", "imageID": "x", "ready": true, "restartCount": 0, "containerID": "c1"},
            {"name": "c2", "image": "b:latest", "imageID": "y", "ready": false, "restartCount": 0}]}
    }))
    .expect("the base pod parses");
    let annotations = pod
        .metadata
        .annotations
        .get_or_insert_with(Default::default);
    annotations.insert(STATE_ANNOTATION.to_owned(), state_value.to_owned());
    if let Some(grace) = grace_value {
        annotations.insert(GRACE_ANNOTATION.to_owned(), grace.to_owned());
    }
    if let Some(meta) = meta_value {
        annotations.insert(
            RUNTIME_CONTAINERS_META_ANNOTATION.to_owned(),
            meta.to_owned(),
        );
    }
    let now = "2024-05-01T10:00:00Z".parse().expect("a timestamp");
    // Each candidate as the metadata patch of an in-place update (the strategic merge of `apply`).
    for patch in metadata_patches {
        let spec = UpdateSpec {
            revision: "r2".to_owned(),
            meta_data_patch: Some(patch.as_bytes().to_vec()),
            ..UpdateSpec::default()
        };
        let _ = apply(&pod, &spec, now, &UpdateOptions::default());
    }
    for vertical in [false, true] {
        let options = UpdateOptions {
            gates: FeatureGates {
                in_place_workload_vertical_scaling: vertical,
                ..FeatureGates::default()
            },
            ..UpdateOptions::default()
        };
        let _ = completion::check(&pod, &options);
        if let Ok(outcome) = refresh(&pod, now, &options) {
            let mut document = serde_json::to_value(&pod).expect("a pod serialises");
            for write in &outcome.writes {
                json_patch::patch(&mut document, &write.patch).expect("an outcome's patch applies");
            }
            assert_eq!(
                document,
                serde_json::to_value(&outcome.pod).expect("a pod serialises")
            );
        }
    }
}
