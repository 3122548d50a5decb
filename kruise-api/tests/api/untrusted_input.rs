//! Every parser of kruise-api that reads input from outside, driven with arbitrary text and with
//! structure-aware inputs (valid values built from pieces, then edited): the pod annotation values (SidecarSet
//! hashes, the hot-upgrade and injected lists, the pod-not-ready message, ContainerRecreateRequest snapshots,
//! in-place state and runtime meta, WorkloadSpread), IntOrString, label selectors, image references,
//! feature-gate lists, schema versions, lifecycle states, and the conversion of untyped objects with the stash
//! annotation. Nothing panics, every error names the annotation (or object) and the value, and what parses
//! keeps its form through another round trip. `KRUISE_FUZZ_CASES` sets the number of cases (see
//! `support::fuzz_cases`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::needless_pass_by_value
)] // test code

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kruise_api::annotations::{
    self, ContainerStatusSnapshot, InjectedSidecarSets, MatchedWorkloadSpread,
    SidecarSetInPlaceUpdateStates, SidecarSetUpgradableMessage, WorkingHotUpgradeContainers,
};
use kruise_api::apps::{v1alpha1, v1beta1};
use kruise_api::convert::{self, HubConversion, STASH_ANNOTATION};
use kruise_api::feature_gate::{gate_entries, parse_go_bool};
use kruise_api::image::Reference;
use kruise_api::inplace::{InPlaceUpdateState, RuntimeContainerMetaSet};
use kruise_api::keys;
use kruise_api::label_selector;
use kruise_api::lifecycle::LifecycleStateType;
use kruise_api::schema_version::{self, Install};
use kube::{CustomResourceExt, Resource};
use proptest::prelude::*;
use proptest::sample::{Index, select};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::support::conversion_harness;
use crate::support::schema_values::{self, Hints};
use kruise_fuzz_inputs::fuzz_cases;
use kruise_fuzz_inputs::json_values::{json_value, replaced};
use kruise_fuzz_inputs::text_edits::edited;

const NAMES: &[&str] = &["", "a", "demo-sidecarset", "x.y", "é", "a,b", "c-1"];

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        select(NAMES).prop_map(str::to_owned),
        "[a-z][a-z0-9-]{0,8}",
        any::<String>(),
    ]
}

fn timestamp() -> impl Strategy<Value = Value> {
    select(
        &[
            "2024-05-01T10:00:00Z",
            "2024-05-01T10:00:00.5+08:00",
            "0001-01-01T00:00:00Z",
            "9999-12-31T23:59:59Z",
            "2024-13-01T00:00:00Z",
            "",
        ][..],
    )
    .prop_map(Value::from)
}

/// A `kruise.io/sidecarset-hash` value: entries in the current form or the legacy bare hash.
fn hash_value() -> impl Strategy<Value = String> {
    let entry = prop_oneof![
        (
            name(),
            name(),
            prop::collection::vec(name(), 0..3),
            name(),
            timestamp()
        )
            .prop_map(
                |(hash, set, list, revision, at)| json!({"updateTimestamp": at, "hash": hash,
                "sidecarSetName": set, "sidecarList": list, "controllerRevision": revision})
            ),
        name().prop_map(Value::from),
    ];
    prop::collection::btree_map(name(), entry, 0..3).prop_map(|map| json!(map).to_string())
}

/// A valid value of one of the annotations kruise-api reads, or one of the ConfigMap-like lists.
fn valid_annotation_value() -> impl Strategy<Value = String> {
    prop_oneof![
        hash_value(),
        prop::collection::btree_map(name(), name(), 0..3).prop_map(|map| json!(map).to_string()),
        prop::collection::vec(name(), 0..4).prop_map(|names| names.join(",")),
        prop::collection::vec((name(), name()), 0..3).prop_map(|entries| {
            let entries: Vec<Value> = entries
                .into_iter()
                .map(|(agent, key)| json!({"userAgent": agent, "key": key}))
                .collect();
            Value::Array(entries).to_string()
        }),
        prop::collection::vec((name(), any::<bool>(), any::<i32>(), name()), 0..3).prop_map(
            |containers| {
                let containers: Vec<Value> = containers
                    .into_iter()
                    .map(|(name, ready, restarts, id)| json!({"name": name, "ready": ready,
                        "restartCount": restarts, "containerID": id}))
                    .collect();
                Value::Array(containers).to_string()
            }
        ),
        (name(), timestamp(), name()).prop_map(|(revision, at, image)| {
            json!({"revision": revision, "updateTimestamp": at,
                "lastContainerStatuses": {"main": {"imageID": image}},
                "nextContainerImages": {"main": "nginx:1.26"},
                "nextContainerRefMetadata": {"main": {"creationTimestamp": null, "labels": {"v": "2"}}},
                "nextContainerResources": {"main": {"limits": {"cpu": "2"}}},
                "preCheckBeforeNext": {"containersRequiredReady": ["sidecar"]},
                "containerBatchesRecord": [{"timestamp": at, "containers": ["sidecar"]}]})
            .to_string()
        }),
        (name(), any::<u64>(), any::<i32>()).prop_map(|(name, hash, restarts)| {
            json!({"containers": [{"name": name, "containerID": "containerd://abc",
                "restartCount": restarts, "hashes": {"plainHash": hash, "extractedEnvFromMetadataHash": 4}}]})
            .to_string()
        }),
        (name(), name(), name()).prop_map(
            |(name, subset, uid)| json!({"name": name, "subset": subset, "uid": uid}).to_string()
        ),
    ]
}

