//! Table tests of the Advanced StatefulSet validation rules (`kruise_schedule::validation::statefulset`): for
//! each rule a passing and a refused row, the message checked (field path and value).

// Test code: a panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use kruise_api::apps::v1beta1::StatefulSet;
use kruise_api::defaults::ApplyDefaults;
use kruise_schedule::validation::statefulset::validate;
use serde_json::{Value, json};

use crate::support::validation_table::{Row, check, create, update};

fn base() -> Value {
    json!({"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 3, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}}})
}

fn decoded(value: Value) -> StatefulSet {
    let mut statefulset: StatefulSet = serde_json::from_value(value).unwrap();
    statefulset.apply_defaults();
    statefulset
}

fn run(rows: &[Row]) {
    check(&base(), rows, |new, old| {
        validate(&decoded(new), old.map(decoded).as_ref())
    });
}

const IN_PLACE_GATE: &str = "InPlaceUpdateReady";

#[test]
fn spec_rules() {
    run(&[
        create("the base", json!({}), None),
        create(
            "negative replicas",
            json!({"spec": {"replicas": -2}}),
            Some("spec.replicas: Invalid value: -2: must be greater than or equal to 0"),
        ),
        create(
            "Parallel",
            json!({"spec": {"podManagementPolicy": "Parallel"}}),
            None,
        ),
        create(
            "unknown podManagementPolicy",
            json!({"spec": {"podManagementPolicy": "Random"}}),
            Some(
                "spec.podManagementPolicy: Unsupported value: \"Random\": supported values: \"OrderedReady\", \"Parallel\"",
            ),
        ),
        create(
            "reserved ordinals",
            json!({"spec": {"reserveOrdinals": [1, "3-5"]}}),
            None,
        ),
        create(
            "negative reserved ordinal",
            json!({"spec": {"reserveOrdinals": [-1]}}),
            Some("spec.reserveOrdinals[0]: Invalid value: -1: must be greater than or equal to 0"),
        ),
        create(
            "backwards reserved range",
            json!({"spec": {"reserveOrdinals": ["5-3"]}}),
            Some(
                "spec.reserveOrdinals[0]: Invalid value: \"5-3\": the start is greater than the end",
            ),
        ),
        create(
            "empty selector",
            json!({"spec": {"selector": {"matchLabels": null}}}),
            Some("spec.selector: Invalid value: {}: empty selector is invalid for statefulset"),
        ),
        create(
            "selector not matching the template",
            json!({"spec": {"selector": {"matchLabels": {"app": "db"}}}}),
            Some(
                "spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`",
            ),
        ),
        create(
            "restartPolicy OnFailure",
            json!({"spec": {"template": {"spec": {"restartPolicy": "OnFailure"}}}}),
            Some("spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\""),
        ),
        create(
            "activeDeadlineSeconds",
            json!({"spec": {"template": {"spec": {"activeDeadlineSeconds": 5}}}}),
            Some(
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in StatefulSet is not Supported",
            ),
        ),
        create(
            "Delete retention",
            json!({"spec": {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"}}}),
            None,
        ),
        create(
            "unknown retention",
            json!({"spec": {"persistentVolumeClaimRetentionPolicy": {"whenScaled": "Archive"}}}),
            Some(
                "spec.persistentVolumeClaimRetentionPolicy.whenScaled: Unsupported value: \"Archive\"",
            ),
        ),
        create(
            "scale maxUnavailable with Parallel",
            json!({"spec": {"podManagementPolicy": "Parallel", "scaleStrategy": {"maxUnavailable": "50%"}}}),
            None,
        ),
        create(
            "scale maxUnavailable without Parallel",
            json!({"spec": {"scaleStrategy": {"maxUnavailable": 2}}}),
            Some(
                "spec.scaleStrategy.maxUnavailable: Invalid value: 2: can only work with Parallel PodManagementPolicyType",
            ),
        ),
    ]);
}

#[test]
fn update_strategy_rules() {
    let parallel = |rolling: Value| {
        json!({"spec": {"podManagementPolicy": "Parallel",
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": rolling}}})
    };
    run(&[
        create(
            "OnDelete",
            json!({"spec": {"updateStrategy": {"type": "OnDelete"}}}),
            None,
        ),
        create(
            "OnDelete with rollingUpdate",
            json!({"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}}}}),
            Some(
                "spec.updateStrategy.rollingUpdate: Invalid value: {\"partition\":1}: only allowed for updateStrategy 'RollingUpdate'",
            ),
        ),
        create(
            "unknown type",
            json!({"spec": {"updateStrategy": {"type": "Canary"}}}),
            Some(
                "spec.updateStrategy.type: Unsupported value: \"Canary\": supported values: \"RollingUpdate\", \"OnDelete\"",
            ),
        ),
        create("partition 2", parallel(json!({"partition": 2})), None),
        create(
            "negative partition",
            parallel(json!({"partition": -1})),
            Some(
                "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1: must be greater than or equal to 0",
            ),
        ),
        create(
            "minReadySeconds 300",
            parallel(json!({"minReadySeconds": 300})),
            None,
        ),
        create(
            "minReadySeconds 301",
            parallel(json!({"minReadySeconds": 301})),
            Some(
                "spec.updateStrategy.rollingUpdate.minReadySeconds: Invalid value: 301: must be no more than 300 seconds",
            ),
        ),
        create(
            "maxUnavailable 40% with Parallel",
            parallel(json!({"maxUnavailable": "40%"})),
            None,
        ),
        create(
            "maxUnavailable 0%",
            parallel(json!({"maxUnavailable": "0%"})),
            Some(
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: \"0%\": should not be less than 1",
            ),
        ),
        create(
            "maxUnavailable that is not a percentage",
            parallel(json!({"maxUnavailable": "40"})),
            Some(
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: \"40\": must be a non-negative integer or a percentage",
            ),
        ),
        create(
            "maxUnavailable 2 with OrderedReady",
            json!({"spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2}}}}),
            Some(
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: 2: can only work with Parallel PodManagementPolicyType",
            ),
        ),
        create(
            "unknown podUpdatePolicy",
            parallel(json!({"podUpdatePolicy": "Restart"})),
            Some(
                "spec.updateStrategy.rollingUpdate.podUpdatePolicy: Unsupported value: \"Restart\"",
            ),
        ),
        create(
            "InPlaceIfPossible with the readiness gate",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}},
                "template": {"spec": {"readinessGates": [{"conditionType": IN_PLACE_GATE}]}}}}),
            None,
        ),
        create(
            "InPlaceIfPossible without the readiness gate",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"}}}}),
            Some(
                "spec.template.spec.readinessGates: Invalid value: null: must contain InPlaceUpdateReady when podUpdatePolicy is InPlaceIfPossible",
            ),
        ),
        create(
            "InPlaceOnly with another gate only",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"podUpdatePolicy": "InPlaceOnly"}},
                "template": {"spec": {"readinessGates": [{"conditionType": "Other"}]}}}}),
            Some(
                "spec.template.spec.readinessGates: Invalid value: [{\"conditionType\":\"Other\"}]: must contain InPlaceUpdateReady when podUpdatePolicy is InPlaceOnly",
            ),
        ),
        create(
            "unorderedUpdate with Parallel",
            parallel(json!({"unorderedUpdate": {}})),
            None,
        ),
        create(
            "unorderedUpdate with OrderedReady",
            json!({"spec": {"updateStrategy": {"rollingUpdate": {"unorderedUpdate": {}}}}}),
            Some(
                "spec.updateStrategy.rollingUpdate.unorderedUpdate: Required value: unorderedUpdate can only work with Parallel PodManagementPolicyType",
            ),
        ),
    ]);
}

#[test]
fn update_rules() {
    run(&[
        update(
            "replicas, template and strategy change",
            json!({}),
            json!({"spec": {"replicas": 5, "reserveOrdinals": [1],
                "template": {"spec": {"containers": [{"name": "main", "image": "nginx:1.26"}]}},
                "updateStrategy": {"rollingUpdate": {"partition": 2}}}}),
            None,
        ),
        update(
            "selector change",
            json!({}),
            json!({"spec": {"selector": {"matchLabels": {"app": "web", "v": "2"}},
                "template": {"metadata": {"labels": {"app": "web", "v": "2"}}}}}),
            Some(
                "spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"web\",\"v\":\"2\"}}: field is immutable",
            ),
        ),
        update(
            "serviceName change",
            json!({}),
            json!({"spec": {"serviceName": "web-2"}}),
            Some("spec.serviceName: Invalid value: \"web-2\": field is immutable"),
        ),
        update(
            "podManagementPolicy change",
            json!({}),
            json!({"spec": {"podManagementPolicy": "Parallel"}}),
            Some("spec.podManagementPolicy: Invalid value: \"Parallel\": field is immutable"),
        ),
    ]);
}
