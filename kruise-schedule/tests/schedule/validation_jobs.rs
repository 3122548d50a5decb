//! Table tests of the BroadcastJob, AdvancedCronJob and ImagePullJob validation rules
//! (`kruise_schedule::validation::{broadcastjob, advancedcronjob, imagepulljob}`): for each rule a passing
//! and a refused row, the message checked (field path and value).

// Test code: a panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use kruise_api::apps::v1alpha1::{AdvancedCronJob, BroadcastJob, ImagePullJob};
use kruise_api::apps::v1beta1;
use kruise_api::defaults::ApplyDefaults;
use kruise_schedule::validation::{advancedcronjob, broadcastjob, imagepulljob};
use serde_json::{Value, json};

use crate::support::validation_table::{Row, check, create, update};

fn pod_template(restart_policy: &str) -> Value {
    json!({"spec": {"restartPolicy": restart_policy,
        "containers": [{"name": "pi", "image": "perl:5.34", "command": ["perl", "-e", "1"]}]}})
}

fn broadcast_base() -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "BroadcastJob",
        "metadata": {"name": "pi", "namespace": "default"},
        "spec": {"template": pod_template("Never")}})
}

fn run_broadcast(rows: &[Row]) {
    let decoded = |value: Value| {
        let mut job: BroadcastJob = serde_json::from_value(value).unwrap();
        job.apply_defaults();
        job
    };
    check(&broadcast_base(), rows, |new, _| {
        broadcastjob::validate(&decoded(new))
    });
}

#[test]
fn broadcast_job_rules() {
    run_broadcast(&[
        create("the base", json!({}), None),
        create(
            "name with a dot",
            json!({"metadata": {"name": "pi.v2"}}),
            Some(
                "metadata.name: Invalid value: \"pi.v2\": BroadcastJob name must consist of alphanumeric characters or '-'",
            ),
        ),
        create(
            "Always with a ttl",
            json!({"spec": {"completionPolicy": {"type": "Always", "ttlSecondsAfterFinished": 30}}}),
            None,
        ),
        create(
            "Never with a ttl",
            json!({"spec": {"completionPolicy": {"type": "Never", "ttlSecondsAfterFinished": 30}}}),
            Some(
                "spec.completionPolicy.ttlSecondsAfterFinished: Invalid value: 30: ttlSecondsAfterFinished can just work with Always CompletionPolicyType",
            ),
        ),
        create(
            "Never with a deadline",
            json!({"spec": {"completionPolicy": {"type": "Never", "activeDeadlineSeconds": 60}}}),
            Some(
                "spec.completionPolicy.activeDeadlineSeconds: Invalid value: 60: activeDeadlineSeconds can just work with Always CompletionPolicyType",
            ),
        ),
        create(
            "unknown completion type",
            json!({"spec": {"completionPolicy": {"type": "Sometimes"}}}),
            Some(
                "spec.completionPolicy.type: Unsupported value: \"Sometimes\": supported values: \"Always\", \"Never\"",
            ),
        ),
        create(
            "FailFast",
            json!({"spec": {"failurePolicy": {"type": "FailFast"}}}),
            None,
        ),
        create(
            "unknown failure type",
            json!({"spec": {"failurePolicy": {"type": "Retry"}}}),
            Some("spec.failurePolicy.type: Unsupported value: \"Retry\""),
        ),
        create(
            "percentage parallelism",
            json!({"spec": {"parallelism": "50%"}}),
            None,
        ),
        create(
            "parallelism that is not a percentage",
            json!({"spec": {"parallelism": "half"}}),
            Some(
                "spec.parallelism: Invalid value: \"half\": must be a non-negative integer or a percentage",
            ),
        ),
        create(
            "OnFailure",
            json!({"spec": {"template": pod_template("OnFailure")}}),
            None,
        ),
        create(
            "restartPolicy Always",
            json!({"spec": {"template": pod_template("Always")}}),
            Some(
                "spec.template.spec.restartPolicy: Invalid value: \"Always\": pod restartPolicy can only be Never or OnFailure",
            ),
        ),
        create(
            "own labels",
            json!({"spec": {"template": {"metadata": {"labels": {"app": "pi"}}}}}),
            None,
        ),
        create(
            "preset controller label",
            json!({"spec": {"template": {"metadata": {"labels": {"broadcastjob-name": "x"}}}}}),
            Some(
                "spec.template.metadata.labels: Invalid value: {\"broadcastjob-name\":\"x\"}: \"broadcastjob-name\" and \"broadcastjob-controller-uid\" are not allowed to preset in pod labels",
            ),
        ),
        create(
            "container without name",
            json!({"spec": {"template": {"spec": {"containers": [{"image": "perl"}]}}}}),
            Some("spec.template.spec.containers[0].name: Required value"),
        ),
    ]);
}

