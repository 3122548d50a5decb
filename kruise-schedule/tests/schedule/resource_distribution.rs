//! Table tests of the ResourceDistribution decisions (`kruise_schedule::resource_distribution`): the target
//! namespaces, the hash, the per-namespace decision and the copy, the status and the webhook rules, a
//! passing and a failing row per rule.

// Test code: a panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kruise_api::apps::v1alpha1::{ResourceDistribution, ResourceDistributionConditionType as Type};
use kruise_schedule::resource_distribution::copy::{CopyDecision, CopyMeta, copy_object, decide};
use kruise_schedule::resource_distribution::hash::resource_hash;
use kruise_schedule::resource_distribution::status::{Failure, StatusInput, status};
use kruise_schedule::resource_distribution::targets::{NamespaceView, Targets, target_namespaces};
use kruise_schedule::resource_distribution::validation::{conflict_error, validate};
use serde_json::{Value, json};

use crate::support::validation_table::{Row, check, create, update};

fn distributor(targets: &Value) -> ResourceDistribution {
    serde_json::from_value(json!({
        "apiVersion": "apps.kruise.io/v1alpha1", "kind": "ResourceDistribution",
        "metadata": {"name": "shared", "uid": "uid-1", "generation": 3},
        "spec": {
            "resource": {"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "pull", "labels": {"a": "b"}}, "data": {"k": "dg=="}},
            "targets": targets
        }
    }))
    .unwrap()
}

struct Ns {
    name: &'static str,
    labels: BTreeMap<String, String>,
    terminating: bool,
}

fn ns(name: &'static str, labels: &[(&str, &str)]) -> Ns {
    Ns {
        name,
        labels: labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
        terminating: false,
    }
}

fn cluster() -> Vec<Ns> {
    let mut dying = ns("dying", &[("team", "a")]);
    dying.terminating = true;
    vec![
        ns("a1", &[("team", "a")]),
        ns("a2", &[("team", "a")]),
        ns("b1", &[("team", "b")]),
        ns("plain", &[]),
        ns("kube-system", &[("team", "a")]),
        ns("kube-public", &[]),
        dying,
    ]
}

fn targets_of(targets: &Value) -> Targets {
    let namespaces = cluster();
    let views: Vec<NamespaceView<'_>> = namespaces
        .iter()
        .map(|ns| NamespaceView {
            name: ns.name,
            labels: &ns.labels,
            terminating: ns.terminating,
        })
        .collect();
    target_namespaces(&distributor(targets).spec.targets, &views).unwrap()
}

fn names(set: &std::collections::BTreeSet<String>) -> Vec<&str> {
    set.iter().map(String::as_str).collect()
}

#[test]
fn target_namespace_rules() {
    let rows: [(&str, Value, &[&str], &[&str]); 9] = [
        ("nothing named: no target", json!({}), &[], &[]),
        (
            "an empty selector selects nothing",
            json!({"namespaceLabelSelector": {}}),
            &[],
            &[],
        ),
        (
            "all namespaces but forbidden and terminating ones",
            json!({"allNamespaces": true}),
            &["a1", "a2", "b1", "plain"],
            &[],
        ),
        (
            "all namespaces minus excluded",
            json!({"allNamespaces": true, "excludedNamespaces": {"list": [{"name": "plain"}]}}),
            &["a1", "a2", "b1"],
            &[],
        ),
        (
            "selector (kube-system and terminating left out)",
            json!({"namespaceLabelSelector": {"matchLabels": {"team": "a"}}}),
            &["a1", "a2"],
            &[],
        ),
        (
            "selector plus included minus excluded",
            json!({"namespaceLabelSelector": {"matchLabels": {"team": "a"}},
                "includedNamespaces": {"list": [{"name": "b1"}]},
                "excludedNamespaces": {"list": [{"name": "a2"}]}}),
            &["a1", "b1"],
            &[],
        ),
        (
            "an included namespace that does not exist is missing",
            json!({"includedNamespaces": {"list": [{"name": "plain"}, {"name": "nope"}]}}),
            &["plain"],
            &["nope"],
        ),
        (
            "a missing namespace that is excluded is not missing",
            json!({"includedNamespaces": {"list": [{"name": "nope"}]},
                "excludedNamespaces": {"list": [{"name": "nope"}]}}),
            &[],
            &[],
        ),
        (
            "an included forbidden or terminating namespace is not a target",
            json!({"includedNamespaces": {"list": [{"name": "kube-public"}, {"name": "dying"}]}}),
            &[],
            &[],
        ),
    ];
    for (name, targets, expected, missing) in rows {
        let found = targets_of(&targets);
        assert_eq!(names(&found.namespaces), expected, "{name}");
        assert_eq!(names(&found.missing), missing, "{name}");
        assert_eq!(found.desired(), expected.len() + missing.len(), "{name}");
    }
}

#[test]
fn an_invalid_selector_is_an_error() {
    let targets = distributor(&json!({"namespaceLabelSelector": {"matchExpressions": [
        {"key": "team", "operator": "Among", "values": ["a"]}]}}))
    .spec
    .targets;
    let error = target_namespaces(&targets, &[]).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("spec.targets.namespaceLabelSelector: "),
        "{error}"
    );
}

