//! SidecarSet revisions (upstream `registerLatestRevision`) and the revision chosen for injection
//! (`getSuitableRevisionSidecarSet`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::needless_pass_by_value,
    clippy::type_complexity
)]

use crate::support;

use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::Pod;
use kruise_api::apps::v1beta1::SidecarSet;
use kruise_api::keys::sidecarset as keys;
use kruise_sidecar::revision::{self, LatestRevision, plan_revisions};
use kruise_sidecar::{Error, FixedChance, injection_revision};
use serde_json::json;

/// No matched pods.
const NO_PODS: &[&Pod] = &[];

fn set_with_image(image: &str, extra_spec: serde_json::Value) -> SidecarSet {
    let mut spec = json!({
        "selector": {"matchLabels": {"app": "web"}},
        "containers": [{"name": "c", "image": image}],
    });
    for (k, v) in extra_spec.as_object().unwrap() {
        spec[k] = v.clone();
    }
    let mut set: SidecarSet = serde_json::from_value(json!({
        "metadata": {"name": "s", "uid": "u-1", "labels": {"team": "a"}},
        "spec": spec
    }))
    .unwrap();
    kruise_sidecar::hash::annotate(&mut set).unwrap();
    set
}

fn stored(set: &SidecarSet, number: i64, custom_version: Option<&str>) -> ControllerRevision {
    let mut revision = revision::new_revision(set, "kruise-system", number, 0).unwrap();
    if let Some(version) = custom_version {
        revision
            .metadata
            .labels
            .as_mut()
            .unwrap()
            .insert(keys::CUSTOM_VERSION_LABEL.into(), version.into());
    }
    revision
}

fn web_pod() -> Pod {
    support::pod(json!({"metadata": {"name": "p", "namespace": "ns", "labels": {"app": "web"}}}))
}

fn image(set: &SidecarSet) -> &str {
    set.spec.containers[0].container.image.as_deref().unwrap()
}

#[test]
fn data_bytes_and_name() {
    let set: SidecarSet = serde_json::from_value(json!({"metadata": {"name": "s"},
        "spec": {"containers": [{"name": "c", "image": "i"}]}}))
    .unwrap();
    let data = revision::data(&set).unwrap();
    assert_eq!(
        data,
        r#"{"spec":{"$patch":"replace","containers":[{"image":"i","name":"c","resources":{},"shareVolumePolicy":{},"upgradeStrategy":{}}],"imagePullSecrets":null,"initContainers":null,"patchPodMetadata":null,"volumes":null}}"#
    );
    let name = revision::name_for("s", &data, 0);
    assert_eq!(
        name,
        format!(
            "s-{}",
            kruise_inplace::revision::hash(data.as_bytes(), Some(0))
        )
    );
    assert_ne!(name, revision::name_for("s", &data, 1));

    let full: SidecarSet = serde_json::from_value(json!({"metadata": {"name": "s"}, "spec": {
        "containers": [{"name": "c", "image": "i"}],
        "volumes": [{"name": "v", "emptyDir": {}}],
        "imagePullSecrets": [{"name": "reg"}],
        "patchPodMetadata": [{"annotations": {"a": "b"}, "patchPolicy": "Overwrite"}]}}))
    .unwrap();
    let data = revision::data(&full).unwrap();
    assert!(
        data.contains(r#""imagePullSecrets":[{"name":"reg"}]"#),
        "{data}"
    );
    assert!(
        data.contains(
            r#""patchPodMetadata":[{"annotations":{"a":"b"},"patchPolicy":"Overwrite"}]"#
        ),
        "{data}"
    );
    assert!(
        data.contains(r#""volumes":[{"emptyDir":{},"name":"v"}]"#),
        "{data}"
    );
}

#[test]
fn new_revision_metadata() {
    let mut set = set_with_image("i:1", json!({"customVersion": "v1"}));
    set.metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert("note".into(), "x".into());
    let revision = revision::new_revision(&set, "kruise-system", 3, 0).unwrap();
    let labels = revision.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["team"], "a");
    assert_eq!(labels[keys::NAME_LABEL], "s");
    assert_eq!(labels[keys::CUSTOM_VERSION_LABEL], "v1");
    assert!(
        revision
            .metadata
            .name
            .as_ref()
            .unwrap()
            .ends_with(&labels["controller.kubernetes.io/hash"])
    );
    assert_eq!(
        revision.metadata.namespace.as_deref(),
        Some("kruise-system")
    );
    assert_eq!(revision.metadata.annotations.as_ref().unwrap()["note"], "x");
    let owner = &revision.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str(), owner.controller),
        ("SidecarSet", "u-1", Some(true))
    );
    assert_eq!(revision::number(&revision), 3);
}

