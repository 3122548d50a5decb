//! The generated CRDs: one per kind with the names, scope, versions and subresources of upstream's
//! `config/crd/bases/*.yaml`, and
//! schemas a Kubernetes 1.20 API server accepts as structural.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use crate::support;

use kruise_api::crd::{ConversionStrategy, CrdOptions, VersionSelection, all};

/// (plural, group, scope, short names, versions at HEAD, status, scale) for every kind upstream ships.
#[allow(clippy::type_complexity)]
#[rustfmt::skip]
const TABLE: &[(&str, &str, &str, &[&str], &[&str], bool, bool)] = &[
    ("advancedcronjobs", "apps.kruise.io", "Namespaced", &["acj"], &["v1alpha1", "v1beta1"], true, false),
    ("broadcastjobs", "apps.kruise.io", "Namespaced", &["bcj"], &["v1alpha1", "v1beta1"], true, false),
    ("clonesets", "apps.kruise.io", "Namespaced", &["clone"], &["v1alpha1", "v1beta1"], true, true),
    ("containerrecreaterequests", "apps.kruise.io", "Namespaced", &["crr"], &["v1alpha1", "v1beta1"], true, false),
    ("daemonsets", "apps.kruise.io", "Namespaced", &["daemon", "ads"], &["v1alpha1", "v1beta1"], true, false),
    ("ephemeraljobs", "apps.kruise.io", "Namespaced", &["ejob"], &["v1alpha1"], true, false),
    ("imagelistpulljobs", "apps.kruise.io", "Namespaced", &[], &["v1alpha1", "v1beta1"], true, false),
    ("imagepulljobs", "apps.kruise.io", "Namespaced", &[], &["v1alpha1", "v1beta1"], true, false),
    ("nodeimages", "apps.kruise.io", "Cluster", &[], &["v1alpha1", "v1beta1"], true, false),
    ("nodepodprobes", "apps.kruise.io", "Cluster", &[], &["v1alpha1"], true, false),
    ("persistentpodstates", "apps.kruise.io", "Namespaced", &[], &["v1alpha1", "v1beta1"], true, false),
    ("podprobemarkers", "apps.kruise.io", "Namespaced", &[], &["v1alpha1"], true, false),
    ("podunavailablebudgets", "policy.kruise.io", "Namespaced", &["pub"], &["v1alpha1", "v1beta1"], true, false),
    ("resourcedistributions", "apps.kruise.io", "Cluster", &["distributor"], &["v1alpha1", "v1beta1"], true, false),
    ("sidecarsets", "apps.kruise.io", "Cluster", &[], &["v1alpha1", "v1beta1"], true, false),
    ("statefulsets", "apps.kruise.io", "Namespaced", &["sts", "asts"], &["v1alpha1", "v1beta1"], true, true),
    ("uniteddeployments", "apps.kruise.io", "Namespaced", &["ud"], &["v1alpha1", "v1beta1"], true, true),
    ("workloadspreads", "apps.kruise.io", "Namespaced", &["ws"], &["v1alpha1", "v1beta1"], true, false),
];

#[test]
fn every_kind_of_the_spec_table_has_its_crd() {
    let crds = all(&CrdOptions::default());
    assert_eq!(crds.len(), TABLE.len(), "one CRD per kind");
    for (plural, group, scope, short_names, versions, status, scale) in TABLE {
        let name = format!("{plural}.{group}");
        let crd = crds
            .iter()
            .find(|crd| crd.metadata.name.as_deref() == Some(&name))
            .unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(crd.spec.scope, *scope, "{name} scope");
        assert_eq!(
            crd.spec.names.short_names.clone().unwrap_or_default(),
            *short_names,
            "{name} short names"
        );
        assert!(
            crd.spec.names.categories.as_ref().is_none_or(Vec::is_empty),
            "{name} has no categories"
        );
        let served: Vec<_> = crd.spec.versions.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(served, *versions, "{name} versions");
        let storage: Vec<_> = crd
            .spec
            .versions
            .iter()
            .filter(|v| v.storage)
            .map(|v| v.name.as_str())
            .collect();
        assert_eq!(
            storage,
            [*versions.last().unwrap()],
            "{name} stores its newest version"
        );
        for version in &crd.spec.versions {
            let subresources = version.subresources.as_ref();
            assert_eq!(
                subresources.is_some_and(|s| s.status.is_some()),
                *status,
                "{name} {} status",
                version.name
            );
            assert_eq!(
                subresources.is_some_and(|s| s.scale.is_some()),
                *scale,
                "{name} {} scale",
                version.name
            );
            if *scale {
                let scale = subresources.unwrap().scale.as_ref().unwrap();
                assert_eq!(scale.spec_replicas_path, ".spec.replicas");
                assert_eq!(scale.status_replicas_path, ".status.replicas");
                assert_eq!(
                    scale.label_selector_path.as_deref(),
                    Some(".status.labelSelector")
                );
            }
        }
    }
}

