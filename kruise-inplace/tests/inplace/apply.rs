//! Table tests of writing an update into a pod: container batches (upstream's TestDefaultPatchUpdateSpecToPod),
//! the first-record-wins rule, the grace-period variant, the readiness condition and the patches.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::needless_pass_by_value
)] // test code

use std::collections::BTreeMap;

use crate::support::*;
use k8s_openapi::api::core::v1::{Pod, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::inplace::{ContainerRefMetadata, InPlaceUpdateState};
use kruise_api::keys::inplace::{GRACE_ANNOTATION, LEGACY_STATE_ANNOTATION, STATE_ANNOTATION};
use kruise_inplace::batch::patch_spec_to_pod;
use kruise_inplace::{
    FeatureGates, RevisionLabels, Subresource, UpdateOptions, UpdateSpec, apply, apply_with,
};
use serde_json::json;

fn barrier(key: &str) -> serde_json::Value {
    json!({"name": "KRUISE_CONTAINER_BARRIER", "valueFrom": {"configMapKeyRef": {"key": key}}})
}

fn field_ref(path: &str) -> serde_json::Value {
    json!({"name": "config", "valueFrom": {"fieldRef": {"fieldPath": path}}})
}

/// Upstream's givenPod: four containers with priorities 20, 10, 0, 0 reading labels / annotations.
fn given_pod() -> Pod {
    pod(json!({
        "metadata": {"labels": {"label-k1": "foo", "label-k2": "foo"}, "annotations": {"annotation-k1": "foo"}},
        "spec": {"containers": [
            {"name": "c1", "image": "c1-img", "env": [barrier("p_20"), field_ref("metadata.labels['label-k1']")]},
            {"name": "c2", "image": "c2-img", "env": [barrier("p_10"), field_ref("metadata.labels['label-k2']")]},
            {"name": "c3", "image": "c3-img", "env": [barrier("p_0"), field_ref("metadata.labels['label-k2']")]},
            {"name": "c4", "image": "c4-img", "env": [barrier("p_0"), field_ref("metadata.annotations['annotation-k1']")]}
        ]},
        "status": {"containerStatuses": [
            {"name": "c1", "imageID": "containerd://c1-img", "image": "", "ready": false, "restartCount": 0},
            {"name": "c2", "imageID": "containerd://c2-img", "image": "", "ready": false, "restartCount": 0},
            {"name": "c3", "imageID": "containerd://c3-img", "image": "", "ready": false, "restartCount": 0},
            {"name": "c4", "imageID": "containerd://c4-img", "image": "", "ready": false, "restartCount": 0}
        ]}
    }))
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn ref_labels(pairs: &[(&str, &str)]) -> ContainerRefMetadata {
    ContainerRefMetadata {
        labels: map(pairs),
        ..ContainerRefMetadata::default()
    }
}

fn ref_annotations(pairs: &[(&str, &str)]) -> ContainerRefMetadata {
    ContainerRefMetadata {
        annotations: map(pairs),
        ..ContainerRefMetadata::default()
    }
}

struct Case {
    name: &'static str,
    spec: UpdateSpec,
    state: serde_json::Value,
    expected_state: serde_json::Value,
    images: &'static [(&'static str, &'static str)],
    labels: &'static [(&'static str, &'static str)],
    annotations: &'static [(&'static str, &'static str)],
}

fn spec(
    images: &[(&str, &str)],
    metadata: &[(&str, ContainerRefMetadata)],
    patch: Option<&str>,
) -> UpdateSpec {
    UpdateSpec {
        container_images: map(images),
        container_ref_metadata: metadata
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
        meta_data_patch: patch.map(|p| p.as_bytes().to_vec()),
        ..UpdateSpec::default()
    }
}

const NOW: &str = "2024-05-01T10:00:00Z";

fn batch(containers: &[&str]) -> serde_json::Value {
    json!({"timestamp": NOW, "containers": containers})
}

fn state_json(value: serde_json::Value) -> InPlaceUpdateState {
    let mut value = value;
    let fields = value.as_object_mut().unwrap();
    fields.entry("revision").or_insert(json!(""));
    fields.entry("updateTimestamp").or_insert(json!(NOW));
    serde_json::from_value(value).unwrap()
}

#[test]
fn upstream_batches() {
    let annotation_patch = Some(r#"{"metadata":{"annotations":{"new-key": "bar"}}}"#);
    let cases = vec![
        Case {
            name: "update a single container image",
            spec: spec(&[("c1", "c1-img-new")], &[], None),
            state: json!({}),
            expected_state: json!({"lastContainerStatuses": {"c1": {"imageID": "containerd://c1-img"}}, "containerBatchesRecord": [batch(&["c1"])]}),
            images: &[("c1", "c1-img-new")],
            labels: &[],
            annotations: &[],
        },
        Case {
            name: "update two container images without priority",
            spec: spec(
                &[("c3", "c3-img-new"), ("c4", "c4-img-new")],
                &[],
                annotation_patch,
            ),
            state: json!({}),
            expected_state: json!({"lastContainerStatuses": {"c3": {"imageID": "containerd://c3-img"}, "c4": {"imageID": "containerd://c4-img"}}, "containerBatchesRecord": [batch(&["c3", "c4"])]}),
            images: &[("c3", "c3-img-new"), ("c4", "c4-img-new")],
            labels: &[],
            annotations: &[("new-key", "bar")],
        },
        Case {
            name: "update two container image and env from metadata without priority",
            spec: spec(
                &[("c3", "c3-img-new")],
                &[("c4", ref_annotations(&[("annotation-k1", "bar")]))],
                annotation_patch,
            ),
            state: json!({}),
            expected_state: json!({"lastContainerStatuses": {"c3": {"imageID": "containerd://c3-img"}}, "containerBatchesRecord": [batch(&["c3", "c4"])]}),
            images: &[("c3", "c3-img-new")],
            labels: &[],
            annotations: &[("new-key", "bar"), ("annotation-k1", "bar")],
        },
        Case {
            name: "update two container images with different priorities, batch 1st",
            spec: spec(
                &[("c1", "c1-img-new"), ("c2", "c2-img-new")],
                &[],
                annotation_patch,
            ),
            state: json!({}),
            expected_state: json!({"lastContainerStatuses": {"c1": {"imageID": "containerd://c1-img"}}, "nextContainerImages": {"c2": "c2-img-new"}, "preCheckBeforeNext": {"containersRequiredReady": ["c1"]}, "containerBatchesRecord": [batch(&["c1"])]}),
            images: &[("c1", "c1-img-new")],
            labels: &[],
            annotations: &[("new-key", "bar")],
        },
        Case {
            name: "update two container images with different priorities, batch 2nd",
            spec: spec(&[("c2", "c2-img-new")], &[], None),
            state: json!({"lastContainerStatuses": {"c1": {"imageID": "containerd://c1-img-old"}}, "nextContainerImages": {"c2": "c2-img-new"}, "preCheckBeforeNext": {"containersRequiredReady": ["c1"]}, "containerBatchesRecord": [batch(&["c1"])]}),
            expected_state: json!({"lastContainerStatuses": {"c1": {"imageID": "containerd://c1-img-old"}, "c2": {"imageID": "containerd://c2-img"}}, "containerBatchesRecord": [batch(&["c1"]), batch(&["c2"])]}),
            images: &[("c2", "c2-img-new")],
            labels: &[],
            annotations: &[],
        },
        Case {
            name: "three containers, batch 1st",
            spec: spec(
                &[
                    ("c1", "c1-img-new"),
                    ("c2", "c2-img-new"),
                    ("c4", "c4-img-new"),
                ],
                &[],
                None,
            ),
            state: json!({}),
            expected_state: json!({"lastContainerStatuses": {"c1": {"imageID": "containerd://c1-img"}}, "nextContainerImages": {"c2": "c2-img-new", "c4": "c4-img-new"}, "preCheckBeforeNext": {"containersRequiredReady": ["c1"]}, "containerBatchesRecord": [batch(&["c1"])]}),
            images: &[("c1", "c1-img-new")],
            labels: &[],
            annotations: &[],
        },
        Case {
            name: "three containers, batch 2nd",
            spec: spec(&[("c2", "c2-img-new"), ("c4", "c4-img-new")], &[], None),
            state: json!({"lastContainerStatuses": {"c1": {"imageID": "containerd://c1-img"}}, "nextContainerImages": {"c2": "c2-img-new", "c4": "c4-img-new"}, "preCheckBeforeNext": {"containersRequiredReady": ["c1"]}, "containerBatchesRecord": [batch(&["c1"])]}),
            expected_state: json!({"lastContainerStatuses": {"c1": {"imageID": "containerd://c1-img"}, "c2": {"imageID": "containerd://c2-img"}}, "nextContainerImages": {"c4": "c4-img-new"}, "preCheckBeforeNext": {"containersRequiredReady": ["c2"]}, "containerBatchesRecord": [batch(&["c1"]), batch(&["c2"])]}),
            images: &[("c2", "c2-img-new")],
            labels: &[],
            annotations: &[],
        },
        Case {
            name: "three containers, batch 3rd",
            spec: spec(&[("c4", "c4-img-new")], &[], None),
            state: json!({"lastContainerStatuses": {"c1": {"imageID": "containerd://c1-img"}, "c2": {"imageID": "containerd://c2-img"}}, "nextContainerImages": {"c4": "c4-img-new"}, "preCheckBeforeNext": {"containersRequiredReady": ["c2"]}, "containerBatchesRecord": [batch(&["c1"]), batch(&["c2"])]}),
            expected_state: json!({"lastContainerStatuses": {"c1": {"imageID": "containerd://c1-img"}, "c2": {"imageID": "containerd://c2-img"}, "c4": {"imageID": "containerd://c4-img"}}, "containerBatchesRecord": [batch(&["c1"]), batch(&["c2"]), batch(&["c4"])]}),
            images: &[("c4", "c4-img-new")],
            labels: &[],
            annotations: &[],
        },
        Case {
            name: "four containers with env from metadata, batch 1st",
            spec: spec(
                &[
                    ("c1", "c1-img-new"),
                    ("c2", "c2-img-new"),
                    ("c4", "c4-img-new"),
                ],
                &[
                    ("c2", ref_labels(&[("label-k2", "bar")])),
                    ("c3", ref_labels(&[("label-k2", "bar")])),
                ],
                None,
            ),
            state: json!({}),
            expected_state: json!({"lastContainerStatuses": {"c1": {"imageID": "containerd://c1-img"}}, "nextContainerImages": {"c2": "c2-img-new", "c4": "c4-img-new"},
                "nextContainerRefMetadata": {"c2": {"labels": {"label-k2": "bar"}}, "c3": {"labels": {"label-k2": "bar"}}},
                "preCheckBeforeNext": {"containersRequiredReady": ["c1"]}, "containerBatchesRecord": [batch(&["c1"])]}),
            images: &[("c1", "c1-img-new")],
            labels: &[],
            annotations: &[],
        },
        Case {
            // c3 (priority 0) joins c2 (priority 10) because they read the same label.
            name: "four containers with env from metadata, batch 2nd",
            spec: spec(
                &[("c2", "c2-img-new"), ("c4", "c4-img-new")],
                &[
                    ("c2", ref_labels(&[("label-k2", "bar")])),
                    ("c3", ref_labels(&[("label-k2", "bar")])),
                ],
                None,
            ),
            state: json!({"lastContainerStatuses": {"c1": {"imageID": "containerd://c1-img"}}, "nextContainerImages": {"c2": "c2-img-new", "c4": "c4-img-new"},
                "nextContainerRefMetadata": {"c2": {"labels": {"label-k2": "bar"}}, "c3": {"labels": {"label-k2": "bar"}}},
                "preCheckBeforeNext": {"containersRequiredReady": ["c1"]}, "containerBatchesRecord": [batch(&["c1"])]}),
            expected_state: json!({"lastContainerStatuses": {"c1": {"imageID": "containerd://c1-img"}, "c2": {"imageID": "containerd://c2-img"}}, "nextContainerImages": {"c4": "c4-img-new"},
                "preCheckBeforeNext": {"containersRequiredReady": ["c2", "c3"]}, "containerBatchesRecord": [batch(&["c1"]), batch(&["c2", "c3"])]}),
            images: &[("c2", "c2-img-new")],
            labels: &[("label-k2", "bar")],
            annotations: &[],
        },
    ];
    let now = at(NOW);
    for case in cases {
        let mut pod = given_pod();
        let mut state = state_json(case.state);
        patch_spec_to_pod(
            &mut pod,
            &case.spec,
            &mut state,
            now,
            &FeatureGates::default(),
        )
        .unwrap();
        assert_eq!(
            state,
            state_json(case.expected_state),
            "{}: state",
            case.name
        );
        let mut expected = given_pod();
        for container in &mut expected.spec.as_mut().unwrap().containers {
            if let Some((_, image)) = case.images.iter().find(|(name, _)| *name == container.name) {
                container.image = Some((*image).to_owned());
            }
        }
        expected
            .metadata
            .labels
            .as_mut()
            .unwrap()
            .extend(map(case.labels));
        let annotations = expected.metadata.annotations.as_mut().unwrap();
        annotations.extend(map(case.annotations));
        annotations.insert(
            STATE_ANNOTATION.into(),
            kruise_inplace::state::format_state(&state),
        );
        assert_eq!(pod, expected, "{}: pod", case.name);
    }
}

/// The first `lastContainerStatuses` record of a container is never overwritten (upstream's "else" branch
/// updates a copy): a container whose image changes again keeps the imageID recorded first.
#[test]
fn first_last_container_status_record_wins() {
    let now = at(NOW);
    let mut pod = given_pod();
    let mut state =
        state_json(json!({"lastContainerStatuses": {"c3": {"imageID": "containerd://first"}}}));
    patch_spec_to_pod(
        &mut pod,
        &spec(&[("c3", "c3-img-new")], &[], None),
        &mut state,
        now,
        &FeatureGates::default(),
    )
    .unwrap();
    assert_eq!(
        state.last_container_statuses.unwrap()["c3"].image_id,
        "containerd://first"
    );
    // A container without status gets no record at all, and no map is created without a change.
    let mut no_status = given_pod();
    no_status.status = None;
    let mut state = state_json(json!({}));
    patch_spec_to_pod(
        &mut no_status,
        &spec(&[("c3", "x")], &[], None),
        &mut state,
        now,
        &FeatureGates::default(),
    )
    .unwrap();
    assert_eq!(state.last_container_statuses, None);
    assert!(
        annotation(&no_status, STATE_ANNOTATION)
            .unwrap()
            .contains(r#""lastContainerStatuses":null"#)
    );
}

fn simple_pod() -> Pod {
    pod(json!({
        "metadata": {"name": "web-0", "namespace": "default", "resourceVersion": "42",
            "labels": {"controller-revision-hash": "web-old"},
            "annotations": {"inplace-update-state": "legacy", "apps.kruise.io/inplace-update-grace": "stale"}},
        "spec": {"readinessGates": [{"conditionType": "InPlaceUpdateReady"}],
            "containers": [{"name": "main", "image": "nginx:1.24"}]},
        "status": {"conditions": [
            {"type": "Ready", "status": "True"}, {"type": "ContainersReady", "status": "True"},
            {"type": "InPlaceUpdateReady", "status": "True"}],
            "containerStatuses": [{"name": "main", "image": "nginx:1.24", "imageID": "sha256:old", "ready": true, "restartCount": 0}]}
    }))
}

fn image_spec(revision: &str, image: &str) -> UpdateSpec {
    UpdateSpec {
        revision: revision.into(),
        container_images: map(&[("main", image)]),
        ..UpdateSpec::default()
    }
}

#[test]
fn apply_writes_condition_first_then_the_pod() {
    let pod = simple_pod();
    let now = at(NOW);
    let outcome = apply(
        &pod,
        &image_spec("web-new", "nginx:1.25"),
        now,
        &UpdateOptions::default(),
    )
    .unwrap();
    assert_patches_reproduce(&pod, &outcome);
    assert_eq!(
        outcome
            .writes
            .iter()
            .map(|w| w.subresource)
            .collect::<Vec<_>>(),
        [Subresource::Status, Subresource::Pod]
    );
    let updated = &outcome.pod;
    let gate = condition(updated, "InPlaceUpdateReady").unwrap();
    assert_eq!(
        (gate.status.as_str(), gate.reason.as_deref()),
        ("False", Some("StartInPlaceUpdate"))
    );
    assert_eq!(condition(updated, "Ready").unwrap().status, "False");
    assert_eq!(label(updated, "controller-revision-hash"), Some("web-new"));
    assert_eq!(image(updated, "main"), "nginx:1.25");
    assert_eq!(
        annotation(updated, STATE_ANNOTATION),
        Some(
            r#"{"revision":"web-new","updateTimestamp":"2024-05-01T10:00:00Z","lastContainerStatuses":{"main":{"imageID":"sha256:old"}},"updateImages":true,"containerBatchesRecord":[{"timestamp":"2024-05-01T10:00:00Z","containers":["main"]}]}"#
        )
    );
    assert_eq!(
        annotation(updated, LEGACY_STATE_ANNOTATION),
        None,
        "the legacy key is removed"
    );
    assert_eq!(
        annotation(updated, GRACE_ANNOTATION),
        None,
        "a stale grace annotation is removed"
    );
    assert_eq!(outcome.requeue_after, None);
    // The status write is tested against the observed resourceVersion; the pod write is not.
    let status = outcome.patch(Subresource::Status).unwrap();
    assert_eq!(
        serde_json::to_value(&status.0[0]).unwrap(),
        json!({"op": "test", "path": "/metadata/resourceVersion", "value": "42"})
    );
    let pod_patch = serde_json::to_value(outcome.patch(Subresource::Pod).unwrap()).unwrap();
    assert!(pod_patch.as_array().unwrap().iter().any(|op| op
        == &json!({"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:1.25"})));
}

#[test]
fn no_gate_no_condition() {
    let mut pod = simple_pod();
    pod.spec.as_mut().unwrap().readiness_gates = None;
    let outcome = apply(
        &pod,
        &image_spec("web-new", "nginx:1.25"),
        at(NOW),
        &UpdateOptions::default(),
    )
    .unwrap();
    assert_patches_reproduce(&pod, &outcome);
    assert_eq!(outcome.writes.len(), 1);
    assert_eq!(
        condition(&outcome.pod, "InPlaceUpdateReady")
            .unwrap()
            .status,
        "True"
    );
}

#[test]
fn grace_period_only_stores_the_spec() {
    let pod = simple_pod();
    let options = UpdateOptions {
        grace_period_seconds: 30,
        ..UpdateOptions::default()
    };
    let spec = UpdateSpec {
        grace_seconds: 30,
        ..image_spec("web-new", "nginx:1.25")
    };
    let outcome = apply(&pod, &spec, at(NOW), &options).unwrap();
    assert_patches_reproduce(&pod, &outcome);
    let updated = &outcome.pod;
    assert_eq!(
        image(updated, "main"),
        "nginx:1.24",
        "the spec is not touched yet"
    );
    assert_eq!(
        annotation(updated, GRACE_ANNOTATION),
        Some(r#"{"revision":"web-new","containerImages":{"main":"nginx:1.25"},"graceSeconds":30}"#)
    );
    assert_eq!(
        annotation(updated, STATE_ANNOTATION),
        Some(
            r#"{"revision":"web-new","updateTimestamp":"2024-05-01T10:00:00Z","lastContainerStatuses":null,"updateImages":true}"#
        )
    );
    assert_eq!(
        outcome.requeue_after,
        Some(std::time::Duration::from_secs(30))
    );
    assert_eq!(
        condition(updated, "InPlaceUpdateReady").unwrap().status,
        "False"
    );
}

#[test]
fn cloneset_revision_labels_and_additional_changes() {
    let pod = simple_pod();
    let options = UpdateOptions {
        revision_labels: RevisionLabels::CloneSet { short_hash: false },
        ..UpdateOptions::default()
    };
    let outcome = apply_with(
        &pod,
        &image_spec("cs-demo-7cb9c88699", "nginx:1.25"),
        at(NOW),
        &options,
        |pod| {
            pod.metadata
                .labels
                .as_mut()
                .unwrap()
                .insert("lifecycle.apps.kruise.io/state".into(), "Updating".into());
        },
    )
    .unwrap();
    assert_patches_reproduce(&pod, &outcome);
    assert_eq!(
        label(&outcome.pod, "controller-revision-hash"),
        Some("cs-demo-7cb9c88699")
    );
    assert_eq!(label(&outcome.pod, "pod-template-hash"), Some("7cb9c88699"));
    assert_eq!(
        label(&outcome.pod, "lifecycle.apps.kruise.io/state"),
        Some("Updating")
    );
    let short = UpdateOptions {
        revision_labels: RevisionLabels::CloneSet { short_hash: true },
        ..UpdateOptions::default()
    };
    let outcome = apply(
        &pod,
        &image_spec("cs-demo-7cb9c88699", "nginx:1.25"),
        at(NOW),
        &short,
    )
    .unwrap();
    assert_eq!(
        label(&outcome.pod, "controller-revision-hash"),
        Some("7cb9c88699")
    );
}

#[test]
fn metadata_patch_and_env_metadata_reach_the_pod() {
    let mut pod = simple_pod();
    pod.metadata.finalizers = Some(vec!["keep".into(), "fz1".into()]);
    let spec = UpdateSpec {
        revision: "r2".into(),
        meta_data_patch: Some(br#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["fz1"],"$setElementOrder/finalizers":["fz2"],"finalizers":["fz2"],"labels":{"k1":"v1"}}}"#.to_vec()),
        container_ref_metadata: [("main".to_owned(), ref_labels(&[("env-label", "2")]))].into(),
        update_env_from_metadata: true,
        ..UpdateSpec::default()
    };
    let outcome = apply(&pod, &spec, at(NOW), &UpdateOptions::default()).unwrap();
    assert_patches_reproduce(&pod, &outcome);
    // Items new to the pod go before the ones only the pod has (upstream's mergeSortedSlice).
    assert_eq!(
        outcome.pod.metadata.finalizers,
        Some(vec!["fz2".into(), "keep".into()])
    );
    assert_eq!(label(&outcome.pod, "k1"), Some("v1"));
    assert_eq!(label(&outcome.pod, "env-label"), Some("2"));
    let state = state(&outcome.pod);
    assert!(state.update_env_from_metadata && !state.update_images);
    assert_eq!(state.last_container_statuses, None);
    // A patch that is not JSON is an error naming the pod.
    let bad = UpdateSpec {
        meta_data_patch: Some(b"{".to_vec()),
        ..UpdateSpec::default()
    };
    let error = apply(&pod, &bad, at(NOW), &UpdateOptions::default()).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("pod default/web-0: metaDataPatch: patch is not JSON"),
        "{error}"
    );
}

fn resources(cpu: &str) -> ResourceRequirements {
    ResourceRequirements {
        requests: Some([("cpu".to_owned(), Quantity(cpu.into()))].into()),
        ..ResourceRequirements::default()
    }
}

#[test]
fn vertical_scaling_writes_resources_through_resize() {
    let mut pod = simple_pod();
    pod.spec.as_mut().unwrap().containers[0].resources = Some(resources("1"));
    pod.spec.as_mut().unwrap().containers[0].resize_policy = Some(vec![
        serde_json::from_value(
            json!({"resourceName": "memory", "restartPolicy": "RestartContainer"}),
        )
        .unwrap(),
    ]);
    let spec = UpdateSpec {
        revision: "r2".into(),
        container_resources: [("main".to_owned(), resources("2"))].into(),
        ..UpdateSpec::default()
    };
    let vertical = UpdateOptions {
        gates: FeatureGates {
            in_place_workload_vertical_scaling: true,
            ..FeatureGates::default()
        },
        ..UpdateOptions::default()
    };

    // Only cpu changes and only memory restarts the container: the pod stays ready.
    let outcome = apply(&pod, &spec, at(NOW), &vertical).unwrap();
    assert_patches_reproduce(&pod, &outcome);
    assert_eq!(
        outcome
            .writes
            .iter()
            .map(|w| w.subresource)
            .collect::<Vec<_>>(),
        [Subresource::Resize, Subresource::Pod]
    );
    assert_eq!(
        condition(&outcome.pod, "InPlaceUpdateReady")
            .unwrap()
            .status,
        "True"
    );
    assert_eq!(
        outcome.pod.spec.as_ref().unwrap().containers[0].resources,
        Some(resources("2"))
    );
    assert!(state(&outcome.pod).update_resources);
    let resize = serde_json::to_value(outcome.patch(Subresource::Resize).unwrap()).unwrap();
    assert_eq!(
        resize[1],
        json!({"op": "replace", "path": "/spec/containers/0/resources", "value": {"requests": {"cpu": "2"}}})
    );

    // Without the resize subresource the resources go into the pod write.
    let old_cluster = UpdateOptions {
        resize_subresource: false,
        ..vertical.clone()
    };
    let outcome = apply(&pod, &spec, at(NOW), &old_cluster).unwrap();
    assert_patches_reproduce(&pod, &outcome);
    assert_eq!(
        outcome
            .writes
            .iter()
            .map(|w| w.subresource)
            .collect::<Vec<_>>(),
        [Subresource::Pod]
    );

    // A cpu RestartContainer policy makes the pod go not ready.
    let mut restarting = pod.clone();
    restarting.spec.as_mut().unwrap().containers[0].resize_policy = Some(vec![
        serde_json::from_value(json!({"resourceName": "cpu", "restartPolicy": "RestartContainer"}))
            .unwrap(),
    ]);
    let outcome = apply(&restarting, &spec, at(NOW), &vertical).unwrap();
    assert_eq!(
        condition(&outcome.pod, "InPlaceUpdateReady")
            .unwrap()
            .status,
        "False"
    );

    // Without the gate, resources in a spec are ignored when patching.
    let outcome = apply(&pod, &spec, at(NOW), &UpdateOptions::default()).unwrap();
    assert_eq!(
        outcome.pod.spec.as_ref().unwrap().containers[0].resources,
        Some(resources("1"))
    );
}

#[test]
fn timestamps_are_second_precision() {
    let pod = simple_pod();
    let now: k8s_openapi::jiff::Timestamp = "2024-05-01T10:00:00.987654321Z".parse().unwrap();
    let outcome = apply(
        &pod,
        &image_spec("r", "nginx:2"),
        now,
        &UpdateOptions::default(),
    )
    .unwrap();
    let state = state(&outcome.pod);
    assert_eq!(
        state.update_timestamp,
        Time("2024-05-01T10:00:00Z".parse().unwrap())
    );
}
