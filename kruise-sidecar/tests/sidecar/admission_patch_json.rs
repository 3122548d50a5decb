//! `inject_json` / `injection_patch_json`: the admission patch written straight as JSON text is the same patch
//! as the typed one, and the same pod.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_sidecar::{InjectRequest, Options, SeededChance};
use serde_json::{Value, json};

fn both(pod: &Pod, sets: &[SidecarSet], old_pod: Option<&Pod>) {
    let request = InjectRequest {
        pod,
        old_pod,
        sidecarsets: sets,
        revisions: &[],
        namespace_labels: None,
        now: support::now(),
        options: Options::default(),
    };
    let typed = kruise_sidecar::inject(&request, &mut SeededChance::new(7)).unwrap();
    let text = kruise_sidecar::inject_json(&request, &mut SeededChance::new(7)).unwrap();
    assert_eq!(text.pod, typed.pod);
    assert_eq!(text.sidecarsets, typed.sidecarsets);
    let parsed: Value = serde_json::from_str(&text.patch).unwrap();
    assert_eq!(parsed, serde_json::to_value(&typed.patch).unwrap());
    // And it applies.
    let patch: json_patch::Patch = serde_json::from_str(&text.patch).unwrap();
    let mut value = serde_json::to_value(pod).unwrap();
    json_patch::patch(&mut value, &patch).unwrap();
    assert_eq!(serde_json::from_value::<Pod>(value).unwrap(), typed.pod);
}

#[test]
fn json_patch_equals_the_typed_patch_on_the_seed_fixtures() {
    let log = support::sidecarset_fixture("sidecarset-log.yaml");
    let before_app = support::sidecarset_fixture("sidecarset-before-app.yaml");
    let hot = support::sidecarset_fixture("sidecarset-hotupgrade.yaml");
    for pod_name in ["pod-nginx.yaml", "pod-sample.yaml", "pod-hotupgrade.yaml"] {
        let pod = support::pod_fixture(pod_name);
        for sets in [
            vec![log.clone()],
            vec![before_app.clone()],
            vec![hot.clone()],
            vec![log.clone(), before_app.clone(), hot.clone()],
        ] {
            both(&pod, &sets, None);
        }
    }
}

#[test]
fn json_patch_of_no_change_is_empty_and_paths_are_escaped() {
    let pod = support::pod(json!({
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "x"},
                     "annotations": {"a/b~c": "1"}},
        "spec": {"containers": [{"name": "app", "image": "nginx"}]},
    }));
    let set = support::sidecarset(json!({
        "metadata": {"name": "s"},
        "spec": {"selector": {"matchLabels": {"app": "x"}},
                 "containers": [{"name": "sidecar", "image": "busybox"}],
                 "patchPodMetadata": [{"patchPolicy": "Overwrite", "annotations": {"a/b~c": "2", "q\"uote": "x"}}]},
    }));
    both(&pod, std::slice::from_ref(&set), None);
    let request = InjectRequest {
        pod: &pod,
        old_pod: Some(&pod),
        sidecarsets: std::slice::from_ref(&set),
        revisions: &[],
        namespace_labels: None,
        now: support::now(),
        options: Options::default(),
    };
    let update = kruise_sidecar::inject_json(&request, &mut SeededChance::new(1)).unwrap();
    assert_eq!(update.patch, "[]");
    let patch = kruise_sidecar::admission_patch::injection_patch_json(&pod, &pod);
    assert_eq!(patch, "[]");
}

/// A pod whose JSON has no `containers` at all (the API server calls mutating webhooks before it validates,
/// and the typed pod reads the missing list as empty): the injected containers are added as a whole list,
/// so the patch applies to the pod as it was sent. Appending with `/spec/containers/-` failed there (found by
/// kruise-manager's `untrusted_input` property tests).
#[test]
fn a_pod_without_containers_gets_them_added_whole() {
    let sent = json!({
        "metadata": {"name": "p", "namespace": "default", "labels": {"app": "x"}},
        "spec": {"initContainers": []},
    });
    let pod = support::pod(sent.clone());
    let set = support::sidecarset(json!({
        "metadata": {"name": "s"},
        "spec": {"selector": {"matchLabels": {"app": "x"}},
                 "initContainers": [{"name": "init", "image": "busybox"}],
                 "containers": [{"name": "sidecar", "image": "busybox"}]},
    }));
    both(&pod, std::slice::from_ref(&set), None);
    let request = InjectRequest {
        pod: &pod,
        old_pod: None,
        sidecarsets: std::slice::from_ref(&set),
        revisions: &[],
        namespace_labels: None,
        now: support::now(),
        options: Options::default(),
    };
    let injection = kruise_sidecar::inject_json(&request, &mut SeededChance::new(7)).unwrap();
    let patch: json_patch::Patch = serde_json::from_str(&injection.patch).unwrap();
    let mut value = sent;
    json_patch::patch(&mut value, &patch).unwrap();
    assert_eq!(value["spec"]["containers"][0]["name"], "sidecar");
    assert_eq!(value["spec"]["initContainers"][0]["name"], "init");
    let typed = kruise_sidecar::inject(&request, &mut SeededChance::new(7)).unwrap();
    let mut value = serde_json::to_value(&pod).unwrap();
    value["spec"].as_object_mut().unwrap().remove("containers");
    json_patch::patch(&mut value, &typed.patch).unwrap();
    assert_eq!(serde_json::from_value::<Pod>(value).unwrap(), typed.pod);
}
