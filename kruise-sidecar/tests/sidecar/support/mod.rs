//! Builders shared by the integration test modules (`crate::support::...`), and the fuzz harness of the
//! annotation parsers (`annotation_harness`).
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

pub mod annotation_harness;
pub mod expression_harness;
pub mod facts_plan;

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ContainerStatus, Pod, PodCondition, PodStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::{v1alpha1, v1beta1};
use kruise_api::defaults::ApplyDefaults;
use kruise_sidecar::{InjectRequest, Injection, Options, SeededChance};

pub fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

/// A v1alpha1 fixture, defaulted as stored, converted to the hub, with its hashes annotated.
pub fn sidecarset_fixture(name: &str) -> v1beta1::SidecarSet {
    let mut alpha: v1alpha1::SidecarSet = serde_saphyr::from_str(&fixture(name)).unwrap();
    alpha.apply_defaults();
    let mut hub = v1beta1::SidecarSet::from(&alpha);
    kruise_sidecar::hash::annotate(&mut hub).unwrap();
    hub
}

/// A SidecarSet from JSON, defaulted and annotated.
pub fn sidecarset(json: serde_json::Value) -> v1beta1::SidecarSet {
    let mut set: v1beta1::SidecarSet = serde_json::from_value(json).unwrap();
    set.apply_defaults();
    kruise_sidecar::hash::annotate(&mut set).unwrap();
    set
}

pub fn pod_fixture(name: &str) -> Pod {
    serde_saphyr::from_str(&fixture(name)).unwrap()
}

pub fn pod(json: serde_json::Value) -> Pod {
    serde_json::from_value(json).unwrap()
}

pub fn now() -> Timestamp {
    "2024-05-01T10:00:00Z".parse().unwrap()
}

pub fn later(seconds: i64) -> Timestamp {
    now()
        .checked_add(k8s_openapi::jiff::SignedDuration::from_secs(seconds))
        .unwrap()
}

pub fn inject(pod: &Pod, sets: &[v1beta1::SidecarSet]) -> Injection {
    inject_with(pod, sets, Options::default())
}

pub fn inject_with(pod: &Pod, sets: &[v1beta1::SidecarSet], options: Options) -> Injection {
    kruise_sidecar::inject(
        &create_request(pod, sets, options),
        &mut SeededChance::new(1),
    )
    .unwrap()
}

/// A CREATE request for `pod` with `sets`, no revisions or namespace labels, at [`now`].
pub fn create_request<'a>(
    pod: &'a Pod,
    sets: &'a [v1beta1::SidecarSet],
    options: Options,
) -> InjectRequest<'a> {
    InjectRequest {
        pod,
        old_pod: None,
        sidecarsets: sets,
        revisions: &[],
        namespace_labels: None,
        now: now(),
        options,
    }
}

pub fn names(pod: &Pod) -> Vec<String> {
    pod.spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .map(|c| c.name.clone())
        .collect()
}

pub fn container<'a>(pod: &'a Pod, name: &str) -> &'a k8s_openapi::api::core::v1::Container {
    pod.spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no container {name}"))
}

pub fn annotation<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

pub fn image_of(pod: &Pod, name: &str) -> String {
    container(pod, name).image.clone().unwrap_or_default()
}

/// What kubelet reports once the pod runs its spec: one status per container with `image` and an image ID
/// derived from the image, all ready, phase Running, Ready=True.
pub fn running(pod: &Pod) -> Pod {
    let mut pod = pod.clone();
    let statuses = pod
        .spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .map(|c| {
            let image = c.image.clone().unwrap_or_default();
            ContainerStatus {
                name: c.name.clone(),
                image: format!("docker.io/{image}"),
                image_id: image_id(&image),
                ready: true,
                ..ContainerStatus::default()
            }
        })
        .collect();
    pod.status = Some(PodStatus {
        phase: Some("Running".into()),
        conditions: Some(vec![PodCondition {
            type_: "Ready".into(),
            status: "True".into(),
            last_transition_time: Some(Time(now())),
            ..PodCondition::default()
        }]),
        container_statuses: Some(statuses),
        ..PodStatus::default()
    });
    pod
}

pub fn image_id(image: &str) -> String {
    format!("docker.io/{image}@sha256:{:064x}", fxhash(image))
}

fn fxhash(text: &str) -> u128 {
    text.bytes().fold(0x811c_9dc5_u128, |h, b| {
        (h ^ u128::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Kubelet applies the spec of every container (new image, new image ID), readiness as given.
pub fn kubelet_applies(pod: &Pod, ready: &BTreeMap<&str, bool>) -> Pod {
    let mut out = running(pod);
    for status in out
        .status
        .as_mut()
        .unwrap()
        .container_statuses
        .as_mut()
        .unwrap()
    {
        if let Some(r) = ready.get(status.name.as_str()) {
            status.ready = *r;
        }
    }
    out
}

pub fn set_ready(pod: &mut Pod, ready: bool) {
    let status = pod.status.get_or_insert_with(Default::default);
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    conditions.retain(|c| c.type_ != "Ready");
    conditions.push(PodCondition {
        type_: "Ready".into(),
        status: if ready { "True" } else { "False" }.into(),
        ..PodCondition::default()
    });
}
