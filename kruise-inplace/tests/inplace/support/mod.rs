//! Helpers shared by the integration test modules (`crate::support::...`): pods from JSON, a simulated kubelet
//! and kruise-daemon, and a check that an outcome's patches reproduce its pod; and the fuzz harness of the
//! annotation parsers (`annotation_harness`).

// Test code: each test module uses some of these; a panic is a failed test.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::needless_pass_by_value
)]

pub mod annotation_harness;

use k8s_openapi::api::core::v1::{ContainerStatus, Pod};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kruise_api::inplace::{RuntimeContainerHashes, RuntimeContainerMeta, RuntimeContainerMetaSet};
use kruise_inplace::{Outcome, Subresource, container_hash, env_from_metadata};
use serde_json::Value;

pub fn pod(value: Value) -> Pod {
    serde_json::from_value(value).unwrap()
}

pub fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

pub fn plus(now: Timestamp, seconds: i64) -> Timestamp {
    now.checked_add(SignedDuration::from_secs(seconds)).unwrap()
}

pub fn annotation<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

pub fn label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

pub fn image<'a>(pod: &'a Pod, container: &str) -> &'a str {
    pod.spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .find(|c| c.name == container)
        .and_then(|c| c.image.as_deref())
        .unwrap_or("")
}

pub fn condition<'a>(
    pod: &'a Pod,
    type_: &str,
) -> Option<&'a k8s_openapi::api::core::v1::PodCondition> {
    pod.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
}

pub fn state(pod: &Pod) -> kruise_api::inplace::InPlaceUpdateState {
    kruise_inplace::state::read_state(pod).unwrap().unwrap()
}

/// Applies every write of the outcome, in order, to the JSON of `before` and checks the result is the JSON of
/// the outcome's pod; also checks that only the first write tests the resourceVersion.
pub fn assert_patches_reproduce(before: &Pod, outcome: &Outcome) {
    let mut document = serde_json::to_value(before).unwrap();
    for (index, write) in outcome.writes.iter().enumerate() {
        let tests = write
            .patch
            .0
            .iter()
            .filter(|op| matches!(op, json_patch::PatchOperation::Test(_)))
            .count();
        let expected_tests = usize::from(index == 0 && before.metadata.resource_version.is_some());
        assert_eq!(
            tests, expected_tests,
            "write {index} ({:?})",
            write.subresource
        );
        json_patch::patch(&mut document, &write.patch).unwrap_or_else(|error| {
            panic!("write {index} does not apply: {error}: {:?}", write.patch)
        });
        if write.subresource == Subresource::Status {
            assert!(
                write
                    .patch
                    .0
                    .iter()
                    .all(|op| op.path().as_str().starts_with("/status")
                        || op.path().as_str() == "/metadata/resourceVersion"),
                "status write touches more than status: {:?}",
                write.patch
            );
        }
    }
    assert_eq!(document, serde_json::to_value(&outcome.pod).unwrap());
}

fn digest(image: &str) -> String {
    format!(
        "sha256:{:016x}",
        u64::from(container_hash::deep_hash_bytes(image.as_bytes()))
    )
}

/// A running pod's container statuses for its spec: every container ready, running its spec image.
pub fn running_statuses(pod: &mut Pod) {
    let containers = pod.spec.as_ref().unwrap().containers.clone();
    let status = pod.status.get_or_insert_with(Default::default);
    status.phase = Some("Running".into());
    status.container_statuses = Some(
        containers
            .iter()
            .map(|c| {
                let image = c.image.clone().unwrap_or_default();
                ContainerStatus {
                    name: c.name.clone(),
                    image_id: digest(&image),
                    image,
                    ready: true,
                    container_id: Some(format!("containerd://{}-0", c.name)),
                    ..ContainerStatus::default()
                }
            })
            .collect(),
    );
}

/// One step of a simulated kubelet: a container whose spec image differs from the image it runs is restarted
/// with the new image (not ready yet); a restarted container becomes ready on the next step.
pub fn kubelet_step(pod: &mut Pod) {
    let containers = pod.spec.as_ref().unwrap().containers.clone();
    let statuses = pod
        .status
        .as_mut()
        .unwrap()
        .container_statuses
        .as_mut()
        .unwrap();
    for container in &containers {
        let status = statuses
            .iter_mut()
            .find(|s| s.name == container.name)
            .unwrap();
        let wanted = container.image.clone().unwrap_or_default();
        if status.image != wanted {
            restart(status, &wanted);
        } else if !status.ready {
            status.ready = true;
        }
    }
}

fn restart(status: &mut ContainerStatus, image: &str) {
    status.image = image.to_owned();
    status.image_id = digest(image);
    status.restart_count += 1;
    status.container_id = Some(format!(
        "containerd://{}-{}",
        status.name, status.restart_count
    ));
    status.ready = false;
}

/// One step of a simulated kruise-daemon: a container whose env vars read metadata that changed is restarted
/// (as the daemon does through a container recreate), then the runtime metadata is reported with kubelet
/// 1.31+ plain hashes and the env-from-metadata hashes.
pub fn daemon_step(pod: &mut Pod) {
    let containers = pod.spec.as_ref().unwrap().containers.clone();
    let labels = pod.metadata.labels.clone();
    let annotations = pod.metadata.annotations.clone();
    let previous: Option<RuntimeContainerMetaSet> =
        kruise_inplace::state::read_runtime_meta(pod).unwrap();
    let statuses = pod
        .status
        .as_mut()
        .unwrap()
        .container_statuses
        .as_mut()
        .unwrap();
    let mut metas = Vec::new();
    for container in &containers {
        let status = statuses
            .iter_mut()
            .find(|s| s.name == container.name)
            .unwrap();
        let env_hash =
            env_from_metadata::expected_hash(container, labels.as_ref(), annotations.as_ref());
        let reported = previous
            .as_ref()
            .and_then(|set| set.containers.iter().find(|m| m.name == container.name))
            .map(|m| m.hashes.extracted_env_from_metadata_hash);
        if reported.is_some_and(|hash| hash != env_hash) {
            let image = status.image.clone();
            restart(status, &image);
        }
        metas.push(RuntimeContainerMeta {
            name: container.name.clone(),
            container_id: status.container_id.clone().unwrap_or_default(),
            restart_count: status.restart_count,
            hashes: RuntimeContainerHashes {
                plain_hash: container_hash::hash_v1_31(&k8s_openapi::api::core::v1::Container {
                    name: container.name.clone(),
                    image: Some(status.image.clone()),
                    ..Default::default()
                }),
                extracted_env_from_metadata_hash: env_hash,
            },
        });
    }
    pod.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert(
            kruise_api::keys::inplace::RUNTIME_CONTAINERS_META_ANNOTATION.into(),
            serde_json::to_string(&RuntimeContainerMetaSet { containers: metas }).unwrap(),
        );
}
