//! Pod matching (upstream `PodMatchedSidecarSet`): a table per rule.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::needless_pass_by_value,
    clippy::type_complexity
)]

use crate::support;

use std::collections::BTreeMap;

use crate::support::pod;
use kruise_api::apps::{v1alpha1, v1beta1};
use kruise_sidecar::matching::{self, indexed_namespaces, matching_sidecarsets, pod_matches};
use serde_json::json;

fn set(spec: serde_json::Value) -> v1beta1::SidecarSet {
    serde_json::from_value(json!({"metadata": {"name": "s"}, "spec": spec})).unwrap()
}

fn web(namespace: &str) -> k8s_openapi::api::core::v1::Pod {
    pod(json!({"metadata": {"name": "p", "namespace": namespace, "labels": {"app": "web"}}}))
}

#[test]
fn selector_table() {
    let cases = [
        (json!({}), false),
        (json!({"selector": {}}), false),
        (json!({"selector": {"matchLabels": {}}}), false),
        (json!({"selector": {"matchLabels": {"app": "web"}}}), true),
        (json!({"selector": {"matchLabels": {"app": "db"}}}), false),
        (
            json!({"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "x"]}]}}),
            true,
        ),
        (
            json!({"selector": {"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}}),
            false,
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            pod_matches(&set(spec.clone()), &web("ns"), None).unwrap(),
            expected,
            "{spec}"
        );
    }
}

#[test]
fn invalid_selector_is_an_error_naming_the_field() {
    let bad = set(json!({"selector": {"matchExpressions": [{"key": "app", "operator": "Near"}]}}));
    let message = pod_matches(&bad, &web("ns"), None).unwrap_err().to_string();
    assert!(message.contains("SidecarSet s: spec.selector"), "{message}");
}

#[test]
fn namespace_selector_table() {
    let labels: BTreeMap<String, String> = [("team".to_owned(), "a".to_owned())].into();
    let selector = |s: serde_json::Value| {
        set(json!({"selector": {"matchLabels": {"app": "web"}}, "namespaceSelector": s}))
    };
    let cases = [
        (
            selector(json!({"matchLabels": {"team": "a"}})),
            "ns",
            Some(&labels),
            true,
        ),
        (
            selector(json!({"matchLabels": {"team": "b"}})),
            "ns",
            Some(&labels),
            false,
        ),
        (
            selector(json!({"matchLabels": {"team": "a"}})),
            "ns",
            None,
            false,
        ),
        (
            selector(json!({"matchLabels": {"kubernetes.io/metadata.name": "ns"}})),
            "ns",
            None,
            true,
        ),
        (
            selector(json!({"matchLabels": {"kubernetes.io/metadata.name": "ns"}})),
            "other",
            None,
            false,
        ),
        (
            selector(json!({"matchLabels": {"kubernetes.io/metadata.name": "default"}})),
            "",
            None,
            true,
        ),
    ];
    for (set, namespace, labels, expected) in cases {
        assert_eq!(
            pod_matches(&set, &web(namespace), labels).unwrap(),
            expected,
            "{namespace} {:?}",
            set.spec.namespace_selector
        );
    }
}

#[test]
fn v1alpha1_namespace_field() {
    let alpha: v1alpha1::SidecarSet = serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "SidecarSet", "metadata": {"name": "s"},
        "spec": {"namespace": "ns", "selector": {"matchLabels": {"app": "web"}}}
    }))
    .unwrap();
    let hub = v1beta1::SidecarSet::from(&alpha);
    assert!(pod_matches(&hub, &web("ns"), None).unwrap());
    assert!(!pod_matches(&hub, &web("other"), None).unwrap());
    assert_eq!(indexed_namespaces(&hub), Some(["ns".to_owned()].into()));
    let expression = set(json!({"namespaceSelector": {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["a", "b"]}]}}));
    assert_eq!(
        indexed_namespaces(&expression),
        Some(["a".to_owned(), "b".to_owned()].into())
    );
    assert_eq!(indexed_namespaces(&set(json!({}))), None);
}

#[test]
fn paused_inactive_and_canary() {
    let named = |name: &str, extra: serde_json::Value| {
        let mut value = json!({"metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": "web"}}}});
        if let Some(annotations) = extra.get("annotations") {
            value["metadata"]["annotations"] = annotations.clone();
        }
        if let Some(paused) = extra.get("paused") {
            value["spec"]["injectionStrategy"] = json!({"paused": paused});
        }
        serde_json::from_value::<v1beta1::SidecarSet>(value).unwrap()
    };
    let sets = [
        named("zeta", json!({})),
        named("base", json!({})),
        named("paused", json!({"paused": true})),
        named(
            "canary",
            json!({"annotations": {
            "apps.kruise.io/sidecarset-canary": "true", "apps.kruise.io/sidecarset-base": "base"}}),
        ),
        named(
            "not-canary",
            json!({"annotations": {
            "apps.kruise.io/sidecarset-canary": "false", "apps.kruise.io/sidecarset-base": "zeta"}}),
        ),
    ];
    let matched: Vec<_> = matching_sidecarsets(&sets, &web("ns"), None)
        .unwrap()
        .iter()
        .map(|s| s.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(matched, ["canary", "not-canary", "zeta"]);

    let mut done = web("ns");
    done.status = Some(serde_json::from_value(json!({"phase": "Succeeded"})).unwrap());
    assert!(matching_sidecarsets(&sets, &done, None).unwrap().is_empty());
    let mut deleting = web("ns");
    deleting.metadata.deletion_timestamp = Some(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(support::now()),
    );
    assert!(!matching::is_active_pod(&deleting));
    assert!(
        matching_sidecarsets(&sets, &deleting, None)
            .unwrap()
            .is_empty()
    );
}
