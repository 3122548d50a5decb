//! The parsers of kruise-sidecar that read input from outside, driven with arbitrary bytes and with
//! structure-aware inputs (valid values built from pieces, then edited): the SidecarSet pod annotations and the
//! upgradable condition message through the fuzz harness (`support::annotation_harness`, shared with
//! `fuzz/fuzz_targets/sidecar_annotations.rs`), `resourcesPolicy` expressions, the `patchPodMetadata`
//! whitelist of `kruise-configuration`, and the JSON merge patches of `patchPodMetadata`. Nothing panics,
//! errors say what is wrong, and what parses keeps its form. `KRUISE_FUZZ_CASES` sets the number of cases
//! (see `support::fuzz_cases`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)] // test code

use kruise_api::apps::v1beta1::SidecarSet;
use kruise_sidecar::metadata::{self, PatchMetadataWhitelist};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Value, json};

use crate::support::annotation_harness as harness;
use crate::support::expression_harness;
use kruise_fuzz_inputs::fuzz_cases;
use kruise_fuzz_inputs::text_edits::edited;

const SETS: &[&str] = &["fuzz", "other", "", "a,b"];
const CONTAINERS: &[&str] = &["cold", "hot", "hot-1", "hot-2", "main", ""];

fn set_name() -> impl Strategy<Value = String> {
    select(SETS).prop_map(str::to_owned)
}

fn container() -> impl Strategy<Value = String> {
    select(CONTAINERS).prop_map(str::to_owned)
}

/// A `kruise.io/sidecarset-hash` value about the harness's SidecarSet (current or legacy entries).
fn hash_value() -> impl Strategy<Value = String> {
    let entry = prop_oneof![
        (
            select(&["", "hash-1", "5dd4b6"][..]),
            set_name(),
            prop::collection::vec(container(), 0..3),
            select(&["2024-05-01T10:00:00Z", "2024-05-01T10:00:00.5Z", "x"][..]),
        )
            .prop_map(
                |(hash, set, list, at)| json!({"updateTimestamp": at, "hash": hash,
                "sidecarSetName": set, "sidecarList": list, "controllerRevision": "fuzz-1"})
            ),
        Just(json!("legacy-hash")),
    ];
    prop::collection::btree_map(set_name(), entry, 0..3).prop_map(|map| json!(map).to_string())
}

/// The five NUL-separated harness inputs, each a valid value edited a little.
fn harness_input() -> impl Strategy<Value = String> {
    let working = prop::collection::btree_map(container(), container(), 0..3)
        .prop_map(|map| json!(map).to_string());
    let state = prop::collection::btree_map(
        set_name(),
        (container(), select(&["2024-05-01T09:00:00Z", ""][..])).prop_map(|(name, at)| {
            json!({"revision": "r", "updateTimestamp": at,
                "lastContainerStatuses": {name: {"imageID": "b"}}})
        }),
        0..3,
    )
    .prop_map(|map| json!(map).to_string());
    let injected = prop::collection::vec(set_name(), 0..3).prop_map(|names| names.join(","));
    let message = prop::collection::btree_map(set_name(), any::<bool>(), 0..3)
        .prop_map(|map| json!(map).to_string());
    (
        hash_value().prop_flat_map(edited),
        working.prop_flat_map(edited),
        state.prop_flat_map(edited),
        injected.prop_flat_map(edited),
        message.prop_flat_map(edited),
        0..=5_usize,
    )
        .prop_map(|(hash, working, state, injected, message, parts)| {
            [hash, working, state, injected, message][..parts.max(1)].join("\u{0}")
        })
}

