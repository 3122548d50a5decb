//! Injection (upstream `pkg/webhook/pod/mutating/sidecarset.go`): the tutorial examples, and one table or test per
//! rule.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::needless_pass_by_value,
    clippy::type_complexity
)]

use crate::support;

use crate::support::{annotation, container, inject, names, now, pod, sidecarset};
use k8s_openapi::api::core::v1::Pod;
use kruise_api::keys::sidecarset as keys;
use kruise_sidecar::{InjectRequest, Options, SeededChance};
use serde_json::json;

fn apply_patch(original: &Pod, patch: &json_patch::Patch) -> Pod {
    let mut value = serde_json::to_value(original).unwrap();
    json_patch::patch(&mut value, patch).unwrap();
    serde_json::from_value(value).unwrap()
}

#[test]
fn seed_sidecar1_busybox_with_its_log_volume() {
    let set = support::sidecarset_fixture("sidecarset-log.yaml");
    let pod = support::pod_fixture("pod-nginx.yaml");
    let injection = inject(&pod, std::slice::from_ref(&set));
    assert_eq!(injection.sidecarsets, ["test-sidecarset"]);
    let out = &injection.pod;
    assert_eq!(names(out), ["sidecar1", "app"]);
    let sidecar = serde_json::to_value(container(out, "sidecar1")).unwrap();
    assert_eq!(
        sidecar,
        json!({
            "name": "sidecar1", "image": "busybox", "command": ["sleep", "999d"],
            "env": [{"name": "IS_INJECTED", "value": "true"}],
            "imagePullPolicy": "Always",
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
            "volumeMounts": [{"mountPath": "/var/log", "name": "log-volume"}]
        })
    );
    assert_eq!(
        serde_json::to_value(&out.spec.as_ref().unwrap().volumes).unwrap(),
        json!([{"name": "log-volume", "emptyDir": {}}])
    );
    let hash = kruise_sidecar::hash::recorded_or_computed(&set).unwrap();
    assert_eq!(
        annotation(out, keys::HASH_ANNOTATION).unwrap(),
        format!(
            r#"{{"test-sidecarset":{{"updateTimestamp":"2024-05-01T10:00:00Z","hash":"{}","sidecarSetName":"test-sidecarset","sidecarList":["sidecar1"]}}}}"#,
            hash.hash
        )
    );
    assert_eq!(
        annotation(out, keys::HASH_WITHOUT_IMAGE_ANNOTATION).unwrap(),
        format!(
            r#"{{"test-sidecarset":{{"updateTimestamp":"2024-05-01T10:00:00Z","hash":"{}","sidecarSetName":"test-sidecarset","sidecarList":["sidecar1"]}}}}"#,
            hash.without_image
        )
    );
    assert_eq!(
        annotation(out, keys::INJECTED_LIST_ANNOTATION),
        Some("test-sidecarset")
    );
    assert_eq!(
        &apply_patch(&pod, &injection.patch),
        out,
        "the patch reproduces the pod"
    );
}

#[test]
fn seed_before_app_container_transfer_env_and_shared_volumes() {
    let set = support::sidecarset_fixture("sidecarset-before-app.yaml");
    let pod = support::pod_fixture("pod-sample.yaml");
    let out = inject(&pod, std::slice::from_ref(&set)).pod;
    assert_eq!(names(&out), ["nginx", "main"]);
    let nginx = container(&out, "nginx");
    let mounts: Vec<_> = nginx
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| (m.name.as_str(), m.mount_path.as_str()))
        .collect();
    assert_eq!(mounts, [("nginx.conf", "/nginx/conf"), ("data", "/data")]);
    let env: Vec<_> = nginx
        .env
        .iter()
        .flatten()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(
        env,
        ["IS_INJECTED", "PROXY_IP", "POD_NAME"],
        "own, transferred, then subPathExpr"
    );
    assert_eq!(
        nginx.env.as_ref().unwrap()[1].value.as_deref(),
        Some("10.0.0.1")
    );
    let volumes: Vec<_> = out
        .spec
        .as_ref()
        .unwrap()
        .volumes
        .iter()
        .flatten()
        .map(|v| v.name.as_str())
        .collect();
    assert_eq!(volumes, ["data", "nginx.conf"]);
    assert_eq!(
        container(&out, "main"),
        &pod.spec.as_ref().unwrap().containers[0]
    );
}