#[test]
fn schemas_are_structural() {
    for versions in [
        VersionSelection::All,
        VersionSelection::V1alpha1,
        VersionSelection::V1beta1,
    ] {
        for crd in all(&CrdOptions {
            versions,
            ..CrdOptions::default()
        }) {
            for version in &crd.spec.versions {
                let schema =
                    serde_json::to_value(&version.schema.as_ref().unwrap().open_api_v3_schema)
                        .unwrap();
                let violations = support::structural::violations(&schema);
                assert!(
                    violations.is_empty(),
                    "{} {}:\n{}",
                    crd.metadata.name.as_deref().unwrap(),
                    version.name,
                    violations.join("\n")
                );
            }
        }
    }
}

#[test]
fn templates_are_schemaless() {
    let crds = all(&CrdOptions::default());
    let cloneset = crds
        .iter()
        .find(|crd| crd.spec.names.kind == "CloneSet")
        .unwrap();
    for version in &cloneset.spec.versions {
        let schema =
            serde_json::to_value(&version.schema.as_ref().unwrap().open_api_v3_schema).unwrap();
        let spec = &schema["properties"]["spec"]["properties"];
        assert_eq!(
            spec["template"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        assert_eq!(
            spec["volumeClaimTemplates"]["items"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
    }
}

#[test]
fn job_templates_are_schemaless() {
    let crds = all(&CrdOptions::default());
    let schemas = |kind: &str| -> Vec<(String, serde_json::Value)> {
        let crd = crds.iter().find(|crd| crd.spec.names.kind == kind).unwrap();
        crd.spec
            .versions
            .iter()
            .map(|version| {
                let schema =
                    serde_json::to_value(&version.schema.as_ref().unwrap().open_api_v3_schema)
                        .unwrap();
                (version.name.clone(), schema["properties"]["spec"].clone())
            })
            .collect()
    };
    for (_, spec) in schemas("BroadcastJob") {
        assert_eq!(
            spec["properties"]["template"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
    }
    for (version, spec) in schemas("AdvancedCronJob") {
        let templates = &spec["properties"]["template"]["properties"];
        assert_eq!(
            templates["jobTemplate"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        let broadcast = &templates["broadcastJobTemplate"]["properties"];
        assert_eq!(
            broadcast["spec"]["properties"]["template"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        assert_eq!(
            broadcast["metadata"]["x-kubernetes-preserve-unknown-fields"], true,
            "template labels and annotations survive pruning"
        );
        assert_eq!(
            spec["properties"]["concurrencyPolicy"]["enum"],
            serde_json::json!(["Allow", "Forbid", "Replace"]),
            "a closed enum, as upstream"
        );
        assert_eq!(
            templates.get("imageListPullJobTemplate").is_some(),
            version == "v1beta1"
        );
    }
}

#[test]
fn job_printer_columns() {
    let crds = all(&CrdOptions::default());
    let expected: &[(&str, &str, &[&str])] = &[
        (
            "AdvancedCronJob",
            "v1alpha1",
            &["Schedule", "Type", "LastScheduleTime", "AGE"],
        ),
        (
            "AdvancedCronJob",
            "v1beta1",
            &["Schedule", "Type", "LastScheduleTime", "AGE"],
        ),
        (
            "BroadcastJob",
            "v1alpha1",
            &["Desired", "Active", "Succeeded", "Failed", "AGE"],
        ),
        (
            "BroadcastJob",
            "v1beta1",
            &["Desired", "Active", "Succeeded", "Failed", "AGE"],
        ),
        (
            "ImagePullJob",
            "v1alpha1",
            &["TOTAL", "ACTIVE", "SUCCEED", "FAILED", "AGE", "MESSAGE"],
        ),
        (
            "ImagePullJob",
            "v1beta1",
            &["TOTAL", "ACTIVE", "SUCCEED", "FAILED", "AGE"],
        ),
        (
            "ImageListPullJob",
            "v1alpha1",
            &["TOTAL", "SUCCEEDED", "COMPLETED", "AGE"],
        ),
        (
            "ImageListPullJob",
            "v1beta1",
            &["TOTAL", "SUCCEEDED", "COMPLETED", "AGE"],
        ),
        (
            "NodeImage",
            "v1alpha1",
            &["DESIRED", "PULLING", "SUCCEED", "FAILED", "AGE"],
        ),
        (
            "NodeImage",
            "v1beta1",
            &["DESIRED", "PULLING", "SUCCEED", "FAILED", "AGE"],
        ),
    ];
    for (kind, version, columns) in expected {
        let crd = crds
            .iter()
            .find(|crd| crd.spec.names.kind == *kind)
            .unwrap();
        let served = crd
            .spec
            .versions
            .iter()
            .find(|served| served.name == *version)
            .unwrap();
        let names: Vec<_> = served
            .additional_printer_columns
            .iter()
            .flatten()
            .map(|column| column.name.as_str())
            .collect();
        assert_eq!(names, *columns, "{kind} {version}");
    }
}

#[test]
fn version_selections() {
    let v1alpha1 = all(&CrdOptions {
        versions: VersionSelection::V1alpha1,
        ..CrdOptions::default()
    });
    for crd in &v1alpha1 {
        let names: Vec<_> = crd.spec.versions.iter().map(|v| v.name.as_str()).collect();
        if crd.spec.names.kind == "StatefulSet" {
            assert_eq!(
                names,
                ["v1alpha1", "v1beta1"],
                "v1.8 already served ASTS in both versions"
            );
        } else {
            assert_eq!(names, ["v1alpha1"], "{}", crd.spec.names.kind);
        }
    }
    let v1beta1 = all(&CrdOptions {
        versions: VersionSelection::V1beta1,
        ..CrdOptions::default()
    });
    for crd in &v1beta1 {
        assert_eq!(crd.spec.versions.len(), 1, "{}", crd.spec.names.kind);
        assert!(crd.spec.versions[0].storage);
    }
}

#[test]
fn conversion_strategy() {
    let none = all(&CrdOptions::default());
    assert!(
        none.iter()
            .all(|crd| crd.spec.conversion.as_ref().unwrap().strategy == "None")
    );
    let webhook = all(&CrdOptions {
        conversion: ConversionStrategy::service(
            "kruise-system",
            "kruise-webhook",
            "/convert",
            443,
            b"PEM".to_vec(),
        ),
        ..CrdOptions::default()
    });
    for crd in &webhook {
        let conversion = crd.spec.conversion.as_ref().unwrap();
        if crd.spec.versions.len() == 2 {
            assert_eq!(conversion.strategy, "Webhook", "{}", crd.spec.names.kind);
            let hook = conversion.webhook.as_ref().unwrap();
            assert_eq!(hook.conversion_review_versions, ["v1"]);
            let service = hook
                .client_config
                .as_ref()
                .unwrap()
                .service
                .as_ref()
                .unwrap();
            assert_eq!(
                (
                    service.namespace.as_str(),
                    service.name.as_str(),
                    service.path.as_deref()
                ),
                ("kruise-system", "kruise-webhook", Some("/convert"))
            );
        } else {
            assert_eq!(
                conversion.strategy, "None",
                "single-version CRDs need no webhook"
            );
        }
    }
}

/// `kubectl apply` (client-side) stores the whole object in an annotation limited to 256 KiB.
#[test]
fn every_crd_fits_kubectl_apply() {
    for crd in all(&CrdOptions::default()) {
        let size = serde_json::to_vec(&crd).unwrap().len();
        assert!(
            size < 200 * 1024,
            "{}: {size} bytes",
            crd.metadata.name.as_deref().unwrap()
        );
    }
}

#[test]
fn sidecar_containers_type_only_kruise_fields() {
    let crds = all(&CrdOptions::default());
    let sidecarset = crds
        .iter()
        .find(|crd| crd.spec.names.kind == "SidecarSet")
        .unwrap();
    for version in &sidecarset.spec.versions {
        let schema =
            serde_json::to_value(&version.schema.as_ref().unwrap().open_api_v3_schema).unwrap();
        let spec = &schema["properties"]["spec"]["properties"];
        for list in ["containers", "initContainers"] {
            let container = &spec[list]["items"];
            assert_eq!(
                container["x-kubernetes-preserve-unknown-fields"], true,
                "{list}"
            );
            assert_eq!(container["required"], serde_json::json!(["name"]));
            for kruise_field in [
                "podInjectPolicy",
                "upgradeStrategy",
                "shareVolumePolicy",
                "transferEnv",
            ] {
                assert!(
                    container["properties"].get(kruise_field).is_some(),
                    "{list}.{kruise_field}"
                );
            }
            assert!(
                container["properties"].get("image").is_none(),
                "container fields stay schemaless"
            );
        }
        assert_eq!(
            spec["volumes"]["items"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
    }
}

/// The checker itself rejects what a 1.20 API server rejects.
#[test]
fn structural_checker_catches_violations() {
    use serde_json::json;
    let bad = [
        json!({"type": "object", "properties": {"a": {"description": "no type"}}}),
        json!({"type": "object", "properties": {"a": {"type": "object", "required": ["b"], "properties": {"b": {"type": "string"}}, "default": {}}}}),
        json!({"type": "object", "properties": {"a": {"type": "string", "enum": ["x"], "default": "y"}}}),
        json!({"type": "object", "properties": {"a": {"type": "object", "default": {"unknown": 1}}}}),
        json!({"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "object"}]}}}),
        json!({"type": "object", "properties": {"a": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}}}),
        json!({"type": "object", "properties": {"a": {"type": "integer", "format": "uint32"}}}),
        json!({"type": "object", "properties": {"a": {"x-kubernetes-int-or-string": true, "type": "string"}}}),
        json!({"type": "string"}),
    ];
    for schema in bad {
        assert!(
            !support::structural::violations(&schema).is_empty(),
            "{schema}"
        );
    }
    let good = json!({"type": "object", "properties": {
        "a": {"x-kubernetes-int-or-string": true},
        "b": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "c": {"type": "object", "default": {"d": "x"}, "properties": {"d": {"type": "string"}}},
    }});
    assert_eq!(support::structural::violations(&good), Vec::<String>::new());
}
