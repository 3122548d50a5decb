//! `patchPodMetadata`: policies, Go's merge patch, and the whitelist.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::needless_pass_by_value,
    clippy::type_complexity
)]

use std::collections::BTreeMap;

use kruise_api::apps::v1beta1::{SidecarSet, SidecarSetPatchPodMetadata};
use kruise_sidecar::metadata::{
    MergePatchError, PatchMetadataWhitelist, WhitelistError, conflicting_patch_keys, merge_patch,
    patch_annotations, validate_patch_metadata,
};
use serde_json::json;

fn patch(policy: Option<&str>, pairs: &[(&str, &str)]) -> SidecarSetPatchPodMetadata {
    serde_json::from_value(json!({
        "annotations": pairs.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect::<serde_json::Map<_, _>>(),
        "patchPolicy": policy,
    }))
    .unwrap()
}

#[test]
fn policy_table() {
    let existing: BTreeMap<String, String> = [
        ("k".to_owned(), r#"{"a":1}"#.to_owned()),
        ("empty".to_owned(), String::new()),
    ]
    .into();
    let cases: [(Option<&str>, &str, &str, &str, bool); 8] = [
        (None, "k", "new", r#"{"a":1}"#, false),
        (Some("Retain"), "k", "new", r#"{"a":1}"#, false),
        (Some("Retain"), "fresh", "v", "v", true),
        (Some("Overwrite"), "k", "new", "new", true),
        (Some("Overwrite"), "k", r#"{"a":1}"#, r#"{"a":1}"#, false),
        (
            Some("MergePatchJson"),
            "k",
            r#"{"b":2}"#,
            r#"{"a":1,"b":2}"#,
            true,
        ),
        (Some("MergePatchJson"), "k", r#"{"a":null}"#, "{}", true),
        (
            Some("MergePatchJson"),
            "empty",
            r#"{"b":2}"#,
            r#"{"b":2}"#,
            true,
        ),
    ];
    for (policy, key, value, expected, changed) in cases {
        let mut annotations = existing.clone();
        let result =
            patch_annotations(&mut annotations, &[patch(policy, &[(key, value)])]).unwrap();
        assert_eq!(annotations[key], expected, "{policy:?} {key}={value}");
        assert_eq!(result, changed, "{policy:?} {key}={value}");
    }
}

#[test]
fn merge_patch_like_go() {
    assert_eq!(
        merge_patch(r#"{"z":1,"a":{"b":1}}"#, r#"{"a":{"c":2}}"#).unwrap(),
        r#"{"a":{"b":1,"c":2},"z":1}"#
    );
    assert_eq!(
        merge_patch(r#""text""#, r#"{"a":null,"b":1}"#).unwrap(),
        r#"{"b":1}"#
    );
    assert_eq!(merge_patch("1", "[1,null]").unwrap(), "[1,null]");
    assert_eq!(
        merge_patch("not json", "{}"),
        Err(MergePatchError::BadDocument)
    );
    assert_eq!(merge_patch("{}", "nope"), Err(MergePatchError::BadPatch));
    assert_eq!(merge_patch("null", "{}"), Err(MergePatchError::BadDocument));
    assert_eq!(merge_patch("{}", "null"), Err(MergePatchError::BadPatch));
    assert_eq!(merge_patch("1", "2"), Err(MergePatchError::BadPatch));
}

fn with_patches(labels: serde_json::Value, keys: &[&str], policy: &str) -> SidecarSet {
    serde_json::from_value(json!({
        "metadata": {"name": "s", "labels": labels},
        "spec": {"patchPodMetadata": [{
            "annotations": keys.iter().map(|k| ((*k).to_owned(), json!("v"))).collect::<serde_json::Map<_, _>>(),
            "patchPolicy": policy}]}
    }))
    .unwrap()
}

#[test]
fn whitelist_table() {
    let whitelist = PatchMetadataWhitelist::parse(
        r#"{"rules":[{"selector":{"matchLabels":{"team":"mesh"}},"allowedAnnotationKeyExprs":["^oom-score$"]},
                     {"allowedAnnotationKeyExprs":["^kruise\\.io/.*"]}]}"#,
    )
    .unwrap();
    let mesh = json!({"team": "mesh"});
    let other = json!({"team": "x"});
    let cases: [(
        SidecarSet,
        Option<&PatchMetadataWhitelist>,
        bool,
        Result<(), WhitelistError>,
    ); 7] = [
        (
            with_patches(mesh.clone(), &["oom-score"], "Overwrite"),
            Some(&whitelist),
            false,
            Ok(()),
        ),
        (
            with_patches(other.clone(), &["oom-score"], "Overwrite"),
            Some(&whitelist),
            false,
            Err(WhitelistError::KeyNotAllowed("oom-score".into())),
        ),
        (
            with_patches(other.clone(), &["kruise.io/x"], "Retain"),
            Some(&whitelist),
            false,
            Ok(()),
        ),
        (
            with_patches(other.clone(), &["a"], "Retain"),
            None,
            false,
            Err(WhitelistError::NotFound),
        ),
        (
            with_patches(other.clone(), &["a"], "Retain"),
            None,
            true,
            Ok(()),
        ),
        (
            with_patches(other.clone(), &["a"], "Retain"),
            Some(&PatchMetadataWhitelist::default()),
            false,
            Err(WhitelistError::NoRule),
        ),
        (with_patches(other, &[], "Retain"), None, false, Ok(())),
    ];
    for (set, list, defaults, expected) in cases {
        let keys: Vec<_> = set.spec.patch_pod_metadata[0]
            .annotations
            .keys()
            .cloned()
            .collect();
        let result = if keys.is_empty() {
            let mut empty = set.clone();
            empty.spec.patch_pod_metadata.clear();
            validate_patch_metadata(&empty, list, defaults)
        } else {
            validate_patch_metadata(&set, list, defaults)
        };
        assert_eq!(result, expected, "{keys:?} defaults={defaults}");
    }
    let bad = PatchMetadataWhitelist::parse(r#"{"rules":[{"allowedAnnotationKeyExprs":["("]}]}"#)
        .unwrap();
    assert!(matches!(
        validate_patch_metadata(
            &with_patches(json!({}), &["a"], "Retain"),
            Some(&bad),
            false
        ),
        Err(WhitelistError::Expression { .. })
    ));
    assert!(PatchMetadataWhitelist::parse("[").is_err());
}

#[test]
fn non_retain_keys_conflict_across_sidecarsets() {
    let mut a = with_patches(json!({}), &["k", "r"], "Overwrite");
    a.metadata.name = Some("a".into());
    let mut b = with_patches(json!({}), &["k"], "MergePatchJson");
    b.metadata.name = Some("b".into());
    let mut c = with_patches(json!({}), &["r"], "Retain");
    c.metadata.name = Some("c".into());
    assert_eq!(
        conflicting_patch_keys(&a, [&a, &b, &c]),
        [("k".to_owned(), "b".to_owned())]
    );
    assert!(conflicting_patch_keys(&c, [&a, &b]).is_empty());
}
