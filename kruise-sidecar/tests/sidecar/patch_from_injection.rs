//! Injection writes its admission patch from where it put the injected items, without comparing pods. On
//! random pods and SidecarSets (lists absent, empty or full, sidecars replacing containers of the same name,
//! duplicate pull secrets and volume names, hot-upgrade and native sidecars, metadata patches, pods already
//! injected, no spec at all) that patch is exactly the one `admission_patch` finds by comparing the admitted
//! and the injected pod: the same typed operations, the same JSON text byte for byte, and it reproduces the
//! injected pod.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::needless_pass_by_value
)]

use crate::support;

use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_sidecar::admission_patch::{injection_patch, injection_patch_json};
use kruise_sidecar::{InjectRequest, Options, SeededChance};
use proptest::prelude::*;
use serde_json::{Value, json};

/// How a list of the pod's spec is given.
#[derive(Clone, Copy, Debug)]
enum List {
    Absent,
    Empty,
    Full,
}

fn list() -> impl Strategy<Value = List> {
    prop_oneof![Just(List::Absent), Just(List::Empty), Just(List::Full)]
}

/// Names the pod's containers and the sidecars draw from, so that some sidecars replace containers.
const NAMES: [&str; 5] = ["app", "log", "proxy", "proxy-1", "init"];

#[derive(Clone, Debug)]
struct PodShape {
    has_spec: bool,
    annotations: Option<bool>,
    containers: Vec<usize>,
    init_containers: List,
    volumes: List,
    secrets: List,
}

fn pod_shape() -> impl Strategy<Value = PodShape> {
    (
        prop::bool::weighted(0.9),
        prop::option::of(any::<bool>()),
        prop::collection::vec(0..NAMES.len(), 0..4),
        list(),
        list(),
        list(),
    )
        .prop_map(
            |(has_spec, annotations, containers, init_containers, volumes, secrets)| PodShape {
                has_spec,
                annotations,
                containers,
                init_containers,
                volumes,
                secrets,
            },
        )
}

fn with_list(spec: &mut Value, field: &str, list: List, full: Value) {
    match list {
        List::Absent => {}
        List::Empty => spec[field] = json!([]),
        List::Full => spec[field] = full,
    }
}

fn pod(shape: &PodShape) -> Pod {
    let mut metadata =
        json!({"name": "p", "namespace": "ns", "labels": {"app": "x", "source": "app"}});
    match shape.annotations {
        None => {}
        Some(false) => metadata["annotations"] = json!({}),
        Some(true) => {
            metadata["annotations"] = json!({"keep": "1", "shared/key": "pod", "a~b": "2"});
        }
    }
    let mut value = json!({"metadata": metadata});
    if shape.has_spec {
        let containers: Vec<Value> = shape
            .containers
            .iter()
            .map(|n| {
                json!({"name": NAMES[*n], "image": format!("{}:pod", NAMES[*n]),
                       "env": [{"name": "E", "value": "1"}],
                       "volumeMounts": [{"name": "data", "mountPath": format!("/data/{n}")}]})
            })
            .collect();
        let mut spec = json!({"containers": containers});
        with_list(
            &mut spec,
            "initContainers",
            shape.init_containers,
            json!([{"name": "init", "image": "init:pod"}]),
        );
        with_list(
            &mut spec,
            "volumes",
            shape.volumes,
            json!([{"name": "data", "emptyDir": {}}, {"name": "shared", "emptyDir": {}}]),
        );
        with_list(
            &mut spec,
            "imagePullSecrets",
            shape.secrets,
            json!([{"name": "pod"}, {"name": "shared"}, {"name": "pod"}]),
        );
        value["spec"] = spec;
    }
    support::pod(value)
}

#[derive(Clone, Debug)]
struct Sidecar {
    name: usize,
    before: bool,
    hot: bool,
    share: bool,
    transfer: bool,
}

fn sidecar() -> impl Strategy<Value = Sidecar> {
    (
        0..NAMES.len(),
        any::<bool>(),
        prop::bool::weighted(0.3),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(name, before, hot, share, transfer)| Sidecar {
            name,
            before,
            hot,
            share,
            transfer,
        })
}

#[derive(Clone, Debug)]
struct SetShape {
    containers: Vec<Sidecar>,
    init_containers: Vec<(usize, bool, bool)>,
    volumes: bool,
    secrets: bool,
    metadata: Option<u8>,
}

