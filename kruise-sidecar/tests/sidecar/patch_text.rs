//! The admission patch text of `inject_json` is byte for byte the recorded one (`tests/fixtures/patches.txt`):
//! the seed fixtures and the edge cases of the patch (lists present but empty, a pod without spec or
//! annotations, a sidecar replacing a container of the same name, duplicate pull secrets, SidecarSets that
//! only patch metadata, escaped annotation keys).
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
use kruise_sidecar::{InjectRequest, Options, SeededChance};
use serde_json::json;

/// A SidecarSet for `app: x` pods with these spec fields.
fn set(name: &str, spec: serde_json::Value) -> SidecarSet {
    let mut value = json!({"metadata": {"name": name}, "spec": spec});
    value["spec"]["selector"] = json!({"matchLabels": {"app": "x"}});
    support::sidecarset(value)
}

/// An `app: x` pod with these metadata and spec fields (no spec when `spec` is null).
fn pod(annotations: serde_json::Value, spec: serde_json::Value) -> Pod {
    let mut value =
        json!({"metadata": {"name": "p", "namespace": "default", "labels": {"app": "x"}}});
    if !annotations.is_null() {
        value["metadata"]["annotations"] = annotations;
    }
    if !spec.is_null() {
        value["spec"] = spec;
    }
    support::pod(value)
}

fn scenarios() -> Vec<(String, Pod, Vec<SidecarSet>)> {
    let mut out = Vec::new();
    let log = support::sidecarset_fixture("sidecarset-log.yaml");
    let before_app = support::sidecarset_fixture("sidecarset-before-app.yaml");
    let hot = support::sidecarset_fixture("sidecarset-hotupgrade.yaml");
    for pod_name in ["pod-nginx.yaml", "pod-sample.yaml", "pod-hotupgrade.yaml"] {
        let pod = support::pod_fixture(pod_name);
        for (sets_name, sets) in [
            ("log", vec![log.clone()]),
            ("before-app", vec![before_app.clone()]),
            ("hot", vec![hot.clone()]),
            ("all", vec![log.clone(), before_app.clone(), hot.clone()]),
        ] {
            out.push((format!("{pod_name} {sets_name}"), pod.clone(), sets));
        }
    }
    let app = json!({"containers": [{"name": "app", "image": "nginx"}]});
    let sidecar = set(
        "s",
        json!({"containers": [{"name": "sidecar", "image": "busybox"}]}),
    );
    let full = set(
        "full",
        json!({
            "initContainers": [{"name": "init", "image": "i"}, {"name": "native", "image": "n", "restartPolicy": "Always"}],
            "containers": [
                {"name": "before", "image": "b", "podInjectPolicy": "BeforeAppContainer",
                 "volumeMounts": [{"name": "v", "mountPath": "/v"}], "shareVolumePolicy": {"type": "enabled"}},
                {"name": "after", "image": "a", "podInjectPolicy": "AfterAppContainer"},
                {"name": "hot", "image": "h", "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty"},
                 "transferEnv": [{"sourceContainerName": "app", "envNames": ["E"]}]}
            ],
            "volumes": [{"name": "v", "emptyDir": {}}, {"name": "data", "emptyDir": {}}],
            "imagePullSecrets": [{"name": "reg"}, {"name": "own"}],
            "patchPodMetadata": [{"annotations": {"k": "v"}}]
        }),
    );
    out.push((
        "escaped annotation keys".into(),
        pod(json!({"a/b~c": "1"}), app.clone()),
        vec![set(
            "s",
            json!({"containers": [{"name": "sidecar", "image": "busybox"}],
                   "patchPodMetadata": [{"patchPolicy": "Overwrite", "annotations": {"a/b~c": "2", "q\"uote": "x"}}]}),
        )],
    ));
    out.push((
        "no annotations".into(),
        pod(serde_json::Value::Null, app.clone()),
        vec![sidecar.clone()],
    ));
    out.push((
        "no spec".into(),
        pod(json!({}), serde_json::Value::Null),
        vec![full.clone()],
    ));
    let empty_lists =
        json!({"containers": [], "initContainers": [], "volumes": [], "imagePullSecrets": []});
    out.push((
        "empty lists, containers only".into(),
        pod(json!({}), empty_lists.clone()),
        vec![sidecar.clone()],
    ));
    out.push((
        "empty lists, everything".into(),
        pod(json!({}), empty_lists),
        vec![full.clone()],
    ));
    let populated = json!({
        "initContainers": [{"name": "setup", "image": "s"}],
        "containers": [{"name": "app", "image": "nginx", "env": [{"name": "E", "value": "1"}],
                        "volumeMounts": [{"name": "data", "mountPath": "/data"}]},
                       {"name": "after", "image": "old"}],
        "volumes": [{"name": "data", "hostPath": {"path": "/d"}}],
        "imagePullSecrets": [{"name": "own"}, {"name": "own"}]
    });
    out.push((
        "populated pod, replaced in place, duplicate secrets".into(),
        pod(json!({"k": "old"}), populated.clone()),
        vec![full.clone(), sidecar.clone()],
    ));
    let first = pod(json!({}), populated);
    let injected_once = kruise_sidecar::inject(
        &request(&first, std::slice::from_ref(&full)),
        &mut SeededChance::new(1),
    )
    .unwrap()
    .pod;
    out.push(("already injected".into(), injected_once, vec![full.clone()]));
    out.push((
        "metadata only".into(),
        pod(serde_json::Value::Null, app.clone()),
        vec![set(
            "meta",
            json!({"containers": [], "patchPodMetadata": [{"annotations": {"k": "v"}}]}),
        )],
    ));
    out.push((
        "nothing at all".into(),
        pod(serde_json::Value::Null, app),
        vec![set("empty", json!({"containers": []}))],
    ));
    out
}

fn request<'a>(pod: &'a Pod, sets: &'a [SidecarSet]) -> InjectRequest<'a> {
    support::create_request(pod, sets, Options::default())
}

#[test]
fn patch_text_is_the_recorded_one() {
    let recorded = support::fixture("patches.txt");
    let mut recorded = recorded.lines();
    for (name, pod, sets) in scenarios() {
        let text = kruise_sidecar::inject_json(&request(&pod, &sets), &mut SeededChance::new(1))
            .unwrap()
            .patch;
        let line = format!("{name}\t{text}");
        if std::env::var_os("PRINT_PATCHES").is_some() {
            println!("{line}");
            continue;
        }
        assert_eq!(recorded.next(), Some(line.as_str()), "{name}");
    }
}
