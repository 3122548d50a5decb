//! Table tests of the CloneSet validation rules (`kruise_schedule::validation::cloneset`): for each rule a
//! passing and a refused row, the message checked (field path and value).

// Test code: a panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use kruise_api::apps::v1alpha1::CloneSet;
use kruise_api::defaults::ApplyDefaults;
use kruise_schedule::validation::cloneset::validate;
use serde_json::{Value, json};

use crate::support::validation_table::{Row, check, create, merged, update};

fn base() -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "demo", "namespace": "default"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "demo"}},
            "template": {"metadata": {"labels": {"app": "demo"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}}})
}

fn decoded(value: Value) -> CloneSet {
    let mut cloneset: CloneSet = serde_json::from_value(value).unwrap();
    cloneset.apply_defaults();
    cloneset
}

fn run(rows: &[Row]) {
    check(&base(), rows, |new, old| {
        validate(&decoded(new), old.map(decoded).as_ref())
    });
}

#[test]
fn spec_and_template_rules() {
    run(&[
        create("the base", json!({}), None),
        create("replicas 0", json!({"spec": {"replicas": 0}}), None),
        create(
            "negative replicas",
            json!({"spec": {"replicas": -1}}),
            Some("spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
        ),
        create(
            "empty selector",
            json!({"spec": {"selector": {"matchLabels": null}}}),
            Some("spec.selector: Invalid value: {}: empty selector is invalid for cloneset"),
        ),
        create(
            "invalid selector",
            json!({"spec": {"selector": {"matchLabels": {"app": "demo", "a b": "x"}}}}),
            Some(
                "spec.selector: Invalid value: {\"matchLabels\":{\"a b\":\"x\",\"app\":\"demo\"}}: invalid label key \"a b\"",
            ),
        ),
        create(
            "selector not matching the template",
            json!({"spec": {"selector": {"matchLabels": {"app": "other"}}}}),
            Some(
                "spec.template.metadata.labels: Invalid value: {\"app\":\"demo\"}: `selector` does not match template `labels`",
            ),
        ),
        create(
            "no containers",
            json!({"spec": {"template": {"spec": {"containers": []}}}}),
            Some("spec.template.spec.containers: Required value"),
        ),
        create(
            "container without image",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "main"}]}}}}),
            Some("spec.template.spec.containers[0].image: Required value"),
        ),
        create(
            "invalid container name",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "Main", "image": "nginx"}]}}}}),
            Some(
                "spec.template.spec.containers[0].name: Invalid value: \"Main\": a lowercase RFC 1123 label",
            ),
        ),
        create(
            "duplicate container name",
            json!({"spec": {"template": {"spec": {"containers": [
                {"name": "main", "image": "nginx"}, {"name": "main", "image": "busybox"}]}}}}),
            Some("spec.template.spec.containers[1].name: Duplicate value: \"main\""),
        ),
        create(
            "restartPolicy Always",
            json!({"spec": {"template": {"spec": {"restartPolicy": "Always"}}}}),
            None,
        ),
        create(
            "restartPolicy Never",
            json!({"spec": {"template": {"spec": {"restartPolicy": "Never"}}}}),
            Some(
                "spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
            ),
        ),
        create(
            "activeDeadlineSeconds",
            json!({"spec": {"template": {"spec": {"activeDeadlineSeconds": 10}}}}),
            Some(
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in cloneset is not Supported",
            ),
        ),
        create(
            "distinct podsToDelete",
            json!({"spec": {"scaleStrategy": {"podsToDelete": ["a", "b"]}}}),
            None,
        ),
        create(
            "duplicated podsToDelete",
            json!({"spec": {"scaleStrategy": {"podsToDelete": ["a", "b", "a"]}}}),
            Some(
                "spec.scaleStrategy.podsToDelete: Invalid value: [\"a\",\"b\",\"a\"]: duplicated items [\"a\"]",
            ),
        ),
    ]);
}