/// Arbitrary text, or a valid annotation value with a few edits.
fn annotation_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        prop::collection::vec(any::<u8>(), 0..64)
            .prop_map(|bytes| String::from_utf8_lossy(&bytes).into_owned()),
        valid_annotation_value().prop_flat_map(edited),
    ]
}

/// Parses `text` as the value of annotation `key`: an error names the key and (the start of) the value; a
/// parsed value, written again, parses to the same written form.
fn check_annotation<T: DeserializeOwned + Serialize>(
    key: &'static str,
    text: &str,
) -> Result<(), TestCaseError> {
    match annotations::parse::<T>(key, text) {
        Ok(parsed) => {
            let written = annotations::to_value(&parsed);
            let again: T = annotations::parse(key, &written)
                .map_err(|error| TestCaseError::fail(format!("{written}: {error}")))?;
            prop_assert_eq!(annotations::to_value(&again), written);
        }
        Err(error) => {
            let message = error.to_string();
            let expected_prefix = format!("annotation {key}: invalid value ");
            prop_assert!(message.starts_with(&expected_prefix), "{}", message);
            prop_assert!(error.value.chars().count() <= 200);
            prop_assert!(text.starts_with(&error.value));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(fuzz_cases::config())]

    #[test]
    fn annotation_values(text in annotation_text()) {
        use keys::sidecarset as sidecarset_keys;
        check_annotation::<annotations::SidecarSetHashes>(sidecarset_keys::HASH_ANNOTATION, &text)?;
        if let Ok(parsed) = annotations::parse_hashes(&text) {
            prop_assert_eq!(
                Some(parsed),
                annotations::parse::<annotations::SidecarSetHashes>(sidecarset_keys::HASH_ANNOTATION, &text).ok()
            );
        }
        prop_assert_eq!(
            annotations::parse_hashes(&text).is_ok(),
            annotations::parse_hashes_without_image(&text).is_ok()
        );
        check_annotation::<WorkingHotUpgradeContainers>(
            sidecarset_keys::WORKING_HOT_UPGRADE_CONTAINER_ANNOTATION, &text)?;
        check_annotation::<SidecarSetInPlaceUpdateStates>(
            sidecarset_keys::INPLACE_UPDATE_STATE_ANNOTATION, &text)?;
        check_annotation::<SidecarSetUpgradableMessage>(sidecarset_keys::UPGRADABLE_CONDITION, &text)?;
        check_annotation::<Vec<ContainerStatusSnapshot>>("crr-snapshot", &text)?;
        check_annotation::<MatchedWorkloadSpread>("workloadspread", &text)?;
        check_annotation::<InPlaceUpdateState>(keys::inplace::STATE_ANNOTATION, &text)?;
        check_annotation::<RuntimeContainerMetaSet>(
            keys::inplace::RUNTIME_CONTAINERS_META_ANNOTATION, &text)?;

        let injected = InjectedSidecarSets::parse(&text);
        prop_assert_eq!(&InjectedSidecarSets::parse(&injected.to_value()), &injected);
        prop_assert!(injected.iter().all(|name| !name.is_empty() && !name.contains(',')));

        match annotations::parse_pod_not_ready_message(&text) {
            Ok(entries) => {
                let written = annotations::format_pod_not_ready_message(&entries);
                let mut sorted = entries.clone();
                sorted.sort();
                prop_assert_eq!(annotations::parse_pod_not_ready_message(&written).unwrap(), sorted);
            }
            Err(error) => prop_assert!(error.to_string().starts_with("annotation KruisePodReady: ")),
        }
    }

    #[test]
    fn int_or_string_json(text in prop_oneof![
        select(&["2147483647", "2147483648", "-2147483648", "-2147483649", "-0", "0", "1.5", "1e3",
            "\"5%\"", "\"2147483648%\"", "\" 5%\"", "\"-0\"", "true", "null", "[]", "{}", "\"\"",
            "99999999999999999999999999999", "\"99999999999999999999999999999%\""][..])
            .prop_map(str::to_owned),
        any::<i64>().prop_map(|number| number.to_string()),
        any::<String>().prop_map(|text| Value::from(text).to_string()),
        any::<String>(),
    ]) {
        if let Ok(parsed) = serde_json::from_str::<IntOrString>(&text) {
            if let IntOrString::Int(number) = &parsed {
                prop_assert_eq!(text.trim().parse::<i64>().ok(), Some(i64::from(*number)));
            }
            let written = serde_json::to_string(&parsed).unwrap();
            prop_assert_eq!(serde_json::from_str::<IntOrString>(&written).unwrap(), parsed);
        }
    }

    #[test]
    fn label_selectors(
        labels in prop::collection::btree_map(selector_key(), selector_value(), 0..3),
        expressions in prop::collection::vec(
            (selector_key(), operator(), prop::option::of(prop::collection::vec(selector_value(), 0..3))),
            0..3),
        pod_labels in prop::collection::btree_map(selector_key(), selector_value(), 0..3),
    ) {
        let selector = LabelSelector {
            match_labels: Some(labels),
            match_expressions: Some(expressions.into_iter().map(|(key, operator, values)| {
                LabelSelectorRequirement { key, operator, values }
            }).collect()),
        };
        let validated = label_selector::validate(&selector);
        let matched = label_selector::matches(&selector, &pod_labels);
        prop_assert_eq!(validated.is_ok(), matched.is_ok());
        if let Err(error) = validated {
            let message = error.to_string();
            let named = selector.match_labels.iter().flatten().map(|(key, _)| key)
                .chain(selector.match_expressions.iter().flatten().map(|requirement| &requirement.key))
                .any(|key| message.contains(&format!("{key:?}")));
            prop_assert!(named, "{}", message);
        }
    }

    #[test]
    fn label_keys(key in selector_key()) {
        if label_selector::validate_key(&key).is_ok() {
            let name = key.rsplit_once('/').map_or(key.as_str(), |(_, name)| name);
            prop_assert!(!name.is_empty() && name.len() <= 63, "{:?}", key);
            prop_assert!(key.is_ascii());
        }
    }

    #[test]
    fn image_references(text in prop_oneof![
        any::<String>(),
        (prop::option::of("[a-z0-9.-]{1,12}(:[0-9]{1,5})?"), "[a-z0-9._/-]{1,20}",
            prop::option::of("[A-Za-z0-9_.-]{1,20}"), prop::option::of("sha256:[0-9a-f]{32,64}"))
            .prop_map(|(domain, path, tag, digest)| {
                let mut text = domain.map(|domain| format!("{domain}/")).unwrap_or_default();
                text.push_str(&path);
                if let Some(tag) = tag { text.push(':'); text.push_str(&tag); }
                if let Some(digest) = digest { text.push('@'); text.push_str(&digest); }
                text
            })
            .prop_flat_map(edited),
    ]) {
        if let Some(reference) = Reference::parse(&text) {
            let mut again = reference.domain.map(|domain| format!("{domain}/")).unwrap_or_default();
            again.push_str(reference.path);
            if let Some(tag) = reference.tag { again.push(':'); again.push_str(tag); }
            if let Some(digest) = reference.digest { again.push('@'); again.push_str(digest); }
            prop_assert_eq!(&again, &text);
        }
        let _ = Reference::kubernetes_tag(&text);
    }

    #[test]
    fn feature_gate_lists(text in prop_oneof![
        any::<String>(),
        prop::collection::vec(("[A-Za-z ]{0,10}", select(&["true", "false", "1", "0", "T", "yes", ""][..])), 0..4)
            .prop_map(|entries| entries.iter().map(|(name, value)| format!("{name}={value}"))
                .collect::<Vec<_>>().join(","))
            .prop_flat_map(edited),
    ]) {
        for entry in gate_entries(&text) {
            match entry {
                Ok((name, enabled)) => {
                    prop_assert!(!name.contains(',') && name.trim() == name);
                    prop_assert!(text.contains(name));
                    let _ = enabled;
                }
                Err(entry) => prop_assert!(!entry.is_empty() && !entry.contains(',')),
            }
        }
        if let Some(value) = parse_go_bool(&text) {
            prop_assert!(["1", "t", "T", "true", "TRUE", "True"].contains(&text.as_str()) == value);
        }
    }

    #[test]
    fn schema_versions(
        installed in prop_oneof![any::<String>(), "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,25}(-[a-z0-9.]{0,6})?(\\+[a-z]{0,3})?"],
        ours in "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}",
    ) {
        let _ = schema_version::decide(Some(&installed), &ours);
        prop_assert_eq!(schema_version::decide(Some(&ours), &ours), Install::Apply);
        prop_assert_eq!(schema_version::decide(None, &installed), Install::Apply);
    }

    #[test]
    fn lifecycle_states(text in prop_oneof![
        select(LifecycleStateType::KNOWN_VALUES).prop_map(str::to_owned).prop_flat_map(edited),
        any::<String>(),
    ]) {
        let state = LifecycleStateType::from(text.as_str());
        prop_assert_eq!(state.as_str(), text.as_str());
        prop_assert_eq!(state.is_known(), LifecycleStateType::KNOWN_VALUES.contains(&text.as_str()));
    }

    /// Untyped objects of any kind and version with arbitrary bodies, and a stash annotation that is
    /// arbitrary text or an edited stash, through the conversion harness.
    #[test]
    fn untyped_objects(
        kind in select(&["CloneSet", "SidecarSet", "AdvancedCronJob", "BroadcastJob", "DaemonSet",
            "StatefulSet", "UnitedDeployment", "ContainerRecreateRequest", "ImagePullJob", "NodeImage",
            "PodUnavailableBudget", "WorkloadSpread", "ResourceDistribution", "PersistentPodState",
            "ImageListPullJob", "Widget"][..]),
        from in select(&["apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1",
            "policy.kruise.io/v1alpha1", "policy.kruise.io/v1beta1", "apps.kruise.io/v2", ""][..]),
        metadata in json_value(),
        spec in json_value(),
        status in json_value(),
        stash in prop::option::of(prop_oneof![
            any::<String>(),
            edited(r#"{"spec":{"fingerprint":"0","patch":{"spec":{"replicas":1}}},"status":{"fingerprint":"0","patch":{}}}"#.to_owned()),
        ]),
    ) {
        let object = json!({"apiVersion": from, "kind": kind, "metadata": metadata, "spec": spec,
            "status": status});
        let mut input = object.to_string().into_bytes();
        if let Some(stash) = stash {
            input.push(0);
            input.extend_from_slice(stash.as_bytes());
        }
        conversion_harness::run(&input);
    }
}

/// The seed corpus of the `convert_object` fuzz target (`fuzz/seeds/convert_object`), replayed so that the
/// normal test command exercises it.
#[test]
fn conversion_corpus() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/seeds/convert_object");
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        let result = std::panic::catch_unwind(|| conversion_harness::run(&data));
        assert!(result.is_ok(), "{} panicked", path.display());
        count += 1;
    }
    assert!(count >= 5, "only {count} seeds");
}