fn cron_base() -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "AdvancedCronJob",
        "metadata": {"name": "nightly", "namespace": "default"},
        "spec": {"schedule": "*/5 * * * *",
            "template": {"broadcastJobTemplate": {"spec": {"template": pod_template("Never")}}}}})
}

fn run_cron(rows: &[Row]) {
    let decoded = |value: Value| {
        let mut job: AdvancedCronJob = serde_json::from_value(value).unwrap();
        job.apply_defaults();
        job
    };
    check(&cron_base(), rows, |new, old| {
        advancedcronjob::validate(&decoded(new), old.map(decoded).as_ref())
    });
}

#[test]
fn advanced_cron_job_rules() {
    run_cron(&[
        create("the base", json!({}), None),
        create(
            "name too long",
            json!({"metadata": {"name": "n".repeat(64)}}),
            Some("metadata.name: Invalid value: \"nnnn"),
        ),
        create(
            "empty schedule",
            json!({"spec": {"schedule": ""}}),
            Some("spec.schedule: Invalid value: \"\": schedule cannot be empty"),
        ),
        create(
            "schedule with six fields",
            json!({"spec": {"schedule": "0 */5 * * * *"}}),
            Some("spec.schedule: Invalid value: \"0 */5 * * * *\""),
        ),
        create(
            "minute out of range",
            json!({"spec": {"schedule": "61 * * * *"}}),
            Some("spec.schedule: Invalid value: \"61 * * * *\""),
        ),
        create(
            "TZ prefix",
            json!({"spec": {"schedule": "TZ=Asia/Tokyo 0 2 * * *"}}),
            None,
        ),
        create(
            "TZ prefix and timeZone",
            json!({"spec": {"schedule": "TZ=Asia/Tokyo 0 2 * * *", "timeZone": "Asia/Tokyo"}}),
            Some(
                "spec.schedule: Invalid value: \"TZ=Asia/Tokyo 0 2 * * *\": cannot use both timeZone field and TZ or CRON_TZ in schedule",
            ),
        ),
        create(
            "timeZone",
            json!({"spec": {"timeZone": "Europe/Berlin"}}),
            None,
        ),
        create(
            "empty timeZone",
            json!({"spec": {"timeZone": ""}}),
            Some("spec.timeZone: Invalid value: \"\": timeZone must be nil or non-empty string"),
        ),
        create(
            "Local timeZone",
            json!({"spec": {"timeZone": "local"}}),
            Some("spec.timeZone: Invalid value: \"local\": timeZone must be an explicit time zone"),
        ),
        create(
            "unknown timeZone",
            json!({"spec": {"timeZone": "Mars/Olympus"}}),
            Some(
                "spec.timeZone: Invalid value: \"Mars/Olympus\": unknown time zone \"Mars/Olympus\"",
            ),
        ),
        create(
            "job template",
            json!({"spec": {"template": {"broadcastJobTemplate": null,
                "jobTemplate": {"spec": {"template": pod_template("OnFailure")}}}}}),
            None,
        ),
        create(
            "no template",
            json!({"spec": {"template": {"broadcastJobTemplate": null}}}),
            Some("spec.template: Forbidden: spec must have one template"),
        ),
        create(
            "two templates",
            json!({"spec": {"template": {"jobTemplate": {"spec": {"template": pod_template("OnFailure")}}}}}),
            Some("spec.template: Forbidden: spec can have only one template"),
        ),
        create(
            "template without containers",
            json!({"spec": {"template": {"broadcastJobTemplate": {"spec": {"template": {"spec": {"containers": []}}}}}}}),
            Some(
                "spec.template.broadcastJobTemplate.spec.template.spec.containers: Required value",
            ),
        ),
        create(
            "history limit 0",
            json!({"spec": {"successfulJobsHistoryLimit": 0}}),
            None,
        ),
        create(
            "negative history limit",
            json!({"spec": {"failedJobsHistoryLimit": -1}}),
            Some(
                "spec.failedJobsHistoryLimit: Invalid value: -1: must be greater than or equal to 0",
            ),
        ),
        create(
            "negative starting deadline",
            json!({"spec": {"startingDeadlineSeconds": -5}}),
            Some(
                "spec.startingDeadlineSeconds: Invalid value: -5: must be greater than or equal to 0",
            ),
        ),
        create(
            "Forbid",
            json!({"spec": {"concurrencyPolicy": "Forbid"}}),
            None,
        ),
        create(
            "unknown concurrencyPolicy",
            json!({"spec": {"concurrencyPolicy": "Queue"}}),
            Some(
                "spec.concurrencyPolicy: Unsupported value: \"Queue\": supported values: \"Allow\", \"Forbid\", \"Replace\"",
            ),
        ),
        update(
            "schedule and paused change",
            json!({}),
            json!({"spec": {"schedule": "0 * * * *", "paused": true}}),
            None,
        ),
        update(
            "template change",
            json!({}),
            json!({"spec": {"template": {"broadcastJobTemplate": {"spec": {"template": pod_template("OnFailure")}}}}}),
            Some(
                "spec.template: Forbidden: updates to advancedcronjob spec for fields other than 'schedule'",
            ),
        ),
    ]);
}