/// Expressions from the language's grammar: numbers and quantities, the variable, operators, parentheses,
/// `max`/`min`, and a few names that are not allowed.
fn expression_text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        select(
            &[
                "cpu",
                "memory",
                "0",
                "1",
                "0.5",
                "50%",
                "50m",
                "100Mi",
                "1.5Gi",
                "1e3",
                "1e999",
                "2147483648%",
                "99999999999999999999999999999999999999999",
                ".",
                "%",
                "x",
                "5x",
            ][..]
        )
        .prop_map(str::to_owned),
        "[0-9]{1,45}(\\.[0-9]{0,12})?(%|m|Ki|Mi|Gi|e[0-9]{1,3})?",
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (
                inner.clone(),
                select(&["+", "-", "*", "/"][..]),
                inner.clone()
            )
                .prop_map(|(left, operator, right)| format!("{left}{operator}{right}")),
            inner.clone().prop_map(|inner| format!("({inner})")),
            inner.clone().prop_map(|inner| format!("-{inner}")),
            (
                select(&["max", "min", "abs"][..]),
                prop::collection::vec(inner, 1..3)
            )
                .prop_map(|(function, arguments)| format!("{function}({})", arguments.join(", "))),
        ]
    })
}

fn sidecarset(labels: &Value, annotations: &Value) -> SidecarSet {
    serde_json::from_value(json!({
        "metadata": {"name": "fuzz", "labels": labels},
        "spec": {"selector": {"matchLabels": {"app": "fuzz"}},
            "containers": [{"name": "c", "image": "busybox"}],
            "patchPodMetadata": [{"annotations": annotations, "patchPolicy": "MergePatchJson"}]}
    }))
    .unwrap()
}

proptest! {
    #![proptest_config(fuzz_cases::config())]

    #[test]
    fn harness_with_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        harness::run(&bytes);
    }

    #[test]
    fn harness_with_edited_annotations(input in harness_input()) {
        harness::run(input.as_bytes());
    }

    #[test]
    fn resource_expressions(
        text in prop_oneof![any::<String>(), expression_text(), expression_text().prop_flat_map(edited)],
    ) {
        expression_harness::run(text.as_bytes());
    }

    #[test]
    fn whitelists(
        text in prop_oneof![
            any::<String>(),
            (
                prop::option::of(prop::collection::btree_map("[a-z]{1,3}", "[a-z]{0,3}", 0..2)),
                prop::collection::vec(select(&["^app\\.", ".*", "(", "[z-a]", "a{99999}", "\\p{Greek}", ""][..]), 0..3),
            )
                .prop_map(|(labels, expressions)| {
                    let selector = labels.map(|labels| json!({"matchLabels": labels}));
                    json!({"rules": [{"selector": selector, "allowedAnnotationKeyExprs": expressions}]})
                        .to_string()
                })
                .prop_flat_map(edited),
        ],
        key in select(&["app.io/x", "other", ""][..]),
        defaults_allowed in any::<bool>(),
    ) {
        match PatchMetadataWhitelist::parse(&text) {
            Ok(whitelist) => {
                let set = sidecarset(&json!({"a": "b"}), &json!({key: "v"}));
                let _ = metadata::validate_patch_metadata(&set, Some(&whitelist), defaults_allowed);
            }
            Err(error) => prop_assert!(error.to_string().starts_with("whitelist: "), "{}", error),
        }
    }

    #[test]
    fn merge_patches(
        document in prop_oneof![any::<String>(), Just(r#"{"a":{"b":1},"c":[1]}"#.to_owned()).prop_flat_map(edited)],
        patch in prop_oneof![any::<String>(), Just(r#"{"a":{"b":null,"d":"x"},"c":null}"#.to_owned()).prop_flat_map(edited)],
    ) {
        if let Ok(merged) = metadata::merge_patch(&document, &patch) {
            let value: Value = serde_json::from_str(&merged).unwrap();
            prop_assert!(value.is_object() || value.is_array(), "{}", merged);
        }
    }
}

/// The seed corpus of the `resource_expression` fuzz target (`fuzz/seeds/resource_expression`), replayed so
/// that the normal test command exercises it.
#[test]
fn expression_corpus() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fuzz/seeds/resource_expression"
    );
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        expression_harness::run(&data);
        count += 1;
    }
    assert!(count >= 5, "only {count} seeds");
}