fn selector_key() -> impl Strategy<Value = String> {
    prop_oneof![
        select(
            &[
                "app",
                "kubernetes.io/name",
                "a/b/c",
                "/x",
                "x/",
                "-a",
                "a-",
                "a..b/c",
                ""
            ][..]
        )
        .prop_map(str::to_owned),
        "([a-z0-9.-]{0,260}/)?[A-Za-z0-9._-]{0,70}",
        any::<String>(),
    ]
}

fn selector_value() -> impl Strategy<Value = String> {
    prop_oneof![
        select(&["", "web", "-a", "a_b.c", "é"][..]).prop_map(str::to_owned),
        "[A-Za-z0-9._-]{0,70}",
        any::<String>(),
    ]
}

fn operator() -> impl Strategy<Value = String> {
    prop_oneof![
        select(&["In", "NotIn", "Exists", "DoesNotExist", "in", "Gt", ""][..])
            .prop_map(str::to_owned),
        any::<String>(),
    ]
}

/// A v1beta1 object converted from a schema-valid v1alpha1 one, with its stash annotation edited (or a
/// stash-shaped value added): converting it back never panics and the stash never changes metadata.
fn stash_is_only_applied_to_spec_and_status<A>(hints: &Hints)
where
    A: HubConversion + CustomResourceExt + std::fmt::Debug,
{
    let crd = A::crd();
    let version = &crd.spec.versions[0];
    let schema =
        serde_json::to_value(&version.schema.as_ref().unwrap().open_api_v3_schema).unwrap();
    let api_version = format!("{}/{}", crd.spec.group, version.name);
    let objects = schema_values::object(&api_version, &crd.spec.names.kind, &schema, hints);
    let template = json!({"spec": {"fingerprint": "0", "patch": {"spec": {"replicas": 1}}},
        "status": {"fingerprint": "0", "patch": {"replicas": 1}}})
    .to_string();
    let strategy = (
        objects,
        prop_oneof![
            Just(None),
            edited(template).prop_map(Some),
            any::<String>().prop_map(Some)
        ],
        any::<Index>(),
        json_value(),
        any::<bool>(),
    );
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        failure_persistence: None,
        ..fuzz_cases::config()
    });
    runner
        .run(&strategy, |(json, text, at, value, edit_patch)| {
            let alpha: A = serde_json::from_value(json).unwrap();
            let mut hub = convert::to_hub(&alpha);
            // The hub without its stash, as `from_hub` sees it: an annotation map left empty goes too.
            let mut clean = hub.clone();
            if let Some(annotations) = clean.meta_mut().annotations.as_mut() {
                annotations.remove(STASH_ANNOTATION);
                if annotations.is_empty() {
                    clean.meta_mut().annotations = None;
                }
            }
            let annotations = hub.meta_mut().annotations.get_or_insert_with(BTreeMap::new);
            let stash = match (annotations.get(STASH_ANNOTATION), text) {
                (_, Some(text)) => text,
                // The real stash, with one value of its patches (or of its fingerprints) replaced.
                (Some(real), None) if edit_patch => {
                    replaced(serde_json::from_str(real).unwrap(), at, value).to_string()
                }
                (Some(real), None) => real.clone(),
                (None, None) => String::new(),
            };
            annotations.insert(STASH_ANNOTATION.to_owned(), stash);
            let back: A = convert::from_hub(&hub);
            let without_stash: A = convert::from_hub(&clean);
            prop_assert_eq!(back.meta(), without_stash.meta());
            let dynamic =
                convert::convert_object(serde_json::to_value(&hub).unwrap(), &api_version)
                    .map_err(|error| TestCaseError::fail(error.to_string()))?;
            prop_assert_eq!(&dynamic, &serde_json::to_value(&back).unwrap());
            Ok(())
        })
        .unwrap();
}