#[test]
fn restore_history() {
    let old = set_with_image("i:1", json!({}));
    let current = set_with_image("i:2", json!({}));
    let stored_old = stored(&old, 1, None);
    assert!(revision::data_of(&stored_old).is_some());
    let restored = revision::restore(&current, &stored_old).unwrap();
    assert_eq!(image(&restored), "i:1");
    assert_eq!(
        restored.metadata.annotations.as_ref().unwrap()[keys::HASH_ANNOTATION],
        old.metadata.annotations.as_ref().unwrap()[keys::HASH_ANNOTATION]
    );
    assert_eq!(
        restored.status.as_ref().unwrap().latest_revision,
        stored_old.metadata.name.clone().unwrap()
    );
    // Without hash annotations on the revision, they are computed from the restored spec.
    let mut bare = stored_old.clone();
    bare.metadata.annotations = None;
    let restored = revision::restore(&current, &bare).unwrap();
    assert_eq!(
        restored.metadata.annotations.as_ref().unwrap()[keys::HASH_ANNOTATION],
        kruise_sidecar::hash::compute(&old).unwrap().hash
    );
    let broken: ControllerRevision = serde_json::from_value(json!({
        "metadata": {"name": "s-broken"}, "data": {"spec": {"containers": 5}}, "revision": 1}))
    .unwrap();
    assert!(matches!(
        revision::restore(&current, &broken),
        Err(Error::RevisionData { .. })
    ));
}

#[test]
fn revision_for_create_table() {
    let v1 = set_with_image("i:1", json!({}));
    let v2 = set_with_image("i:2", json!({}));
    let revisions = vec![stored(&v1, 1, Some("gray")), stored(&v2, 2, Some("gray"))];
    let v1_name = revisions[0].metadata.name.clone().unwrap();
    let current = |extra: serde_json::Value| set_with_image("i:3", extra);
    let pod = web_pod();
    let cases: [(serde_json::Value, f64, &str); 10] = [
        (json!({}), 0.0, "i:3"),
        (
            json!({"injectionStrategy": {"revision": {"policy": "Always"}}}),
            0.0,
            "i:3",
        ),
        (
            json!({"injectionStrategy": {"revision": {"revisionName": v1_name}}}),
            0.0,
            "i:1",
        ),
        (
            json!({"injectionStrategy": {"revision": {"customVersion": "gray"}}}),
            0.0,
            "i:2",
        ),
        (
            json!({"injectionStrategy": {"revision": {"revisionName": v1_name, "policy": "Partial"}},
                "updateStrategy": {"paused": true}}),
            1.0,
            "i:1",
        ),
        (
            json!({"injectionStrategy": {"revision": {"revisionName": v1_name, "policy": "Partial"}},
                "updateStrategy": {"selector": {"matchLabels": {"canary": "true"}}}}),
            1.0,
            "i:1",
        ),
        (
            json!({"injectionStrategy": {"revision": {"revisionName": v1_name, "policy": "Partial"}},
                "updateStrategy": {"selector": {"matchLabels": {"app": "web"}}, "partition": 3}}),
            0.0,
            "i:3",
        ),
        (
            json!({"injectionStrategy": {"revision": {"revisionName": v1_name, "policy": "Partial"}},
                "updateStrategy": {"partition": "50%"}}),
            0.5,
            "i:1",
        ),
        (
            json!({"injectionStrategy": {"revision": {"revisionName": v1_name, "policy": "Partial"}},
                "updateStrategy": {"partition": "50%"}}),
            0.51,
            "i:3",
        ),
        (
            json!({"injectionStrategy": {"revision": {"revisionName": v1_name, "policy": "Partial"}}}),
            0.0,
            "i:3",
        ),
    ];
    for (extra, draw, expected) in cases {
        let set = current(extra.clone());
        let chosen =
            injection_revision::for_create(&set, &pod, &revisions, &mut FixedChance(draw)).unwrap();
        assert_eq!(image(&chosen), expected, "{extra} draw {draw}");
    }
}

#[test]
fn revision_lookup_errors() {
    let pod = web_pod();
    let missing = set_with_image(
        "i",
        json!({"injectionStrategy": {"revision": {"revisionName": "s-nope"}}}),
    );
    let error =
        injection_revision::for_create(&missing, &pod, &[], &mut FixedChance(0.0)).unwrap_err();
    assert!(error.to_string().contains("s-nope"), "{error}");
    let custom = set_with_image(
        "i",
        json!({"injectionStrategy": {"revision": {"customVersion": "v9"}}}),
    );
    assert!(matches!(
        injection_revision::for_create(&custom, &pod, &[], &mut FixedChance(0.0)),
        Err(Error::CustomVersionNotFound { .. })
    ));
    let v1 = set_with_image("i:1", json!({}));
    let revisions = [stored(&v1, 1, None)];
    let bad_partition = set_with_image(
        "i",
        json!({
        "injectionStrategy": {"revision": {"revisionName": revisions[0].metadata.name.clone().unwrap(), "policy": "Partial"}},
        "updateStrategy": {"partition": "half"}}),
    );
    let message =
        injection_revision::for_create(&bad_partition, &pod, &revisions, &mut FixedChance(0.0))
            .unwrap_err()
            .to_string();
    assert!(
        message.contains("partition") && message.contains("half"),
        "{message}"
    );
}

