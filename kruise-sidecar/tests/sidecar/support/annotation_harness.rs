//! The fuzz harness of the SidecarSet annotation parsers, shared by `fuzz/fuzz_targets/sidecar_annotations.rs`
//! and the deterministic corpus test (`tests/sidecar/annotation_corpus.rs`).
//!
//! Input: up to five NUL-separated values used as a pod's `kruise.io/sidecarset-hash`,
//! `kruise.io/sidecarset-working-hotupgrade-container`, `kruise.io/sidecarset-inplace-update-state` and
//! `kruise.io/sidecarset-injected-list` annotations and its `SidecarSetUpgradable` condition message. Every
//! parser and entry point (injection, the planner, the merge patch) must return, never panic, and what parses
//! must keep its form through another round trip.

use k8s_openapi::api::core::v1::Pod;
use kruise_api::annotations::{self, InjectedSidecarSets, WorkingHotUpgradeContainers};
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_api::keys::sidecarset as keys;
use kruise_sidecar::{InjectRequest, Options, PlanInput, SeededChance};

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(5, '\u{0}');
    let hash = parts.next().unwrap_or_default();
    let working = parts.next();
    let state = parts.next();
    let injected = parts.next();
    let message = parts.next();

    if let Ok(entries) = annotations::parse_hashes(hash) {
        let written = kruise_sidecar::records::to_annotation_value(&entries);
        let again = annotations::parse_hashes(&written).expect("written entries parse");
        assert_eq!(
            kruise_sidecar::records::to_annotation_value(&again),
            written,
            "hash round trip"
        );
    }
    if let Some(working) = working
        && let Ok(parsed) = WorkingHotUpgradeContainers::parse(working)
    {
        assert_eq!(
            WorkingHotUpgradeContainers::parse(&parsed.to_value()).ok(),
            Some(parsed)
        );
    }
    if let Some(injected) = injected {
        let list = InjectedSidecarSets::parse(injected);
        assert_eq!(InjectedSidecarSets::parse(&list.to_value()), list);
    }
    for (document, patch) in [
        (hash, working.unwrap_or("{}")),
        (working.unwrap_or("{}"), hash),
    ] {
        if let Ok(merged) = kruise_sidecar::metadata::merge_patch(document, patch) {
            assert!(
                serde_json::from_str::<serde_json::Value>(&merged).is_ok(),
                "{merged}"
            );
        }
    }

    let sidecarset: SidecarSet = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "fuzz", "resourceVersion": "5"},
        "spec": {"selector": {"matchLabels": {"app": "fuzz"}},
            "containers": [
                {"name": "cold", "image": "cold:2", "podInjectPolicy": "BeforeAppContainer"},
                {"name": "hot", "image": "hot:2",
                 "upgradeStrategy": {"upgradeType": "HotUpgrade", "hotUpgradeEmptyImage": "empty:1"}}],
            "patchPodMetadata": [{"annotations": {(keys::HASH_ANNOTATION): "{}"}, "patchPolicy": "MergePatchJson"}]}
    }))
    .expect("the SidecarSet parses");
    let mut pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "fuzz", "namespace": "default", "labels": {"app": "fuzz"}, "annotations": {}},
        "spec": {"containers": [
            {"name": "cold", "image": "cold:1"}, {"name": "hot-1", "image": "hot:1"},
            {"name": "hot-2", "image": "empty:1"}, {"name": "main", "image": "main"}]},
        "status": {"phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"},
                           {"type": keys::UPGRADABLE_CONDITION, "status": "True", "message": message.unwrap_or("")}],
            "containerStatuses": [
                {"name": "cold", "image": "cold:1", "imageID": "a", "ready": true, "restartCount": 0},
                {"name": "hot-1", "image": "hot:1", "imageID": "b", "ready": true, "restartCount": 0},
                {"name": "hot-2", "image": "empty:1", "imageID": "c", "ready": true, "restartCount": 0},
                {"name": "main", "image": "main", "imageID": "d", "ready": true, "restartCount": 0}]}
    }))
    .expect("the base pod parses");
    let map = pod
        .metadata
        .annotations
        .get_or_insert_with(Default::default);
    map.insert(keys::HASH_ANNOTATION.to_owned(), hash.to_owned());
    map.insert(
        keys::HASH_WITHOUT_IMAGE_ANNOTATION.to_owned(),
        hash.to_owned(),
    );
    for (key, value) in [
        (keys::WORKING_HOT_UPGRADE_CONTAINER_ANNOTATION, working),
        (keys::INPLACE_UPDATE_STATE_ANNOTATION, state),
        (keys::INJECTED_LIST_ANNOTATION, injected),
    ] {
        if let Some(value) = value {
            map.insert(key.to_owned(), value.to_owned());
        }
    }
    let now = "2024-05-01T10:00:00Z".parse().expect("a timestamp");
    let sets = [sidecarset];
    let request = InjectRequest {
        pod: &pod,
        old_pod: None,
        sidecarsets: &sets,
        revisions: &[],
        namespace_labels: None,
        now,
        options: Options::default(),
    };
    if let Ok(injection) = kruise_sidecar::inject(&request, &mut SeededChance::new(1)) {
        let mut value = serde_json::to_value(&pod).expect("a pod serialises");
        json_patch::patch(&mut value, &injection.patch).expect("the patch applies");
    }
    let _ = kruise_sidecar::plan(&PlanInput {
        sidecarset: &sets[0],
        pods: std::slice::from_ref(&pod),
        revisions: &[],
        revision_namespace: "kruise-system",
        now,
    });
    let _ = kruise_sidecar::consistency::is_pod_ready(&sets[0], &pod);
    let _ = kruise_sidecar::hot_upgrade::needs_reset(&sets[0], &pod);
}
