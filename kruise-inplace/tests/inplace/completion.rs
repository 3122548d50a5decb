//! Table tests of the completion check (upstream `DefaultCheckInPlaceUpdateCompleted`), from upstream's
//! TestCheckInPlaceUpdateCompleted plus the hash, env-from-metadata, vertical-scaling and `:latest` rules.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::needless_pass_by_value
)] // test code

use crate::support::*;
use k8s_openapi::api::core::v1::{Container, Pod};
use kruise_api::keys::inplace::{
    GRACE_ANNOTATION, RUNTIME_CONTAINERS_META_ANNOTATION, STATE_ANNOTATION,
};
use kruise_inplace::completion::{Incomplete, check, is_completed};
use kruise_inplace::{FeatureGates, UpdateOptions, container_hash, env_from_metadata};
use serde_json::{Value, json};

fn options() -> UpdateOptions {
    UpdateOptions::default()
}

fn with_state(state: &str, spec: Value, statuses: Value) -> Pod {
    pod(json!({
        "metadata": {"name": "p", "labels": {"controller-revision-hash": "new-revision"}, "annotations": {STATE_ANNOTATION: state}},
        "spec": spec,
        "status": {"containerStatuses": statuses}
    }))
}

const STATE_C1: &str =
    r#"{"revision":"new-revision","lastContainerStatuses":{"c1":{"imageID":"img01"}}}"#;

#[test]
fn upstream_cases() {
    assert!(is_completed(
        &pod(json!({"metadata": {"labels": {"controller-revision-hash": "new-revision"}}})),
        &options()
    ));
    let changed = with_state(
        STATE_C1,
        json!({"containers": []}),
        json!([{"name": "c1", "imageID": "img02", "image": "", "ready": false, "restartCount": 0}]),
    );
    assert!(is_completed(&changed, &options()));
    let unchanged = with_state(
        STATE_C1,
        json!({"containers": []}),
        json!([{"name": "c1", "imageID": "img01", "image": "image01", "ready": false, "restartCount": 0}]),
    );
    assert!(
        matches!(check(&unchanged, &options()), Err(Incomplete::ImageIdNotChanged { container }) if container == "c1")
    );
    let no_status = with_state(STATE_C1, json!({"containers": []}), json!([]));
    assert_eq!(
        check(&no_status, &options()).unwrap_err().to_string(),
        "not found statuses of containers [\"c1\"]"
    );
}

#[test]
fn latest_normalisation() {
    let case = |spec_image: &str, status_image: &str| {
        with_state(
            STATE_C1,
            json!({"containers": [{"name": "c1", "image": spec_image}]}),
            json!([{"name": "c1", "imageID": "img01", "image": status_image, "ready": true, "restartCount": 0}]),
        )
    };
    // Same imageID (the new image has the old digest) but the status shows the spec image: done.
    assert!(is_completed(&case("nginx:1.25", "nginx:1.25"), &options()));
    assert!(is_completed(&case("nginx", "nginx:latest"), &options()));
    // A registry port is a ':' too, so no ':latest' is appended and the images differ.
    assert!(!is_completed(
        &case("registry:5000/img", "registry:5000/img:latest"),
        &options()
    ));
    assert!(!is_completed(
        &case("nginx:1.25", "docker.io/library/nginx:1.25"),
        &options()
    ));
}