fn run_cron_v1beta1(rows: &[Row]) {
    let decoded = |mut value: Value| {
        value["apiVersion"] = json!("apps.kruise.io/v1beta1");
        let mut job: v1beta1::AdvancedCronJob = serde_json::from_value(value).unwrap();
        job.apply_defaults();
        job
    };
    check(&cron_base(), rows, |new, old| {
        advancedcronjob::validate_v1beta1(&decoded(new), old.map(decoded).as_ref())
    });
}

fn image_list_template(images: &[&str]) -> Value {
    json!({"imageListPullJobTemplate": {"spec": {"images": images, "completionPolicy": {"type": "Always"}}}})
}

#[test]
fn advanced_cron_job_v1beta1_rules() {
    let only_image_list = || {
        let mut template = image_list_template(&["busybox:1.36"]);
        template["broadcastJobTemplate"] = Value::Null;
        json!({"spec": {"template": template}})
    };
    run_cron_v1beta1(&[
        create("the base", json!({}), None),
        create(
            "an ImageListPullJob template alone",
            only_image_list(),
            None,
        ),
        create(
            "no template",
            json!({"spec": {"template": {"broadcastJobTemplate": null}}}),
            Some("spec.template: Forbidden: spec must have one template"),
        ),
        create(
            "an ImageListPullJob template and a BroadcastJob template",
            json!({"spec": {"template": image_list_template(&["busybox:1.36"])}}),
            Some(
                "spec.template: Forbidden: spec can have only one template, either JobTemplate, BroadcastJobTemplate or ImageListPullJobTemplate",
            ),
        ),
        create(
            "an ImageListPullJob template without images",
            {
                let mut patch = only_image_list();
                patch["spec"]["template"]["imageListPullJobTemplate"]["spec"]["images"] = json!([]);
                patch
            },
            Some("spec.template.imageListPullJobTemplate.spec.images: Required value"),
        ),
        create(
            "the v1alpha1 rules still hold",
            json!({"spec": {"schedule": ""}}),
            Some("spec.schedule: Invalid value: \"\": schedule cannot be empty"),
        ),
        update(
            "the image list changes",
            only_image_list(),
            {
                let mut patch = only_image_list();
                patch["spec"]["template"]["imageListPullJobTemplate"]["spec"]["images"] =
                    json!(["busybox:1.37"]);
                patch
            },
            Some(
                "spec.template: Forbidden: updates to advancedcronjob spec for fields other than 'schedule'",
            ),
        ),
        update(
            "the schedule changes beside an image list",
            only_image_list(),
            {
                let mut patch = only_image_list();
                patch["spec"]["schedule"] = json!("0 * * * *");
                patch
            },
            None,
        ),
    ]);
}