#[test]
fn update_strategy_rules() {
    run(&[
        create(
            "known type",
            json!({"spec": {"updateStrategy": {"type": "InPlaceIfPossible"}}}),
            None,
        ),
        create(
            "unknown type",
            json!({"spec": {"updateStrategy": {"type": "Rolling"}}}),
            Some(
                "spec.updateStrategy.type: Unsupported value: \"Rolling\": supported values: \"ReCreate\", \"InPlaceIfPossible\", \"InPlaceOnly\"",
            ),
        ),
        create(
            "percentage partition",
            json!({"spec": {"updateStrategy": {"partition": "50%"}}}),
            None,
        ),
        create(
            "partition that is not a percentage",
            json!({"spec": {"updateStrategy": {"partition": "half"}}}),
            Some("spec.updateStrategy.partition: Invalid value: \"half\""),
        ),
        create(
            "negative partition",
            json!({"spec": {"updateStrategy": {"partition": -1}}}),
            Some(
                "spec.updateStrategy.partition: Invalid value: -1: must be greater than or equal to 0",
            ),
        ),
        create(
            "maxUnavailable as a percentage",
            json!({"spec": {"updateStrategy": {"maxUnavailable": "150%"}}}),
            None,
        ),
        create(
            "maxUnavailable that does not parse",
            json!({"spec": {"updateStrategy": {"maxUnavailable": "1.5%", "maxSurge": 1}}}),
            Some(
                "spec.updateStrategy.maxUnavailable: Invalid value: \"1.5%\": not an integer percentage",
            ),
        ),
        create(
            "maxSurge that does not parse",
            json!({"spec": {"updateStrategy": {"maxSurge": "x%"}}}),
            Some("spec.updateStrategy.maxSurge: Invalid value: \"x%\""),
        ),
        create(
            "maxSurge with InPlaceIfPossible",
            json!({"spec": {"updateStrategy": {"type": "InPlaceIfPossible", "maxSurge": 1}}}),
            None,
        ),
        create(
            "maxSurge with InPlaceOnly",
            json!({"spec": {"updateStrategy": {"type": "InPlaceOnly", "maxSurge": 1}}}),
            Some(
                "spec.updateStrategy.maxSurge: Invalid value: 1: can not use maxSurge with strategy type InPlaceOnly",
            ),
        ),
        create(
            "maxUnavailable 0 with maxSurge 1",
            json!({"spec": {"updateStrategy": {"maxUnavailable": 0, "maxSurge": 1}}}),
            None,
        ),
        create(
            "maxUnavailable and maxSurge both 0",
            json!({"spec": {"updateStrategy": {"maxUnavailable": 0, "maxSurge": 0}}}),
            Some(
                "spec.updateStrategy.maxUnavailable: Invalid value: 0: maxUnavailable and maxSurge should not both be less than 1",
            ),
        ),
        create(
            "both 0 without replicas",
            json!({"spec": {"replicas": 0, "updateStrategy": {"maxUnavailable": 0, "maxSurge": 0}}}),
            None,
        ),
        create(
            "valid scatter strategy",
            json!({"spec": {"updateStrategy": {"scatterStrategy": [{"key": "zone", "value": "a"}]}}}),
            None,
        ),
        create(
            "duplicated scatter term",
            json!({"spec": {"updateStrategy": {"scatterStrategy": [
                {"key": "zone", "value": "a"}, {"key": "zone", "value": "a"}]}}}),
            Some(
                "spec.updateStrategy.scatterStrategy: Invalid value: [{\"key\":\"zone\",\"value\":\"a\"},{\"key\":\"zone\",\"value\":\"a\"}]: scatterStrategy[1]: duplicated key=zone value=a",
            ),
        ),
        create(
            "valid priority strategy",
            json!({"spec": {"updateStrategy": {"priorityStrategy": {"orderPriority": [{"orderedKey": "rank"}]}}}}),
            None,
        ),
        create(
            "priority strategy with both lists",
            json!({"spec": {"updateStrategy": {"priorityStrategy": {
                "orderPriority": [{"orderedKey": "rank"}],
                "weightPriority": [{"weight": 10, "matchSelector": {"matchLabels": {"a": "b"}}}]}}}}),
            Some("spec.updateStrategy.priorityStrategy: Invalid value: "),
        ),
    ]);
}

#[test]
fn update_rules() {
    let in_place_only = json!({"spec": {"updateStrategy": {"type": "InPlaceOnly"}}});
    run(&[
        update(
            "replicas and template change",
            json!({}),
            json!({"spec": {"replicas": 5, "template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.26", "env": [{"name": "A", "value": "1"}]}]}}}}),
            None,
        ),
        update(
            "selector change",
            json!({}),
            json!({"spec": {"selector": {"matchLabels": {"app": "demo", "tier": "web"}},
                "template": {"metadata": {"labels": {"app": "demo", "tier": "web"}}}}}),
            Some(
                "spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"demo\",\"tier\":\"web\"}}: field is immutable",
            ),
        ),
        update(
            "InPlaceOnly image change",
            in_place_only.clone(),
            merged(
                &in_place_only,
                &json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.26"}]}}}}),
            ),
            None,
        ),
        update(
            "InPlaceOnly env change",
            in_place_only.clone(),
            merged(
                &in_place_only,
                &json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.25", "env": [{"name": "A", "value": "1"}]}]}}}}),
            ),
            Some(
                "spec.template: Forbidden: only container images may change in the template when spec.updateStrategy.type is InPlaceOnly",
            ),
        ),
        update(
            "a problem the stored object already had is reported again (the webhook filters it)",
            json!({"spec": {"replicas": -1}}),
            json!({"spec": {"replicas": -1}}),
            Some("spec.replicas"),
        ),
    ]);
}
