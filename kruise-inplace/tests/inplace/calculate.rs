//! Table tests of `calculate` (upstream `defaultCalculateInPlaceUpdateSpec`), starting with upstream's own cases.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::needless_pass_by_value
)] // test code

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ControllerRevision;
use kruise_inplace::qos::QosClass;
use kruise_inplace::{FeatureGates, Recreate, UpdateOptions, UpdateSpec, calculate};
use serde_json::{Value, json};

fn revision(name: &str, data: &str) -> ControllerRevision {
    let data: Value = serde_json::from_str(data).unwrap();
    serde_json::from_value(json!({"metadata": {"name": name}, "data": data, "revision": 1}))
        .unwrap()
}

fn with_annotations(
    mut revision: ControllerRevision,
    annotations: &[(&str, &str)],
) -> ControllerRevision {
    revision.metadata.annotations = Some(
        annotations
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    );
    revision
}

fn images(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn resources_json(spec: &UpdateSpec) -> Value {
    serde_json::from_str::<Value>(&spec.to_json()).unwrap()["containerResources"].clone()
}

fn patch_text(spec: &UpdateSpec) -> Option<String> {
    spec.meta_data_patch
        .as_ref()
        .map(|bytes| String::from_utf8(bytes.clone()).unwrap())
}

/// Upstream's TestCalculateInPlaceUpdateSpec, case by case.
#[test]
fn upstream_cases() {
    let options = UpdateOptions::default();
    let t = |meta: &str, containers: &str| {
        format!(
            r#"{{"spec":{{"template":{{"$patch":"replace",{meta}"spec":{{"containers":{containers}}}}}}}}}"#
        )
    };
    // 1. image only
    let spec = calculate(
        &revision("old-revision", &t("", r#"[{"name":"c1","image":"foo1"}]"#)),
        &revision("new-revision", &t("", r#"[{"name":"c1","image":"foo2"}]"#)),
        &options,
    )
    .unwrap();
    assert_eq!(
        spec,
        UpdateSpec {
            revision: "new-revision".into(),
            container_images: images(&[("c1", "foo2")]),
            ..UpdateSpec::default()
        }
    );

    // 2. metadata outside the template is not part of the diff once it is equal
    let outside = |image: &str| {
        format!(
            r#"{{"metadata":{{"labels":{{"k":"v"}}}},"spec":{{"template":{{"$patch":"replace","spec":{{"containers":[{{"name":"c1","image":"{image}"}}]}}}}}}}}"#
        )
    };
    let spec = calculate(
        &revision("old-revision", &outside("foo1")),
        &revision("new-revision", &outside("foo2")),
        &options,
    )
    .unwrap();
    assert_eq!(spec.container_images, images(&[("c1", "foo2")]));
    assert_eq!(spec.meta_data_patch, None);

    // 3. a new template label goes into the metadata patch
    let spec = calculate(
        &revision(
            "old-revision",
            &t(
                r#""metadata":{"labels":{"k":"v"}},"#,
                r#"[{"name":"c1","image":"foo1"}]"#,
            ),
        ),
        &revision(
            "new-revision",
            &t(
                r#""metadata":{"labels":{"k":"v","k1":"v1"}},"#,
                r#"[{"name":"c1","image":"foo2"}]"#,
            ),
        ),
        &options,
    )
    .unwrap();
    assert_eq!(
        patch_text(&spec).as_deref(),
        Some(r#"{"metadata":{"labels":{"k1":"v1"}}}"#)
    );
    assert!(!spec.update_env_from_metadata);

    // 4. a label read by an env var goes to containerRefMetadata, the rest to the patch
    let env = r#"[{"name":"c1","image":"IMG","env":[{"name":"TEST_ENV","valueFrom":{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.labels['k']"}}}]}]"#;
    let spec = calculate(
        &revision(
            "old-revision",
            &t(
                r#""metadata":{"labels":{"k":"v"}},"#,
                &env.replace("IMG", "foo1"),
            ),
        ),
        &revision(
            "new-revision",
            &t(
                r#""metadata":{"labels":{"k":"v2","k1":"v1"}},"#,
                &env.replace("IMG", "foo2"),
            ),
        ),
        &options,
    )
    .unwrap();
    assert_eq!(spec.container_images, images(&[("c1", "foo2")]));
    assert_eq!(
        spec.container_ref_metadata["c1"].labels,
        images(&[("k", "v2")])
    );
    assert!(spec.update_env_from_metadata);
    assert_eq!(
        patch_text(&spec).as_deref(),
        Some(r#"{"metadata":{"labels":{"k1":"v1"}}}"#)
    );

    // 5. finalizers and a removed label
    let spec = calculate(
        &revision(
            "old-revision",
            &t(
                r#""metadata":{"labels":{"k":"v","k2":"v2"},"finalizers":["fz1","fz2"]},"#,
                r#"[{"name":"c1","image":"foo1"}]"#,
            ),
        ),
        &revision(
            "new-revision",
            &t(
                r#""metadata":{"labels":{"k":"v","k1":"v1"},"finalizers":["fz2"]},"#,
                r#"[{"name":"c1","image":"foo2"}]"#,
            ),
        ),
        &options,
    )
    .unwrap();
    assert_eq!(
        patch_text(&spec).as_deref(),
        Some(
            r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["fz1"],"$setElementOrder/finalizers":["fz2"],"labels":{"k1":"v1","k2":null}}}"#
        )
    );
    assert!(spec.container_ref_metadata.is_empty());
}

#[test]
fn what_recreates() {
    let options = UpdateOptions::default();
    let base = r#"{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null},"spec":{"containers":[{"name":"c1","image":"a","env":[{"name":"E","value":"1"}],"resources":{}}]}}}}"#;
    let cases: &[(&str, &str)] = &[
        // env value change
        (r#""value":"1""#, r#""value":"2""#),
        // a container added
        (r#"}]}}}}"#, r#"},{"name":"c2","image":"b"}]}}}}"#),
        // image removed
        (r#""image":"a","#, ""),
        // the $patch directive
        (r#""$patch":"replace""#, r#""$patch":"merge""#),
        // a pod-level field
        (r#""containers""#, r#""hostNetwork":true,"containers""#),
        // resources without the vertical gate
        (r#""resources":{}"#, r#""resources":{"limits":{"cpu":"1"}}"#),
    ];
    for (from, to) in cases {
        let new = base.replacen(from, to, 1);
        assert_ne!(new, base, "{from} not found");
        let result = calculate(&revision("old", base), &revision("new", &new), &options);
        assert!(result.is_err(), "{from} -> {to}: {result:?}");
    }
    // The reasons name the operation and the path without /spec/template.
    let error = calculate(
        &revision("old", base),
        &revision("new", &base.replace(r#""value":"1""#, r#""value":"2""#)),
        &options,
    )
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "replace /spec/containers/0/env/0/value: only replacing a container's image can be done in place"
    );
    let error = calculate(
        &revision("old", base),
        &revision("new", &base.replace("replace", "merge")),
        &options,
    )
    .unwrap_err();
    assert_eq!(
        error,
        Recreate::OutsideTemplate {
            op: "replace",
            path: "/$patch".into()
        }
    );
    // No data at all.
    let empty: ControllerRevision =
        serde_json::from_value(json!({"metadata": {"name": "x"}, "revision": 1}))
            .unwrap_or_else(|_| revision("x", "null"));
    assert!(matches!(
        calculate(&empty, &revision("new", base), &options),
        Err(Recreate::InvalidRevision { .. })
    ));
    // Data that is not a revision.
    assert!(matches!(
        calculate(
            &revision("old", r#"{"spec":[]}"#),
            &revision("new", base),
            &options
        ),
        Err(Recreate::OutsideTemplate { .. } | Recreate::InvalidRevision { .. })
    ));
}

#[test]
fn metadata_only_change_is_in_place() {
    let old = r#"{"spec":{"template":{"$patch":"replace","metadata":{"annotations":{"a":"1"},"creationTimestamp":null},"spec":{"containers":[{"name":"c1","image":"a"}]}}}}"#;
    let new = old.replace(r#""a":"1""#, r#""a":"2""#);
    let spec = calculate(
        &revision("old", old),
        &revision("new", &new),
        &UpdateOptions::default(),
    )
    .unwrap();
    assert!(spec.container_images.is_empty());
    assert_eq!(
        patch_text(&spec).as_deref(),
        Some(r#"{"metadata":{"annotations":{"a":"2"}}}"#)
    );
}

#[test]
fn env_from_metadata_rules() {
    let data = |labels: &str, annotations: &str| {
        format!(
            r#"{{"spec":{{"template":{{"$patch":"replace","metadata":{{"creationTimestamp":null,"labels":{labels},"annotations":{annotations}}},"spec":{{"containers":[
                {{"name":"app","image":"a","env":[{{"name":"L","valueFrom":{{"fieldRef":{{"fieldPath":"metadata.labels['team/x']"}}}}}},{{"name":"A","valueFrom":{{"fieldRef":{{"fieldPath":"metadata.annotations['cfg']"}}}}}}]}},
                {{"name":"sidecar","image":"s","env":[{{"name":"SIDECARSET_VERSION","valueFrom":{{"fieldRef":{{"fieldPath":"metadata.annotations['version.sidecarset.kruise.io/sidecar']"}}}}}},{{"name":"LIT","value":"x","valueFrom":{{"fieldRef":{{"fieldPath":"metadata.labels['lit']"}}}}}}]}}
            ]}}}}}}}}"#
        )
    };
    let old = data(
        r#"{"team/x":"1","lit":"1"}"#,
        r#"{"cfg":"1","version.sidecarset.kruise.io/sidecar":"1"}"#,
    );
    let new = data(
        r#"{"team/x":"2","lit":"2"}"#,
        r#"{"cfg":"2","version.sidecarset.kruise.io/sidecar":"2"}"#,
    );
    let options = UpdateOptions::default();
    let spec = calculate(&revision("old", &old), &revision("new", &new), &options).unwrap();
    assert!(spec.update_env_from_metadata);
    // Only `app` reads metadata the counting way; the label key with '/' is decoded from "team~1x".
    assert_eq!(
        spec.container_ref_metadata.keys().collect::<Vec<_>>(),
        ["app"]
    );
    assert_eq!(
        spec.container_ref_metadata["app"].labels,
        images(&[("team/x", "2")])
    );
    assert_eq!(
        spec.container_ref_metadata["app"].annotations,
        images(&[("cfg", "2")])
    );
    // The SidecarSet version annotation and the label behind a literal value stay in the patch.
    assert_eq!(
        patch_text(&spec).as_deref(),
        Some(
            r#"{"metadata":{"annotations":{"version.sidecarset.kruise.io/sidecar":"2"},"labels":{"lit":"2"}}}"#
        )
    );
    // With the gate off everything goes into the patch.
    let off = UpdateOptions {
        gates: FeatureGates {
            in_place_update_env_from_metadata: false,
            ..FeatureGates::default()
        },
        ..UpdateOptions::default()
    };
    let spec = calculate(&revision("old", &old), &revision("new", &new), &off).unwrap();
    assert!(!spec.update_env_from_metadata && spec.container_ref_metadata.is_empty());
    assert_eq!(
        patch_text(&spec).as_deref(),
        Some(
            r#"{"metadata":{"annotations":{"cfg":"2","version.sidecarset.kruise.io/sidecar":"2"},"labels":{"lit":"2","team/x":"2"}}}"#
        )
    );
    // A removed label is not an env change: it stays in the patch as null.
    let removed = data(
        r#"{"lit":"1"}"#,
        r#"{"cfg":"1","version.sidecarset.kruise.io/sidecar":"1"}"#,
    );
    let spec = calculate(&revision("old", &old), &revision("new", &removed), &options).unwrap();
    assert!(!spec.update_env_from_metadata);
    assert_eq!(
        patch_text(&spec).as_deref(),
        Some(r#"{"metadata":{"labels":{"team/x":null}}}"#)
    );
}

/// Upstream's Test_defaultCalculateInPlaceUpdateSpec_VCTHash: which annotation pairs recreate.
#[test]
fn volume_claim_template_hash_rule() {
    let data = |image: &str| {
        format!(
            r#"{{"spec":{{"template":{{"$patch":"replace","metadata":{{"creationTimestamp":null,"labels":{{"app":"nginx"}}}},"spec":{{"containers":[{{"image":"{image}","name":"nginx","resources":{{}}}}]}}}}}}}}"#
        )
    };
    let key = kruise_api::keys::inplace::VOLUME_CLAIM_TEMPLATE_HASH_ANNOTATION;
    let cases: [(Option<&str>, Option<&str>, bool); 6] = [
        (None, None, false),
        (None, Some("balala"), false),
        (Some("balala"), None, false),
        (Some(""), Some("balala"), true),
        (Some("balala"), Some("balala"), false),
        (Some(""), Some(""), false),
    ];
    for (old_hash, new_hash, recreates) in cases {
        let old = with_annotations(
            revision("old-revision", &data("nginx:stable-alpine22")),
            &old_hash.map(|h| (key, h)).into_iter().collect::<Vec<_>>(),
        );
        let new = with_annotations(
            revision("new-revision", &data("nginx:stable-alpine")),
            &new_hash.map(|h| (key, h)).into_iter().collect::<Vec<_>>(),
        );
        for (gate, ignore) in [(false, false), (true, false), (true, true)] {
            let options = UpdateOptions {
                gates: FeatureGates {
                    recreate_pod_when_change_vct_in_clone_set_gate: gate,
                    ..FeatureGates::default()
                },
                ignore_volume_claim_templates_hash_diff: ignore,
                ..UpdateOptions::default()
            };
            let result = calculate(&old, &new, &options);
            if recreates && gate && !ignore {
                assert!(
                    matches!(result, Err(Recreate::VolumeClaimTemplatesChanged { .. })),
                    "{old_hash:?} {new_hash:?}"
                );
            } else {
                assert_eq!(
                    result.unwrap().container_images,
                    images(&[("nginx", "nginx:stable-alpine")])
                );
            }
        }
    }
}

/// Upstream's TestDefaultCalculateInPlaceUpdateSpec (vertical scaling) plus the QoS and resource-name rules.
#[test]
fn vertical_scaling() {
    let base = r#"{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null},"spec":{"containers":[
        {"name":"nginx","image":"nginx:stable-alpine22","imagePullPolicy":"Always","resources":{"limits":{"cpu":"2","memory":"4Gi","sigma/eni":"2"},"requests":{"cpu":"1","memory":"2Gi","sigma/eni":"2"}}},
        {"name":"nginx2","image":"nginx:stable-alpine22","imagePullPolicy":"Always","resources":{"limits":{"cpu":"2","memory":"4Gi","sigma/eni":"2"},"requests":{"cpu":"1","memory":"2Gi","sigma/eni":"2"}}}]}}}}"#;
    let changed = |image: bool, resource: bool, other: bool, count: usize| {
        let mut data = base.to_owned();
        if image {
            data = data.replacen("nginx:stable-alpine22", "nginx:stable-alpine23", count);
        }
        if resource {
            data = data.replacen(
                r#""requests":{"cpu":"1""#,
                r#""requests":{"cpu":"2""#,
                count,
            );
        }
        if other {
            data = data.replacen(
                r#""imagePullPolicy":"Always""#,
                r#""imagePullPolicy":"222""#,
                count,
            );
        }
        revision("new-revision", &data)
    };
    let vertical = UpdateOptions {
        gates: FeatureGates {
            in_place_workload_vertical_scaling: true,
            ..FeatureGates::default()
        },
        ..UpdateOptions::default()
    };
    let old = revision("old-revision", base);
    let cpu2 = || json!({"requests": {"cpu": "2"}});

    let spec = calculate(&old, &changed(false, true, false, 1), &vertical).unwrap();
    assert_eq!(resources_json(&spec), json!({"nginx": cpu2()}));
    assert!(spec.vertical_update_only());
    let spec = calculate(&old, &changed(true, true, false, 1), &vertical).unwrap();
    assert_eq!(
        spec.container_images,
        images(&[("nginx", "nginx:stable-alpine23")])
    );
    assert!(!spec.vertical_update_only());
    assert!(calculate(&old, &changed(false, true, true, 1), &vertical).is_err());
    assert!(calculate(&old, &changed(true, true, true, 1), &vertical).is_err());
    let spec = calculate(&old, &changed(false, true, false, 2), &vertical).unwrap();
    assert_eq!(
        resources_json(&spec),
        json!({"nginx": cpu2(), "nginx2": cpu2()})
    );
    let spec = calculate(&old, &changed(true, true, false, 2), &vertical).unwrap();
    assert_eq!(spec.container_images.len(), 2);
    assert!(calculate(&old, &changed(false, true, true, 2), &vertical).is_err());
    assert!(calculate(&old, &changed(true, true, true, 2), &vertical).is_err());
    // The spec serialises quantities in canonical form.
    let milli = revision(
        "new",
        &base.replacen(
            r#""requests":{"cpu":"1""#,
            r#""requests":{"cpu":"1500m""#,
            1,
        ),
    );
    let spec = calculate(&old, &milli, &vertical).unwrap();
    assert_eq!(
        spec.container_resources["nginx"].requests.as_ref().unwrap()["cpu"].0,
        "1500m"
    );
    let spec = calculate(
        &old,
        &revision(
            "new",
            &base.replacen(
                r#""requests":{"cpu":"1""#,
                r#""requests":{"cpu":"2000m""#,
                1,
            ),
        ),
        &vertical,
    )
    .unwrap();
    assert_eq!(
        spec.to_json(),
        r#"{"revision":"new","containerResources":{"nginx":{"requests":{"cpu":"2"}}}}"#
    );

    // Other resources, bad quantities and added resources recreate.
    let eni = revision(
        "new",
        &base.replacen(r#""sigma/eni":"2"}"#, r#""sigma/eni":"3"}"#, 1),
    );
    assert!(matches!(
        calculate(&old, &eni, &vertical),
        Err(Recreate::Resources { .. })
    ));
    let bad = revision("new", &base.replacen(r#""cpu":"2""#, r#""cpu":"two""#, 1));
    assert!(matches!(
        calculate(&old, &bad, &vertical),
        Err(Recreate::Resources { .. } | Recreate::InvalidRevision { .. })
    ));
    let added = revision(
        "new",
        &base.replacen(
            r#""sigma/eni":"2"}"#,
            r#""sigma/eni":"2","ephemeral-storage":"1Gi"}"#,
            1,
        ),
    );
    assert!(matches!(
        calculate(&old, &added, &vertical),
        Err(Recreate::SpecChange { .. })
    ));

    // Requests equal to limits turn the pod Guaranteed: the QoS class would change.
    let burstable = r#"{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"a","resources":{"limits":{"cpu":"2","memory":"1Gi"},"requests":{"cpu":"1","memory":"1Gi"}}}]}}}}"#;
    let guaranteed = burstable.replace(r#""requests":{"cpu":"1""#, r#""requests":{"cpu":"2""#);
    assert_eq!(
        calculate(
            &revision("old", burstable),
            &revision("new", &guaranteed),
            &vertical
        )
        .unwrap_err(),
        Recreate::QosClassChanged {
            old: QosClass::Burstable,
            new: QosClass::Guaranteed
        }
    );
    let still_burstable =
        burstable.replace(r#""requests":{"cpu":"1""#, r#""requests":{"cpu":"1500m""#);
    assert!(
        calculate(
            &revision("old", burstable),
            &revision("new", &still_burstable),
            &vertical
        )
        .is_ok()
    );
}

#[test]
fn image_of_a_container_past_the_old_list() {
    // json_patch replaces index-wise, so an image path always exists in the old template; a hand-made
    // revision pair whose old containers list is shorter than the diff path cannot occur. The index check is
    // still there: a renamed container keeps the old name, as upstream does.
    let old = r#"{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"1"}]}}}}"#;
    let new = r#"{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"2"}]}}}}"#;
    let spec = calculate(
        &revision("old", old),
        &revision("new", new),
        &UpdateOptions::default(),
    )
    .unwrap();
    assert_eq!(spec.container_images, images(&[("a", "2")]));
    let renamed = r#"{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"2"}]}}}}"#;
    assert!(
        calculate(
            &revision("old", old),
            &revision("new", renamed),
            &UpdateOptions::default()
        )
        .is_err()
    );
}

#[test]
fn revision_override_and_grace() {
    let old = r#"{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"1"}]}}}}"#;
    let new = old.replace("\"1\"", "\"2\"");
    let options = UpdateOptions {
        revision: Some("5d8f7b".into()),
        grace_period_seconds: 10,
        ..UpdateOptions::default()
    };
    let spec = calculate(
        &revision("old", old),
        &revision("ds-5d8f7b", &new),
        &options,
    )
    .unwrap();
    assert_eq!(spec.revision, "5d8f7b");
    assert_eq!(spec.grace_seconds, 10);
    assert_eq!(
        spec.to_json(),
        r#"{"revision":"5d8f7b","containerImages":{"a":"2"},"graceSeconds":10}"#
    );
}

#[test]
fn pod_revision_and_can_update_in_place() {
    use kruise_inplace::RevisionLabels;
    use kruise_inplace::apply::pod_revision;
    let old = revision(
        "cs-1",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"1"}]}}}}"#,
    );
    let new = revision(
        "cs-2",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"2"}]}}}}"#,
    );
    let revisions = [old.clone(), new.clone()];
    let pod: k8s_openapi::api::core::v1::Pod =
        serde_json::from_value(json!({"metadata": {"labels": {"controller-revision-hash": "1"}}}))
            .unwrap();
    // CloneSet tolerates short hashes; the exact rule does not.
    let found = pod_revision(
        &pod,
        &revisions,
        RevisionLabels::CloneSet { short_hash: true },
    )
    .unwrap();
    assert_eq!(found.metadata.name.as_deref(), Some("cs-1"));
    assert!(pod_revision(&pod, &revisions, RevisionLabels::Exact).is_none());
    assert!(kruise_inplace::can_update_in_place(
        found,
        &new,
        &UpdateOptions::default()
    ));
}