#[test]
fn revision_for_update() {
    let v1 = set_with_image("i:1", json!({}));
    let current = set_with_image("i:2", json!({}));
    let revisions = [stored(&v1, 1, None)];
    let v1_name = revisions[0].metadata.name.clone().unwrap();
    let recorded = |hash: &str, revision: &str| {
        let mut pod = web_pod();
        pod.metadata.annotations = Some(
            [(
                keys::HASH_ANNOTATION.to_owned(),
                format!(r#"{{"s":{{"updateTimestamp":null,"hash":"{hash}","sidecarSetName":"s","sidecarList":["c"],"controllerRevision":"{revision}"}}}}"#),
            )]
            .into(),
        );
        pod
    };
    let current_hash =
        current.metadata.annotations.as_ref().unwrap()[keys::HASH_ANNOTATION].clone();
    let bare = web_pod();
    let cases = [
        (recorded(&current_hash, &v1_name), bare.clone(), "i:2"),
        (recorded("old", &v1_name), bare.clone(), "i:1"),
        (bare.clone(), recorded("old", &v1_name), "i:1"),
        (recorded("old", "s-unknown"), bare.clone(), "i:2"),
    ];
    for (pod, old, expected) in cases {
        let chosen = injection_revision::for_update(&current, &pod, &old, &revisions).unwrap();
        assert_eq!(image(&chosen), expected);
    }
}

#[test]
fn latest_revision_reuse_rollback_create() {
    let v1 = set_with_image("i:1", json!({}));
    let v2 = set_with_image("i:2", json!({}));
    let none = plan_revisions(&v1, &[], NO_PODS, "kruise-system").unwrap();
    let LatestRevision::Create(created) = &none.latest else {
        panic!("{:?}", none.latest)
    };
    assert_eq!(revision::number(created), 1);

    let history = vec![stored(&v1, 1, None), stored(&v2, 2, None)];
    let reuse = plan_revisions(&v2, &history, NO_PODS, "kruise-system").unwrap();
    assert_eq!(
        reuse.latest,
        LatestRevision::Reuse {
            name: history[1].metadata.name.clone().unwrap()
        }
    );
    let rollback = plan_revisions(&v1, &history, NO_PODS, "kruise-system").unwrap();
    assert_eq!(
        rollback.latest,
        LatestRevision::Rollback {
            name: history[0].metadata.name.clone().unwrap(),
            number: 3
        }
    );
    let v3 = set_with_image("i:3", json!({"customVersion": "v3"}));
    let create = plan_revisions(&v3, &history, NO_PODS, "kruise-system").unwrap();
    assert!(matches!(create.latest, LatestRevision::Create(_)));
    assert_eq!(
        create.custom_version_label, None,
        "a new revision carries the label already"
    );
    let labelled = plan_revisions(
        &set_with_image("i:2", json!({"customVersion": "v2"})),
        &history,
        NO_PODS,
        "ns",
    )
    .unwrap();
    assert_eq!(labelled.custom_version_label.as_deref(), Some("v2"));
}

#[test]
fn history_truncation_keeps_used_revisions() {
    let sets: Vec<SidecarSet> = (1..=4)
        .map(|n| set_with_image(&format!("i:{n}"), json!({})))
        .collect();
    let history: Vec<ControllerRevision> = sets
        .iter()
        .enumerate()
        .map(|(n, s)| stored(s, i64::try_from(n).unwrap() + 1, None))
        .collect();
    let name = |n: usize| history[n].metadata.name.clone().unwrap();
    let mut limited = set_with_image("i:5", json!({"revisionHistoryLimit": 2}));
    let using = |n: usize| {
        let mut pod = web_pod();
        pod.metadata.annotations = Some([(keys::HASH_ANNOTATION.to_owned(),
            format!(r#"{{"s":{{"hash":"h","sidecarSetName":"s","sidecarList":[],"controllerRevision":"{}"}}}}"#, name(n)))].into());
        pod
    };
    let plan = plan_revisions(&limited, &history, &[&using(0)], "ns").unwrap();
    assert_eq!(
        plan.delete,
        [name(1), name(2), name(3)],
        "oldest unused first; the pod's revision stays"
    );
    assert_eq!(plan.over_limit, 0);
    let (a, b, c) = (using(0), using(1), using(2));
    let plan = plan_revisions(&limited, &history, &[&a, &b, &c], "ns").unwrap();
    assert_eq!(plan.delete, [name(3)]);
    assert_eq!(
        plan.over_limit, 2,
        "revisions in use are never deleted, even over the limit"
    );
    limited.spec.injection_strategy =
        serde_json::from_value(json!({"revision": {"revisionName": name(1)}})).unwrap();
    let plan = plan_revisions(&limited, &history, NO_PODS, "ns").unwrap();
    assert_eq!(plan.delete, [name(0), name(2), name(3)]);
    let plan = plan_revisions(&set_with_image("i:5", json!({})), &history, NO_PODS, "ns").unwrap();
    assert!(
        plan.delete.is_empty(),
        "5 revisions are within the default limit of 10"
    );
}
