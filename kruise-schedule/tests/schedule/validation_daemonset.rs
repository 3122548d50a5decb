//! Table tests of the Advanced DaemonSet validation rules (`kruise_schedule::validation::daemonset`): for each
//! rule a passing and a refused row, the message checked (field path and value).

// Test code: a panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use kruise_api::apps::v1alpha1::DaemonSet;
use kruise_api::defaults::ApplyDefaults;
use kruise_schedule::validation::daemonset::validate;
use serde_json::{Value, json};

use crate::support::validation_table::{Row, check, create, update};

fn base() -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}}}})
}

fn decoded(value: Value) -> DaemonSet {
    let mut daemonset: DaemonSet = serde_json::from_value(value).unwrap();
    daemonset.apply_defaults();
    daemonset
}

fn run(rows: &[Row]) {
    check(&base(), rows, |new, old| {
        validate(&decoded(new), old.map(decoded).as_ref())
    });
}

fn rolling(parameters: &Value) -> Value {
    json!({"spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": parameters}}})
}

#[test]
fn spec_rules() {
    run(&[
        create("the base", json!({}), None),
        create(
            "empty selector",
            json!({"spec": {"selector": {"matchLabels": null}}}),
            Some("spec.selector: Invalid value: {}: empty selector is invalid for daemonset"),
        ),
        create(
            "selector not matching the template",
            json!({"spec": {"selector": {"matchLabels": {"app": "other"}}}}),
            Some(
                "spec.template.metadata.labels: Invalid value: {\"app\":\"agent\"}: `selector` does not match template `labels`",
            ),
        ),
        create(
            "restartPolicy Never",
            json!({"spec": {"template": {"spec": {"restartPolicy": "Never"}}}}),
            Some("spec.template.spec.restartPolicy: Unsupported value: \"Never\""),
        ),
        create(
            "activeDeadlineSeconds",
            json!({"spec": {"template": {"spec": {"activeDeadlineSeconds": 1}}}}),
            Some(
                "spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in DaemonSet is not Supported",
            ),
        ),
        create(
            "minReadySeconds 10",
            json!({"spec": {"minReadySeconds": 10}}),
            None,
        ),
        create(
            "negative minReadySeconds",
            json!({"spec": {"minReadySeconds": -1}}),
            Some("spec.minReadySeconds: Invalid value: -1: must be greater than or equal to 0"),
        ),
        create(
            "negative revisionHistoryLimit",
            json!({"spec": {"revisionHistoryLimit": -1}}),
            Some(
                "spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
            ),
        ),
        create(
            "preDelete hook",
            json!({"spec": {"lifecycle": {"preDelete": {"finalizersHandler": ["example.com/hook"]}}}}),
            None,
        ),
        create(
            "inPlaceUpdate hook",
            json!({"spec": {"lifecycle": {"inPlaceUpdate": {"finalizersHandler": ["example.com/hook"]}}}}),
            Some(
                "spec.lifecycle.inPlaceUpdate: Forbidden: inPlaceUpdate hook has not supported yet",
            ),
        ),
    ]);
}

#[test]
fn update_strategy_rules() {
    run(&[
        create(
            "OnDelete",
            json!({"spec": {"updateStrategy": {"type": "OnDelete"}}}),
            None,
        ),
        create(
            "unknown type",
            json!({"spec": {"updateStrategy": {"type": "Recreate"}}}),
            Some(
                "spec.updateStrategy.type: Unsupported value: \"Recreate\": supported values: \"RollingUpdate\", \"OnDelete\"",
            ),
        ),
        create(
            "maxUnavailable 100%",
            rolling(&json!({"maxUnavailable": "100%"})),
            None,
        ),
        create(
            "maxUnavailable 150%",
            rolling(&json!({"maxUnavailable": "150%"})),
            Some(
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%",
            ),
        ),
        create(
            "maxUnavailable that is not a percentage",
            rolling(&json!({"maxUnavailable": "ten"})),
            Some(
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Invalid value: \"ten\": must be a non-negative integer or a percentage",
            ),
        ),
        create(
            "maxSurge alone",
            rolling(&json!({"maxUnavailable": 0, "maxSurge": "20%"})),
            None,
        ),
        create(
            "maxSurge 200%",
            rolling(&json!({"maxUnavailable": 0, "maxSurge": "200%"})),
            Some(
                "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: \"200%\": must not be greater than 100%",
            ),
        ),
        create(
            "maxSurge and maxUnavailable",
            rolling(&json!({"maxUnavailable": 1, "maxSurge": 1})),
            Some(
                "spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: 1: may not be set when maxUnavailable is non-zero",
            ),
        ),
        create(
            "neither maxSurge nor maxUnavailable",
            rolling(&json!({"maxUnavailable": "0%", "maxSurge": 0})),
            Some(
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0",
            ),
        ),
        create(
            "InPlaceIfPossible",
            rolling(&json!({"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 1})),
            None,
        ),
        create(
            "InPlaceIfPossible with surge",
            rolling(
                &json!({"rollingUpdateType": "InPlaceIfPossible", "maxUnavailable": 0, "maxSurge": 1}),
            ),
            Some(
                "spec.updateStrategy.rollingUpdate.maxSurge: Required value: must be 0 for InPlaceIfPossible type",
            ),
        ),
        create(
            "unknown rollingUpdateType",
            rolling(&json!({"rollingUpdateType": "Blue", "maxUnavailable": 1})),
            Some(
                "spec.updateStrategy.rollingUpdate.rollingUpdateType: Unsupported value: \"Blue\"",
            ),
        ),
        create(
            "percentage partition",
            rolling(&json!({"maxUnavailable": 1, "partition": "30%"})),
            None,
        ),
        create(
            "negative partition",
            rolling(&json!({"maxUnavailable": 1, "partition": -3})),
            Some(
                "spec.updateStrategy.rollingUpdate.partition: Invalid value: -3: must be greater than or equal to 0",
            ),
        ),
    ]);
}

#[test]
fn update_rules() {
    run(&[
        update(
            "template change",
            json!({}),
            json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "busybox:1.37"}]}}}}),
            None,
        ),
        update(
            "selector change",
            json!({}),
            json!({"spec": {"selector": {"matchLabels": {"app": "agent", "v": "2"}},
                "template": {"metadata": {"labels": {"app": "agent", "v": "2"}}}}}),
            Some(
                "spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"agent\",\"v\":\"2\"}}: field is immutable",
            ),
        ),
    ]);
}