#[test]
fn the_hash_is_sha256_of_the_json_go_writes() {
    // Keys sorted, `<`, `>` and `&` escaped as Go's encoding/json does, whatever order the object has.
    let resource = json!({"metadata": {"name": "game-demo"}, "kind": "ConfigMap", "apiVersion": "v1",
        "data": {"k": "<a&b>"}});
    assert_eq!(
        resource_hash(&resource),
        "ab3c157142b1381124c9f10560403628f55de3738a94ffa435cbe740b8dac63d"
    );
    let changed = json!({"metadata": {"name": "game-demo"}, "kind": "ConfigMap", "apiVersion": "v1",
        "data": {"k": "<a&b>!"}});
    assert_ne!(resource_hash(&resource), resource_hash(&changed));
}

#[test]
fn copy_decisions() {
    let mine_new = CopyMeta {
        from: Some("shared"),
        hash: Some("h2"),
    };
    let mine_old = CopyMeta {
        from: Some("shared"),
        hash: Some("h1"),
    };
    let mine_unhashed = CopyMeta {
        from: Some("shared"),
        hash: None,
    };
    let other = CopyMeta {
        from: Some("other"),
        hash: Some("h2"),
    };
    let unmarked = CopyMeta::default();
    let rows = [
        ("target, nothing there", true, None, CopyDecision::Create),
        (
            "target, up to date",
            true,
            Some(mine_new),
            CopyDecision::Unchanged,
        ),
        (
            "target, older hash",
            true,
            Some(mine_old),
            CopyDecision::Update,
        ),
        (
            "target, no hash",
            true,
            Some(mine_unhashed),
            CopyDecision::Update,
        ),
        (
            "target, another distributor's",
            true,
            Some(other),
            CopyDecision::Conflict,
        ),
        (
            "target, not distributed",
            true,
            Some(unmarked),
            CopyDecision::Conflict,
        ),
        (
            "former target, mine",
            false,
            Some(mine_old),
            CopyDecision::Delete,
        ),
        (
            "not a target, another's",
            false,
            Some(other),
            CopyDecision::Leave,
        ),
        (
            "not a target, unmarked",
            false,
            Some(unmarked),
            CopyDecision::Leave,
        ),
        ("not a target, nothing", false, None, CopyDecision::Leave),
    ];
    for (name, targeted, existing, expected) in rows {
        assert_eq!(
            decide("shared", targeted, existing, "h2"),
            expected,
            "{name}"
        );
    }
}

#[test]
fn the_copy_is_the_resource_in_the_namespace_owned_by_the_distributor() {
    let mut rd = distributor(&json!({}));
    rd.spec.resource["metadata"]["resourceVersion"] = json!("17");
    rd.spec.resource["metadata"]["namespace"] = json!("elsewhere");
    rd.spec.resource["metadata"]["annotations"] = json!({"note": "kept"});
    let copy = copy_object(&rd, "a1", "h2").unwrap();
    assert_eq!(
        copy,
        json!({"apiVersion": "v1", "kind": "Secret", "data": {"k": "dg=="},
            "metadata": {"name": "pull", "namespace": "a1", "labels": {"a": "b"},
                "annotations": {"note": "kept",
                    "kruise.io/resourcedistribution.resource.from": "shared",
                    "kruise.io/resourcedistribution.resource.hashcode": "h2"},
                "ownerReferences": [{"apiVersion": "apps.kruise.io/v1alpha1",
                    "kind": "ResourceDistribution", "name": "shared", "uid": "uid-1",
                    "controller": true, "blockOwnerDeletion": true}]}})
    );
    rd.metadata.uid = None;
    assert!(copy_object(&rd, "a1", "h2").is_err());
    let mut not_object = distributor(&json!({}));
    not_object.spec.resource = json!("text");
    let error = copy_object(&not_object, "a1", "h2").unwrap_err();
    assert_eq!(
        error.to_string(),
        "ResourceDistribution shared: spec.resource: must be an object"
    );
}

