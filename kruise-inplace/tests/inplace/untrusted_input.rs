//! The parsers of kruise-inplace that read input from outside, driven with arbitrary bytes and with
//! structure-aware inputs (valid annotation values built from pieces, then edited): the in-place update state,
//! grace and runtime-meta annotations through the fuzz harness (`support::annotation_harness`, shared with
//! `fuzz/fuzz_targets/inplace_state.rs`), quantities of any shape, metadata patches and feature-gate lists.
//! Nothing panics, errors name the value, and what parses keeps its canonical form. `KRUISE_FUZZ_CASES` sets
//! the number of cases (see `support::fuzz_cases`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)] // test code

use base64::Engine as _;
use k8s_openapi::api::core::v1::Pod;
use kruise_inplace::{FeatureGates, UpdateOptions, UpdateSpec, apply, quantity};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::json;

use crate::support::annotation_harness as harness;
use kruise_fuzz_inputs::fuzz_cases;
use kruise_fuzz_inputs::text_edits::edited;

const TIMESTAMPS: &[&str] = &[
    "2024-05-01T09:59:00Z",
    "2024-05-01T10:00:00.5+08:00",
    "0001-01-01T00:00:00Z",
    "2024-02-30T00:00:00Z",
    "",
];

const CONTAINERS: &[&str] = &["c1", "c2", "missing", ""];

fn container() -> impl Strategy<Value = String> {
    select(CONTAINERS).prop_map(str::to_owned)
}

/// A valid `apps.kruise.io/inplace-update-state` value about the harness's pod.
fn state_value() -> impl Strategy<Value = String> {
    (
        select(&["r", "other", ""][..]),
        select(TIMESTAMPS),
        container(),
        any::<bool>(),
        container(),
        select(&["cpu", "memory", "x"][..]),
        quantity_text(),
    )
        .prop_map(|(revision, at, image_container, images, next, resource, amount)| {
            json!({"revision": revision, "updateTimestamp": at,
                "lastContainerStatuses": {image_container.clone(): {"imageID": "x"}},
                "updateImages": images, "updateResources": !images,
                "nextContainerImages": {next.clone(): "b:2"},
                "nextContainerResources": {next.clone(): {"requests": {resource: amount}}},
                "nextContainerRefMetadata": {next.clone(): {"creationTimestamp": null, "labels": {"k": "v"}}},
                "preCheckBeforeNext": {"containersRequiredReady": [image_container]},
                "containerBatchesRecord": [{"timestamp": at, "containers": [next]}]})
            .to_string()
        })
}

/// A valid `apps.kruise.io/inplace-update-grace` value (an update spec), its metadata patch base64 as on the
/// wire.
fn grace_value() -> impl Strategy<Value = String> {
    (
        select(&["r", "other"][..]),
        container(),
        quantity_text(),
        any::<i32>(),
        select(
            &[
                r#"{"metadata":{"labels":{"k":"v"}}}"#,
                r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["f"]}}"#,
                r#"{"spec":{}}"#,
                "not json",
            ][..],
        ),
    )
        .prop_map(|(revision, name, amount, seconds, patch)| {
            let patch = base64::engine::general_purpose::STANDARD.encode(patch);
            json!({"revision": revision, "containerImages": {name.clone(): "a:2"},
                "containerResources": {name: {"requests": {"cpu": amount}}},
                "metaDataPatch": patch, "graceSeconds": seconds})
            .to_string()
        })
}

/// A valid `apps.kruise.io/runtime-containers-meta` value.
fn meta_value() -> impl Strategy<Value = String> {
    (container(), any::<u64>(), any::<i32>()).prop_map(|(name, hash, restarts)| {
        json!({"containers": [{"name": name, "containerID": name, "restartCount": restarts,
            "hashes": {"plainHash": hash, "extractedEnvFromMetadataHash": 4}}]})
        .to_string()
    })
}