fn simple_set(name: &str, containers: serde_json::Value) -> kruise_api::apps::v1beta1::SidecarSet {
    sidecarset(json!({
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "containers": containers}
    }))
}

fn web_pod() -> Pod {
    pod(json!({
        "metadata": {"name": "web-0", "namespace": "ns", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "main", "image": "web:1"}]}
    }))
}

#[test]
fn inject_policy_table() {
    let cases = [
        (json!("BeforeAppContainer"), vec!["s", "main"]),
        (json!("AfterAppContainer"), vec!["main", "s"]),
    ];
    for (policy, expected) in cases {
        let set = simple_set(
            "a",
            json!([{"name": "s", "image": "s:1", "podInjectPolicy": policy}]),
        );
        assert_eq!(names(&inject(&web_pod(), &[set]).pod), expected, "{policy}");
    }
    // Not defaulted (empty policy): after the app containers, as upstream HEAD.
    let mut raw: kruise_api::apps::v1beta1::SidecarSet = serde_json::from_value(json!({
        "metadata": {"name": "raw"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "containers": [{"name": "s", "image": "s:1"}]}
    }))
    .unwrap();
    kruise_sidecar::hash::annotate(&mut raw).unwrap();
    assert_eq!(names(&inject(&web_pod(), &[raw]).pod), ["main", "s"]);
}