fn time(text: &str) -> Time {
    Time(text.parse().unwrap())
}

#[test]
fn status_counts_and_conditions() {
    let targets = Targets {
        namespaces: ["a".to_owned(), "b".to_owned(), "c".to_owned()].into(),
        missing: ["gone".to_owned()].into(),
    };
    let failures = [
        Failure::new("b", Type::ConflictOccurred, "Secret b/pull: conflict"),
        Failure::new(
            "gone",
            Type::NamespaceNotExists,
            "namespace gone does not exist",
        ),
        Failure::new(
            "old",
            Type::DeleteResourceFailed,
            "Secret old/pull: forbidden",
        ),
    ];
    let first = status(&StatusInput {
        previous: None,
        generation: 3,
        targets: &targets,
        failures: &failures,
        now: time("2024-05-01T10:00:00Z"),
    });
    assert_eq!(
        (
            first.desired,
            first.succeeded,
            first.failed,
            first.observed_generation
        ),
        (4, 2, 3, 3)
    );
    let types: Vec<&str> = first.conditions.iter().map(|c| c.type_.as_str()).collect();
    assert_eq!(
        types,
        [
            "ConflictOccurred",
            "NamespaceNotExists",
            "GetResourceFailed",
            "CreateResourceFailed",
            "UpdateResourceFailed",
            "DeleteResourceFailed"
        ]
    );
    let conflict = &first.conditions[0];
    assert_eq!(
        (conflict.status.as_str(), conflict.reason.as_str()),
        ("True", "Secret b/pull: conflict")
    );
    assert_eq!(conflict.failed_namespaces, ["b"]);
    assert_eq!(first.conditions[2].status, "False");
    assert_eq!(first.conditions[2].reason, "Succeeded");
    assert!(first.conditions[2].failed_namespaces.is_empty());
    // A later pass: the conflict is gone; unchanged statuses keep their time, changed ones take `now`.
    let later = status(&StatusInput {
        previous: Some(&first),
        generation: 4,
        targets: &targets,
        failures: &failures[1..],
        now: time("2024-05-01T11:00:00Z"),
    });
    assert_eq!((later.succeeded, later.failed), (3, 2));
    assert_eq!(later.conditions[0].status, "False");
    assert_eq!(
        later.conditions[0].last_transition_time,
        Some(time("2024-05-01T11:00:00Z"))
    );
    assert_eq!(
        later.conditions[1].last_transition_time,
        Some(time("2024-05-01T10:00:00Z"))
    );
    assert_eq!(
        later.conditions[2].last_transition_time,
        Some(time("2024-05-01T10:00:00Z"))
    );
    // The v1alpha1 wire name of the failed namespaces.
    let wire = serde_json::to_value(&later).unwrap();
    assert_eq!(wire["conditions"][1]["failedNamespace"], json!(["gone"]));
}

fn base() -> Value {
    serde_json::to_value(distributor(&json!({
        "includedNamespaces": {"list": [{"name": "a1"}]},
        "excludedNamespaces": {"list": [{"name": "kube-system"}]},
        "namespaceLabelSelector": {"matchLabels": {"team": "a"}}
    })))
    .unwrap()
}

fn run(rows: &[Row]) {
    let decoded = |value: Value| serde_json::from_value::<ResourceDistribution>(value).unwrap();
    check(&base(), rows, |new, old| {
        let old = old.map(decoded);
        validate(&decoded(new), old.as_ref())
    });
}