fn image_base() -> Value {
    json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "ImagePullJob",
        "metadata": {"name": "pull", "namespace": "default"},
        "spec": {"image": "nginx:1.25", "completionPolicy": {"type": "Always"}}})
}

fn run_image(rows: &[Row]) {
    let decoded = |value: Value| {
        let mut job: ImagePullJob = serde_json::from_value(value).unwrap();
        job.apply_defaults();
        job
    };
    check(&image_base(), rows, |new, _| {
        imagepulljob::validate(&decoded(new))
    });
}

#[test]
fn image_pull_job_rules() {
    run_image(&[
        create("the base", json!({}), None),
        create(
            "no image",
            json!({"spec": {"image": ""}}),
            Some("spec.image: Required value: image can not be empty"),
        ),
        create(
            "invalid image",
            json!({"spec": {"image": "nginx:1.25:extra"}}),
            Some("spec.image: Invalid value: \"nginx:1.25:extra\": not a valid image reference"),
        ),
        create(
            "node names",
            json!({"spec": {"selector": {"names": ["n1", "n2"]}}}),
            None,
        ),
        create(
            "names and labels",
            json!({"spec": {"selector": {"names": ["n1"], "matchLabels": {"pool": "a"}}}}),
            Some(
                "spec.selector: Invalid value: {\"matchLabels\":{\"pool\":\"a\"},\"names\":[\"n1\"]}: can not set both names and labelSelector",
            ),
        ),
        create(
            "duplicated names",
            json!({"spec": {"selector": {"names": ["n1", "n1"]}}}),
            Some("spec.selector.names[1]: Duplicate value: \"n1\""),
        ),
        create(
            "invalid node selector",
            json!({"spec": {"selector": {"matchExpressions": [{"key": "pool", "operator": "Near"}]}}}),
            Some("spec.selector: Invalid value: "),
        ),
        create(
            "pod selector",
            json!({"spec": {"podSelector": {"matchLabels": {"app": "web"}}}}),
            None,
        ),
        create(
            "pod selector and node selector",
            json!({"spec": {"podSelector": {"matchLabels": {"app": "web"}}, "selector": {"names": ["n1"]}}}),
            Some("spec.podSelector: Forbidden: can not set both selector and podSelector"),
        ),
        create(
            "deadline above the timeout",
            json!({"spec": {"completionPolicy": {"activeDeadlineSeconds": 1200}}}),
            None,
        ),
        create(
            "deadline below the default timeout",
            json!({"spec": {"completionPolicy": {"activeDeadlineSeconds": 60}}}),
            Some(
                "spec.completionPolicy.activeDeadlineSeconds: Invalid value: 60: must be greater than pullPolicy.timeoutSeconds (600)",
            ),
        ),
        create(
            "Never",
            json!({"spec": {"completionPolicy": {"type": "Never"}}}),
            None,
        ),
        create(
            "Never with a ttl",
            json!({"spec": {"completionPolicy": {"type": "Never", "ttlSecondsAfterFinished": 10}}}),
            Some(
                "spec.completionPolicy: Forbidden: activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType",
            ),
        ),
        create(
            "unknown completion type",
            json!({"spec": {"completionPolicy": {"type": "Once"}}}),
            Some("spec.completionPolicy.type: Unsupported value: \"Once\""),
        ),
        create("parallelism 3", json!({"spec": {"parallelism": 3}}), None),
        create(
            "negative parallelism",
            json!({"spec": {"parallelism": -1}}),
            Some("spec.parallelism: Invalid value: -1: must be greater than or equal to 0"),
        ),
    ]);
}