#[test]
fn grace_and_next_batches_are_not_complete() {
    let mut graced = with_state(STATE_C1, json!({"containers": []}), json!([]));
    graced
        .metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert(GRACE_ANNOTATION.into(), "{}".into());
    assert!(matches!(
        check(&graced, &options()),
        Err(Incomplete::InGracePeriod)
    ));
    for next in [
        r#""nextContainerImages":{"c2":"x"}"#,
        r#""nextContainerRefMetadata":{"c2":{"labels":{"a":"b"}}}"#,
        r#""nextContainerResources":{"c2":{}}"#,
    ] {
        let pod = with_state(
            &format!(r#"{{"revision":"r",{next}}}"#),
            json!({"containers": []}),
            json!([]),
        );
        assert!(
            matches!(check(&pod, &options()), Err(Incomplete::NextBatches)),
            "{next}"
        );
    }
    let bad = with_state("[]", json!({"containers": []}), json!([]));
    assert!(matches!(
        check(&bad, &options()),
        Err(Incomplete::Annotation(_))
    ));
}

fn meta(entries: &[(&str, &str, u64, u64)]) -> String {
    let containers: Vec<Value> = entries
        .iter()
        .map(|(name, id, plain, env)| json!({"name": name, "containerID": id, "restartCount": 1, "hashes": {"plainHash": plain, "extractedEnvFromMetadataHash": env}}))
        .collect();
    json!({"containers": containers}).to_string()
}

fn container(name: &str, image: &str) -> Container {
    Container {
        name: name.into(),
        image: Some(image.into()),
        ..Container::default()
    }
}

#[test]
fn plain_hash_path() {
    // imageID unchanged and status image different: the image-ID path says "not done" ...
    let mut pod = with_state(
        STATE_C1,
        json!({"containers": [{"name": "c1", "image": "nginx:1.25"}]}),
        json!([{"name": "c1", "imageID": "img01", "image": "docker.io/library/nginx:1.25", "ready": true, "restartCount": 1, "containerID": "containerd://c1-1"}]),
    );
    assert!(!is_completed(&pod, &options()));
    // ... but kubelet 1.31+ reported the hash of the spec container: done.
    let new_hash = container_hash::hash_v1_31(&container("c1", "nginx:1.25"));
    let annotations = pod.metadata.annotations.as_mut().unwrap();
    annotations.insert(
        RUNTIME_CONTAINERS_META_ANNOTATION.into(),
        meta(&[("c1", "containerd://c1-1", new_hash, 0)]),
    );
    assert!(is_completed(&pod, &options()));
    // The pre-1.31 hash of the spec container is accepted too.
    let old_hash =
        container_hash::hash_before_v1_31(&pod.spec.as_ref().unwrap().containers[0]).unwrap();
    pod.metadata.annotations.as_mut().unwrap().insert(
        RUNTIME_CONTAINERS_META_ANNOTATION.into(),
        meta(&[("c1", "containerd://c1-1", old_hash, 0)]),
    );
    assert!(is_completed(&pod, &options()));
    // A different container ID (an older report) falls back to image IDs.
    pod.metadata.annotations.as_mut().unwrap().insert(
        RUNTIME_CONTAINERS_META_ANNOTATION.into(),
        meta(&[("c1", "containerd://c1-0", new_hash, 0)]),
    );
    assert!(!is_completed(&pod, &options()));
    // The last entry of a name counts.
    pod.metadata.annotations.as_mut().unwrap().insert(
        RUNTIME_CONTAINERS_META_ANNOTATION.into(),
        meta(&[
            ("c1", "containerd://c1-0", new_hash, 0),
            ("c1", "containerd://c1-1", new_hash, 0),
        ]),
    );
    assert!(is_completed(&pod, &options()));
    // A runtime metadata annotation that does not parse is reported.
    pod.metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert(RUNTIME_CONTAINERS_META_ANNOTATION.into(), "{".into());
    assert!(matches!(
        check(&pod, &options()),
        Err(Incomplete::Annotation(_))
    ));
}

#[test]
fn env_from_metadata_needs_the_daemon() {
    let spec = json!({"containers": [{"name": "c1", "image": "a", "env": [
        {"name": "E", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['k']"}}}]}]});
    let statuses = json!([{"name": "c1", "imageID": "a", "image": "a", "ready": true, "restartCount": 1, "containerID": "c-1"}]);
    let mut pod = with_state(
        r#"{"revision":"r","updateEnvFromMetadata":true}"#,
        spec,
        statuses,
    );
    pod.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("k".into(), "v2".into());
    assert!(matches!(
        check(&pod, &options()),
        Err(Incomplete::RuntimeMetaMissing)
    ));
    let c1 = pod.spec.as_ref().unwrap().containers[0].clone();
    let expected = env_from_metadata::expected_hash(
        &c1,
        pod.metadata.labels.as_ref(),
        pod.metadata.annotations.as_ref(),
    );
    let plain = container_hash::hash_v1_31(&c1);
    pod.metadata.annotations.as_mut().unwrap().insert(
        RUNTIME_CONTAINERS_META_ANNOTATION.into(),
        meta(&[("c1", "c-1", plain, expected + 1)]),
    );
    assert!(matches!(
        check(&pod, &options()),
        Err(Incomplete::EnvHashInconsistent)
    ));
    pod.metadata.annotations.as_mut().unwrap().insert(
        RUNTIME_CONTAINERS_META_ANNOTATION.into(),
        meta(&[("c1", "c-1", plain, expected)]),
    );
    assert!(is_completed(&pod, &options()));
}

#[test]
fn env_hash_value() {
    // FNV-1a over `([]uint8)[...]` of `[{"name":"E","value":"v2"}]`, env vars sorted by name, literal values and
    // the SidecarSet version envs left out.
    let c: Container = serde_json::from_value(json!({"name": "c", "env": [
        {"name": "Z", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['a']"}}},
        {"name": "E", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['k']"}}},
        {"name": "L", "value": "literal"},
        {"name": "SIDECARSET_VERSION", "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['v']"}}}]})).unwrap();
    let labels = [("k".to_owned(), "v2".to_owned())].into();
    let expected = u64::from(container_hash::deep_hash_bytes(
        br#"[{"name":"E","value":"v2"},{"name":"Z"}]"#,
    ));
    assert_eq!(
        env_from_metadata::expected_hash(&c, Some(&labels), None),
        expected
    );
    let none = Container::default();
    assert_eq!(
        env_from_metadata::expected_hash(&none, None, None),
        u64::from(container_hash::deep_hash_bytes(b"null"))
    );
}

#[test]
fn vertical_scaling_waits_for_resized_status() {
    let vertical = UpdateOptions {
        gates: FeatureGates {
            in_place_workload_vertical_scaling: true,
            ..FeatureGates::default()
        },
        ..options()
    };
    let spec = json!({"containers": [{"name": "c1", "image": "a", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}}]});
    let status = |resources: Value| json!([{"name": "c1", "imageID": "a", "image": "a", "ready": true, "restartCount": 0, "resources": resources}]);
    let state = r#"{"revision":"r","updateResources":true}"#;
    assert!(is_completed(
        &with_state(
            state,
            spec.clone(),
            status(json!({"requests": {"cpu": "1000m"}, "limits": {"cpu": "2"}}))
        ),
        &vertical
    ));
    let pending = with_state(
        state,
        spec.clone(),
        status(json!({"requests": {"cpu": "500m"}, "limits": {"cpu": "2"}})),
    );
    assert!(matches!(
        check(&pending, &vertical),
        Err(Incomplete::ResourcesNotChanged { .. })
    ));
    // Without the gate, resources are not looked at.
    assert!(is_completed(&pending, &options()));
    let missing = with_state(state, spec, json!([]));
    assert!(matches!(
        check(&missing, &vertical),
        Err(Incomplete::ResourceStatusMissing)
    ));
}