#[test]
fn same_name_container_is_replaced_in_place() {
    let mut pod = web_pod();
    pod.spec
        .as_mut()
        .unwrap()
        .containers
        .push(serde_json::from_value(json!({"name": "s", "image": "old"})).unwrap());
    let set = simple_set(
        "a",
        json!([{"name": "s", "image": "new"}, {"name": "t", "image": "t"}]),
    );
    let injection = inject(&pod, &[set]);
    let out = injection.pod.clone();
    assert_eq!(names(&out), ["t", "main", "s"]);
    assert_eq!(apply_patch(&pod, &injection.patch), out);
    let ops: Vec<String> = injection.patch.0.iter().map(ToString::to_string).collect();
    assert!(ops.iter().any(|op| op.contains(r#""path":"/spec/containers/0""#) && op.contains(r#""op":"add""#)), "{ops:?}");
    assert!(
        ops.iter()
            .any(|op| op.contains(r#""path":"/spec/containers/2""#)
                && op.contains(r#""op":"replace""#)),
        "{ops:?}"
    );
    assert_eq!(support::image_of(&out, "s"), "new");
}

#[test]
fn two_sidecarsets_in_name_order_and_first_volume_wins() {
    let b = sidecarset(json!({"metadata": {"name": "b"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "containers": [{"name": "b1", "image": "b", "volumeMounts": [{"name": "shared", "mountPath": "/b"}]}],
        "volumes": [{"name": "shared", "configMap": {"name": "from-b"}}],
        "imagePullSecrets": [{"name": "regcred"}, {"name": "b-secret"}]}}));
    let a = sidecarset(json!({"metadata": {"name": "a"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "containers": [{"name": "a1", "image": "a", "volumeMounts": [{"name": "shared", "mountPath": "/a"}]}],
        "volumes": [{"name": "shared", "configMap": {"name": "from-a"}}],
        "imagePullSecrets": [{"name": "a-secret"}]}}));
    let mut pod = web_pod();
    pod.spec.as_mut().unwrap().image_pull_secrets = Some(vec![
        serde_json::from_value(json!({"name": "regcred"})).unwrap(),
    ]);
    let out = inject(&pod, &[b, a]).pod;
    assert_eq!(names(&out), ["a1", "b1", "main"]);
    let spec = out.spec.as_ref().unwrap();
    let volumes = spec.volumes.as_ref().unwrap();
    assert_eq!(volumes.len(), 1);
    assert_eq!(volumes[0].config_map.as_ref().unwrap().name, "from-a");
    let secrets: Vec<_> = spec
        .image_pull_secrets
        .iter()
        .flatten()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(secrets, ["regcred", "a-secret", "b-secret"]);
    assert_eq!(
        annotation(&out, keys::INJECTED_LIST_ANNOTATION),
        Some("a,b")
    );
}

#[test]
fn the_pods_own_volume_wins() {
    let mut pod = web_pod();
    pod.spec.as_mut().unwrap().volumes = Some(vec![
        serde_json::from_value(json!({"name": "logs", "hostPath": {"path": "/pod"}})).unwrap(),
    ]);
    let set = sidecarset(json!({"metadata": {"name": "a"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "containers": [{"name": "s", "image": "s", "volumeMounts": [{"name": "logs", "mountPath": "/l"}]}],
        "volumes": [{"name": "logs", "emptyDir": {}}]}}));
    let out = inject(&pod, &[set]).pod;
    let volumes = out.spec.unwrap().volumes.unwrap();
    assert_eq!(volumes.len(), 1);
    assert!(volumes[0].host_path.is_some());
}

#[test]
fn init_containers_sorted_and_native_sidecars_listed() {
    let set = sidecarset(json!({"metadata": {"name": "a"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "initContainers": [
            {"name": "z-init", "image": "i"},
            {"name": "b-proxy", "image": "p", "restartPolicy": "Always"}
        ],
        "containers": [{"name": "s", "image": "s"}]}}));
    let mut pod = web_pod();
    pod.spec.as_mut().unwrap().init_containers = Some(vec![
        serde_json::from_value(json!({"name": "app-init", "image": "x"})).unwrap(),
    ]);
    let out = inject(&pod, &[set]).pod;
    let init: Vec<_> = out
        .spec
        .as_ref()
        .unwrap()
        .init_containers
        .iter()
        .flatten()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(
        init,
        ["app-init", "b-proxy", "z-init"],
        "after the pod's, in name order"
    );
    let init_env = &out.spec.as_ref().unwrap().init_containers.as_ref().unwrap()[2].env;
    assert_eq!(init_env.as_ref().unwrap()[0].name, "IS_INJECTED");
    let hashes =
        kruise_api::annotations::parse_hashes(annotation(&out, keys::HASH_ANNOTATION).unwrap())
            .unwrap();
    assert_eq!(hashes["a"].sidecar_list, ["b-proxy", "s"]);
}

#[test]
fn transfer_env_sources_table() {
    let mut pod = web_pod();
    pod.metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("source".into(), "main".into());
    pod.metadata.annotations = Some([("Source.Annotation".to_owned(), "main".to_owned())].into());
    pod.spec.as_mut().unwrap().containers[0].env = Some(
        serde_json::from_value(json!([
            {"name": "B", "value": "b"}, {"name": "A", "value": "a"}, {"name": "C", "value": "c"}
        ]))
        .unwrap(),
    );
    let cases: [(serde_json::Value, Vec<&str>); 6] = [
        (
            json!({"sourceContainerName": "main", "envName": "A"}),
            vec!["A"],
        ),
        (
            json!({"sourceContainerName": "main", "envName": "C", "envNames": ["B", "A", "MISSING"]}),
            vec!["A", "B", "C"],
        ),
        (
            json!({"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.labels['source']"}}, "envNames": ["B"]}),
            vec!["B"],
        ),
        (
            json!({"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.annotations['Source.Annotation']"}}, "envName": "C"}),
            vec!["C"],
        ),
        (
            json!({"sourceContainerNameFrom": {"fieldRef": {"fieldPath": "metadata.name"}}, "envName": "A"}),
            vec![],
        ),
        (
            json!({"sourceContainerName": "nope", "envName": "A"}),
            vec![],
        ),
    ];
    for (transfer, expected) in cases {
        let set = simple_set(
            "a",
            json!([{"name": "s", "image": "s", "transferEnv": [transfer.clone()]}]),
        );
        let out = inject(&pod, &[set]).pod;
        let env: Vec<_> = container(&out, "s")
            .env
            .iter()
            .flatten()
            .skip(1)
            .map(|e| e.name.as_str())
            .collect();
        assert_eq!(env, expected, "{transfer}");
    }
}

#[test]
fn share_volume_policy_skips_injected_containers_and_devices_are_shared() {
    let mut pod = web_pod();
    pod.spec.as_mut().unwrap().containers = serde_json::from_value(json!([
        {"name": "main", "image": "web", "volumeMounts": [{"name": "d", "mountPath": "/d"}],
         "volumeDevices": [{"name": "blk", "devicePath": "/dev/blk"}]},
        {"name": "old-sidecar", "image": "x", "env": [{"name": "IS_INJECTED", "value": "true"}],
         "volumeMounts": [{"name": "x", "mountPath": "/x"}]}
    ]))
    .unwrap();
    let set = simple_set(
        "a",
        json!([{"name": "s", "image": "s",
        "shareVolumePolicy": {"type": "enabled"}, "shareVolumeDevicePolicy": {"type": "enabled"},
        "volumeMounts": [{"name": "own", "mountPath": "/d"}]}]),
    );
    let out = inject(&pod, &[set]).pod;
    let sidecar = container(&out, "s");
    let mounts: Vec<_> = sidecar
        .volume_mounts
        .iter()
        .flatten()
        .map(|m| m.name.as_str())
        .collect();
    assert_eq!(
        mounts,
        ["own"],
        "/d is taken by the sidecar's own mount; /x belongs to a sidecar"
    );
    let devices: Vec<_> = sidecar
        .volume_devices
        .iter()
        .flatten()
        .map(|d| d.name.as_str())
        .collect();
    assert_eq!(devices, ["blk"]);
}

#[test]
fn patch_pod_metadata_applies_before_injection() {
    let set = sidecarset(json!({"metadata": {"name": "a"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "containers": [{"name": "s", "image": "s"}],
        "patchPodMetadata": [{"annotations": {"oom-score": "{\"log-agent\": 1}"}, "patchPolicy": "MergePatchJson"}]}}));
    let mut pod = web_pod();
    pod.metadata.annotations =
        Some([("oom-score".to_owned(), r#"{"envoy": 2}"#.to_owned())].into());
    let out = inject(&pod, &[set]).pod;
    assert_eq!(
        annotation(&out, "oom-score"),
        Some(r#"{"envoy":2,"log-agent":1}"#)
    );
}

#[test]
fn bad_merge_patch_is_an_error_naming_the_pod_and_key() {
    let set = sidecarset(json!({"metadata": {"name": "a"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "containers": [{"name": "s", "image": "s"}],
        "patchPodMetadata": [{"annotations": {"k": "{}"}, "patchPolicy": "MergePatchJson"}]}}));
    let mut pod = web_pod();
    pod.metadata.annotations = Some([("k".to_owned(), "not json".to_owned())].into());
    let request = InjectRequest {
        pod: &pod,
        old_pod: None,
        sidecarsets: &[set],
        revisions: &[],
        namespace_labels: None,
        now: now(),
        options: Options::default(),
    };
    let message = kruise_sidecar::inject(&request, &mut SeededChance::new(1))
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("pod ns/web-0") && message.contains("annotation k"),
        "{message}"
    );
}

#[test]
fn bad_hash_annotation_on_the_pod_is_an_error() {
    let set = simple_set("a", json!([{"name": "s", "image": "s"}]));
    let mut pod = web_pod();
    pod.metadata.annotations = Some([(keys::HASH_ANNOTATION.to_owned(), "[1]".to_owned())].into());
    let request = InjectRequest {
        pod: &pod,
        old_pod: None,
        sidecarsets: &[set],
        revisions: &[],
        namespace_labels: None,
        now: now(),
        options: Options::default(),
    };
    let error = kruise_sidecar::inject(&request, &mut SeededChance::new(1)).unwrap_err();
    assert!(error.to_string().contains(keys::HASH_ANNOTATION), "{error}");
}

#[test]
fn injection_is_idempotent_and_never_touches_app_containers() {
    let set = support::sidecarset_fixture("sidecarset-before-app.yaml");
    let pod = support::pod_fixture("pod-sample.yaml");
    let once = inject(&pod, std::slice::from_ref(&set));
    let twice = inject(&once.pod, std::slice::from_ref(&set));
    assert_eq!(twice.pod, once.pod);
    assert!(!twice.changed());
    assert_eq!(
        container(&once.pod, "main"),
        &pod.spec.as_ref().unwrap().containers[0]
    );
}

#[test]
fn update_requests_change_nothing() {
    let set = simple_set("a", json!([{"name": "s", "image": "s"}]));
    let pod = web_pod();
    let request = InjectRequest {
        pod: &pod,
        old_pod: Some(&pod),
        sidecarsets: &[set],
        revisions: &[],
        namespace_labels: None,
        now: now(),
        options: Options::default(),
    };
    let injection = kruise_sidecar::inject(&request, &mut SeededChance::new(1)).unwrap();
    assert_eq!(injection.pod, pod);
    assert!(injection.patch.0.is_empty());
    assert_eq!(injection.sidecarsets, ["a"]);
}

#[test]
fn sort_by_name_gate() {
    let set = simple_set(
        "a",
        json!([{"name": "zz", "image": "s"}, {"name": "aa", "image": "s"}]),
    );
    assert_eq!(
        names(&inject(&web_pod(), std::slice::from_ref(&set)).pod),
        ["zz", "aa", "main"]
    );
    let options = Options::default()
        .with_feature_gates("EnableSortSidecarContainerByName=true")
        .unwrap();
    assert_eq!(
        names(&support::inject_with(&web_pod(), &[set], options).pod),
        ["aa", "zz", "main"]
    );
}

#[test]
fn hot_upgrade_pair_with_versions_and_working_container() {
    let set = support::sidecarset_fixture("sidecarset-hotupgrade.yaml");
    let pod = support::pod_fixture("pod-hotupgrade.yaml");
    let out = inject(&pod, std::slice::from_ref(&set)).pod;
    assert_eq!(names(&out), ["sidecar-1", "sidecar-2", "busybox"]);
    assert_eq!(
        support::image_of(&out, "sidecar-1"),
        "openkruise/hotupgrade-sample:sidecarv1"
    );
    assert_eq!(
        support::image_of(&out, "sidecar-2"),
        "openkruise/hotupgrade-sample:empty"
    );
    for name in ["sidecar-1", "sidecar-2"] {
        let env = serde_json::to_value(&container(&out, name).env).unwrap();
        assert_eq!(
            env,
            json!([
                {"name": "IS_INJECTED", "value": "true"},
                {"name": "SIDECARSET_VERSION", "valueFrom": {"fieldRef": {"fieldPath": format!("metadata.annotations['version.sidecarset.kruise.io/{name}']")}}},
                {"name": "SIDECARSET_VERSION_ALT", "valueFrom": {"fieldRef": {"fieldPath": format!("metadata.annotations['versionalt.sidecarset.kruise.io/{name}']")}}}
            ])
        );
        assert!(container(&out, name).lifecycle.is_some());
    }
    for (key, value) in [
        ("version.sidecarset.kruise.io/sidecar-1", "1"),
        ("versionalt.sidecarset.kruise.io/sidecar-1", "0"),
        ("version.sidecarset.kruise.io/sidecar-2", "0"),
        ("versionalt.sidecarset.kruise.io/sidecar-2", "1"),
        (
            keys::WORKING_HOT_UPGRADE_CONTAINER_ANNOTATION,
            r#"{"sidecar":"sidecar-1"}"#,
        ),
    ] {
        assert_eq!(annotation(&out, key), Some(value), "{key}");
    }
    let hashes =
        kruise_api::annotations::parse_hashes(annotation(&out, keys::HASH_ANNOTATION).unwrap())
            .unwrap();
    assert_eq!(hashes["hotupgrade-sidecarset"].sidecar_list, ["sidecar"]);
}

#[test]
fn controller_revision_is_recorded_from_the_status() {
    let mut set = simple_set("a", json!([{"name": "s", "image": "s"}]));
    set.status = Some(kruise_api::apps::v1beta1::SidecarSetStatus {
        latest_revision: "a-5d8f".into(),
        ..Default::default()
    });
    let out = inject(&web_pod(), &[set]).pod;
    let hashes =
        kruise_api::annotations::parse_hashes(annotation(&out, keys::HASH_ANNOTATION).unwrap())
            .unwrap();
    assert_eq!(hashes["a"].controller_revision, "a-5d8f");
    let without = kruise_api::annotations::parse_hashes_without_image(
        annotation(&out, keys::HASH_WITHOUT_IMAGE_ANNOTATION).unwrap(),
    )
    .unwrap();
    assert_eq!(without["a"].controller_revision, "");
}

#[test]
fn existing_entries_and_injected_names_are_kept() {
    let set = simple_set("a", json!([{"name": "s", "image": "s"}]));
    let mut pod = web_pod();
    pod.metadata.annotations = Some(
        [
            (
                keys::HASH_ANNOTATION.to_owned(),
                r#"{"other":"legacyhash"}"#.to_owned(),
            ),
            (
                keys::INJECTED_LIST_ANNOTATION.to_owned(),
                "other".to_owned(),
            ),
        ]
        .into(),
    );
    let out = inject(&pod, &[set]).pod;
    let hashes =
        kruise_api::annotations::parse_hashes(annotation(&out, keys::HASH_ANNOTATION).unwrap())
            .unwrap();
    assert_eq!(hashes["other"].hash, "legacyhash");
    assert!(hashes.contains_key("a"));
    assert_eq!(
        annotation(&out, keys::INJECTED_LIST_ANNOTATION),
        Some("a,other")
    );
}