fn set_shape() -> impl Strategy<Value = SetShape> {
    (
        prop::collection::vec(sidecar(), 0..3),
        prop::collection::vec((0..NAMES.len(), any::<bool>(), any::<bool>()), 0..2),
        any::<bool>(),
        any::<bool>(),
        prop::option::of(0u8..3),
    )
        .prop_map(
            |(containers, init_containers, volumes, secrets, metadata)| SetShape {
                containers,
                init_containers,
                volumes,
                secrets,
                metadata,
            },
        )
}

fn sidecarset(name: &str, shape: &SetShape) -> SidecarSet {
    let containers: Vec<Value> = shape
        .containers
        .iter()
        .map(|sidecar| {
            let mut c = json!({"name": NAMES[sidecar.name], "image": format!("{name}:1"),
                "podInjectPolicy": if sidecar.before { "BeforeAppContainer" } else { "AfterAppContainer" },
                "volumeMounts": [{"name": "own", "mountPath": format!("/own/{name}")}]});
            if sidecar.hot {
                c["upgradeStrategy"] =
                    json!({"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"});
            }
            if sidecar.share {
                c["shareVolumePolicy"] = json!({"type": "enabled"});
            }
            if sidecar.transfer {
                c["transferEnv"] = json!([{"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.labels['source']"}}, "envNames": ["E"]}]);
            }
            c
        })
        .collect();
    let init_containers: Vec<Value> = shape
        .init_containers
        .iter()
        .map(|(n, native, hot)| {
            let mut c = json!({"name": NAMES[*n], "image": format!("{name}-init:1")});
            if *native {
                c["restartPolicy"] = json!("Always");
            }
            if *hot {
                c["upgradeStrategy"] =
                    json!({"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"});
            }
            c
        })
        .collect();
    let mut spec = json!({"selector": {"matchLabels": {"app": "x"}}, "containers": containers,
                          "initContainers": init_containers});
    if shape.volumes {
        spec["volumes"] = json!([{"name": "own", "emptyDir": {}}, {"name": "shared", "hostPath": {"path": "/s"}}]);
    }
    if shape.secrets {
        spec["imagePullSecrets"] = json!([{"name": "shared"}, {"name": name}]);
    }
    if let Some(policy) = shape.metadata {
        let policy = ["Retain", "Overwrite", "MergePatchJson"][usize::from(policy)];
        spec["patchPodMetadata"] = json!([{"patchPolicy": policy,
            "annotations": {"shared/key": format!("{{\"{name}\":true}}"), name: "v"}}]);
    }
    support::sidecarset(json!({"metadata": {"name": name}, "spec": spec}))
}

fn request<'a>(pod: &'a Pod, sets: &'a [SidecarSet], sort: bool) -> InjectRequest<'a> {
    let mut options = Options::default();
    options.sort_sidecar_containers_by_name = sort;
    support::create_request(pod, sets, options)
}

/// Both patches of one injection agree with the patches found by comparing pods.
fn check(pod: &Pod, sets: &[SidecarSet], sort: bool) -> Result<Pod, TestCaseError> {
    let typed = kruise_sidecar::inject(&request(pod, sets, sort), &mut SeededChance::new(1));
    let text = kruise_sidecar::inject_json(&request(pod, sets, sort), &mut SeededChance::new(1));
    let (typed, text) = match (typed, text) {
        (Ok(typed), Ok(text)) => (typed, text),
        // The same error either way (a `MergePatchJson` of a value that is not JSON).
        (Err(typed), Err(text)) => {
            prop_assert_eq!(typed.to_string(), text.to_string());
            return Ok(pod.clone());
        }
        (typed, text) => {
            return Err(TestCaseError::fail(format!(
                "inject: {typed:?}, inject_json: {text:?}"
            )));
        }
    };
    prop_assert_eq!(&text.pod, &typed.pod);
    prop_assert_eq!(&typed.patch, &injection_patch(pod, &typed.pod));
    prop_assert_eq!(&text.patch, &injection_patch_json(pod, &text.pod));
    let mut value = serde_json::to_value(pod).unwrap();
    json_patch::patch(&mut value, &typed.patch).unwrap();
    prop_assert_eq!(&serde_json::from_value::<Pod>(value).unwrap(), &typed.pod);
    Ok(typed.pod)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn patch_from_the_injection_is_the_patch_between_the_pods(
        shape in pod_shape(), first in set_shape(), second in set_shape(), sort: bool,
    ) {
        let pod = pod(&shape);
        let sets = [sidecarset("a", &first), sidecarset("b", &second)];
        let injected = check(&pod, &sets, sort)?;
        // Injecting into an injected pod replaces the sidecars in place, with the same or another revision.
        check(&injected, &sets, sort)?;
        let changed = [sidecarset("a", &second), sidecarset("b", &first)];
        check(&injected, &changed, sort)?;
    }
}