#[test]
fn cloneset_stash() {
    stash_is_only_applied_to_spec_and_status::<v1alpha1::CloneSet>(&Hints::with_keys(&[
        keys::inplace::IMAGE_PRE_DOWNLOAD_PARALLELISM_ANNOTATION,
        keys::inplace::IMAGE_PRE_DOWNLOAD_TIMEOUT_SECONDS_ANNOTATION,
    ]));
}

#[test]
fn sidecarset_stash() {
    stash_is_only_applied_to_spec_and_status::<v1alpha1::SidecarSet>(&Hints::with_keys(&[]));
}

/// The v1beta1 objects that conversion webhooks receive are also decoded by the typed API: any edit of a
/// valid v1beta1 CloneSet decodes or fails with an error, never a panic.
#[test]
fn edited_v1beta1_objects_decode_or_fail() {
    let crd = v1beta1::CloneSet::crd();
    let version = &crd.spec.versions[0];
    let schema =
        serde_json::to_value(&version.schema.as_ref().unwrap().open_api_v3_schema).unwrap();
    let api_version = format!("{}/{}", crd.spec.group, version.name);
    let objects = schema_values::object(
        &api_version,
        &crd.spec.names.kind,
        &schema,
        &Hints::default(),
    );
    let strategy = (objects, any::<Index>(), json_value());
    let mut runner = proptest::test_runner::TestRunner::new(proptest::test_runner::Config {
        failure_persistence: None,
        ..fuzz_cases::config()
    });
    runner
        .run(&strategy, |(object, at, value)| {
            let object = replaced(object, at, value);
            match convert::convert_object(object.clone(), "apps.kruise.io/v1alpha1") {
                Ok(converted) => {
                    convert::convert_object(converted, &api_version)
                        .map_err(|error| TestCaseError::fail(error.to_string()))?;
                }
                Err(error) => {
                    let message = error.to_string();
                    let field =
                        |name: &str| object.get(name).and_then(Value::as_str).map(str::to_owned);
                    match (field("apiVersion"), field("kind")) {
                        (Some(_), Some(kind)) => {
                            prop_assert!(message.contains(&kind), "{}", message);
                        }
                        _ => {
                            prop_assert!(message.starts_with("object has no "), "{}", message);
                        }
                    }
                }
            }
            Ok(())
        })
        .unwrap();
}