#[test]
fn webhook_rules() {
    run(&[
        create("the base", json!({}), None),
        create(
            "a ConfigMap",
            json!({"spec": {"resource": {"kind": "ConfigMap", "data": {"k": "v"}}}}),
            None,
        ),
        create(
            "not an object",
            json!({"spec": {"resource": "text"}}),
            Some(
                "spec.resource: Invalid value: \"text\": must be a complete Secret or ConfigMap object",
            ),
        ),
        create(
            "another kind",
            json!({"spec": {"resource": {"kind": "Pod"}}}),
            Some(
                "spec.resource.kind: Unsupported value: \"Pod\": supported values: \"Secret\", \"ConfigMap\"",
            ),
        ),
        create(
            "another apiVersion",
            json!({"spec": {"resource": {"apiVersion": "v2"}}}),
            Some("spec.resource.apiVersion: Unsupported value: \"v2\": supported values: \"v1\""),
        ),
        create(
            "no name",
            json!({"spec": {"resource": {"metadata": {"name": null}}}}),
            Some("spec.resource.metadata.name: Required value"),
        ),
        create(
            "a name that is no subdomain",
            json!({"spec": {"resource": {"metadata": {"name": "Pull_Secret"}}}}),
            Some(
                "spec.resource.metadata.name: Invalid value: \"Pull_Secret\": a lowercase RFC 1123 subdomain",
            ),
        ),
        create(
            "a Secret that does not decode",
            json!({"spec": {"resource": {"data": {"k": 5}}}}),
            Some("spec.resource: Invalid value: \"Secret pull\": not a valid v1 Secret: "),
        ),
        update(
            "same identity, new data",
            json!({}),
            json!({"spec": {"resource": {"data": {"k": "dw=="}}}}),
            None,
        ),
        update(
            "renamed",
            json!({}),
            json!({"spec": {"resource": {"metadata": {"name": "pull2"}}}}),
            Some("spec.resource.metadata.name: Invalid value: \"pull2\": field is immutable"),
        ),
        update(
            "kind changed",
            json!({}),
            json!({"spec": {"resource": {"kind": "ConfigMap"}}}),
            Some("spec.resource.kind: Invalid value: \"ConfigMap\": field is immutable"),
        ),
        update(
            "apiVersion changed (refused as unsupported too)",
            json!({"spec": {"resource": {"apiVersion": "v2"}}}),
            json!({}),
            Some("spec.resource.apiVersion: Invalid value: \"v1\": field is immutable"),
        ),
        create(
            "an invalid included namespace name",
            json!({"spec": {"targets": {"includedNamespaces": {"list": [{"name": "Bad_NS"}]}}}}),
            Some(
                "spec.targets.includedNamespaces.list[0].name: Invalid value: \"Bad_NS\": a lowercase RFC 1123 label",
            ),
        ),
        create(
            "an invalid excluded namespace name",
            json!({"spec": {"targets": {"excludedNamespaces": {"list": [{"name": "ok"}, {"name": "-x"}]}}}}),
            Some("spec.targets.excludedNamespaces.list[1].name: Invalid value: \"-x\""),
        ),
        create(
            "a forbidden included namespace",
            json!({"spec": {"targets": {"includedNamespaces": {"list": [{"name": "kube-public"}]}}}}),
            Some(
                "spec.targets.includedNamespaces.list[0].name: Invalid value: \"kube-public\": may not be a target",
            ),
        ),
        create(
            "an invalid selector",
            json!({"spec": {"targets": {"namespaceLabelSelector": {"matchLabels": {"bad key!": "a"}}}}}),
            Some(
                "spec.targets.namespaceLabelSelector: Invalid value: {\"matchLabels\":{\"bad key!\":\"a\",\"team\":\"a\"}}: invalid label key",
            ),
        ),
    ]);
}

#[test]
fn the_conflict_rule() {
    let rd = distributor(&json!({}));
    assert_eq!(conflict_error("shared", &rd.spec.resource, &[]), None);
    let error = conflict_error(
        "shared",
        &rd.spec.resource,
        &["a1".to_owned(), "b1".to_owned()],
    )
    .unwrap()
    .to_string();
    assert_eq!(
        error,
        "spec.targets: Invalid value: [\"a1\",\"b1\"]: conflict: Secret \"pull\" already exists in these \
         target namespaces and was not distributed by ResourceDistribution \"shared\" (annotation \
         kruise.io/resourcedistribution.resource.from)"
    );
}