/// Quantity texts: the grammar's pieces in any combination (so also invalid), and edge numbers.
fn quantity_text() -> impl Strategy<Value = String> {
    prop_oneof![
        (
            select(&["", "+", "-", "--"][..]),
            "[0-9]{0,45}",
            prop::option::of("[0-9]{0,12}"),
            select(
                &[
                    "",
                    "m",
                    "u",
                    "n",
                    "k",
                    "M",
                    "G",
                    "T",
                    "P",
                    "E",
                    "Ki",
                    "Mi",
                    "Gi",
                    "Ti",
                    "Pi",
                    "Ei",
                    "e3",
                    "E-9",
                    "e-2147483648",
                    "e2147483647",
                    "e",
                    "i",
                    "K",
                    "mi",
                    "e+",
                ][..]
            ),
        )
            .prop_map(|(sign, integer, fraction, suffix)| match fraction {
                Some(fraction) => format!("{sign}{integer}.{fraction}{suffix}"),
                None => format!("{sign}{integer}{suffix}"),
            }),
        select(
            &[
                "0",
                "-0",
                ".5",
                "5.",
                ".",
                "1e999",
                "9223372036854775807Ki",
                "8Ei",
                "1000E"
            ][..]
        )
        .prop_map(str::to_owned),
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(fuzz_cases::config())]

    #[test]
    fn harness_with_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        harness::run(&bytes);
    }

    #[test]
    fn harness_with_edited_annotations(
        state in state_value().prop_flat_map(edited),
        grace in prop::option::of(grace_value().prop_flat_map(edited)),
        meta in prop::option::of(meta_value().prop_flat_map(edited)),
    ) {
        let mut input = state;
        for part in [grace, meta].into_iter().flatten() {
            input.push('\u{0}');
            input.push_str(&part);
        }
        harness::run(input.as_bytes());
    }

    #[test]
    fn quantities(text in quantity_text()) {
        match quantity::parse(&text) {
            Ok(parsed) => {
                let canonical = quantity::canonical(&text).unwrap();
                if let Some(written) = parsed.to_canonical() {
                    prop_assert_eq!(&written, &canonical);
                    let again = quantity::parse(&written).unwrap();
                    prop_assert_eq!(again, parsed, "{} -> {}", text, written);
                    prop_assert_eq!(quantity::canonical(&written).unwrap(), written);
                }
                prop_assert!(quantity::same_value(&text, &canonical));
            }
            Err(error) => {
                let message = error.to_string();
                let quoted = format!("{text:?}");
                prop_assert!(message.starts_with(&format!("quantity {quoted}")), "{}", message);
            }
        }
    }

    #[test]
    fn metadata_patches(text in prop_oneof![
        any::<String>(),
        select(&[
            r#"{"metadata":{"labels":{"k":"v","gone":null},"annotations":{"a":"b"}}}"#,
            r#"{"metadata":{"$deleteFromPrimitiveList/finalizers":["f"],"finalizers":["g"]}}"#,
            r#"{"metadata":{"$setElementOrder/finalizers":["g","f"],"$retainKeys":["labels"]}}"#,
            r#"{"metadata":{"ownerReferences":[{"uid":"u","$patch":"delete"}]}}"#,
        ][..]).prop_map(str::to_owned).prop_flat_map(edited),
    ]) {
        // The patch as an in-place update's metadata patch: refused with an error, or applied with writes
        // that reproduce the pod the outcome holds.
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "default", "resourceVersion": "1",
                "labels": {"k": "old", "controller-revision-hash": "r"}, "finalizers": ["f"]},
            "spec": {"containers": [{"name": "c1", "image": "a:1"}]},
            "status": {"containerStatuses": [{"name": "c1", "image": "a:1", "imageID": "x", "ready": true,
                "restartCount": 0}]}
        })).unwrap();
        let spec = UpdateSpec {
            revision: "r2".to_owned(),
            meta_data_patch: Some(text.clone().into_bytes()),
            ..UpdateSpec::default()
        };
        let now = "2024-05-01T10:00:00Z".parse().unwrap();
        match apply(&pod, &spec, now, &UpdateOptions::default()) {
            Ok(outcome) => {
                let mut document = serde_json::to_value(&pod).unwrap();
                for write in &outcome.writes {
                    json_patch::patch(&mut document, &write.patch).unwrap();
                }
                prop_assert_eq!(document, serde_json::to_value(&outcome.pod).unwrap(), "{}", text);
            }
            Err(error) => prop_assert!(!error.to_string().is_empty()),
        }
    }

    #[test]
    fn feature_gate_lists(text in prop_oneof![
        any::<String>(),
        prop::collection::vec((
            select(FeatureGates::NAMES.to_vec()),
            select(&["true", "false", "1", "0", "yes", ""][..]),
        ), 0..4)
            .prop_map(|entries| entries.iter().map(|(name, value)| format!("{name}={value}"))
                .collect::<Vec<_>>().join(","))
            .prop_flat_map(edited),
    ]) {
        if let Err(error) = FeatureGates::parse(&text) {
            prop_assert!(error.to_string().contains("feature gate"), "{}", error);
        }
    }
}
