//! AdvancedCronJob decisions (upstream `pkg/controller/advancedcronjob`), second half: the missed run (no limit of
//! 100) and the starting deadline, time zones, the concurrency policies, the child to create for each template
//! kind, and the requeue time.

// Test code: a panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::time::Duration;

use crate::support::acj::*;
use kruise_api::apps::{v1alpha1, v1beta1};
use kruise_api::keys::cronjob::SCHEDULED_AT_ANNOTATION;
use kruise_schedule::advanced_cron_job::{
    self as cronjob, Action, Child, NewChild, PlanOptions, Warning,
};
use kruise_schedule::cron::Zone;

#[test]
fn runs_the_most_recent_missed_time() {
    // Created at 00:00, now 00:17: 00:05, 00:10 and 00:15 were missed; 00:15 runs.
    let plan = cronjob::plan(
        &acj(JOB_ACJ, |_| {}),
        &[],
        at("2024-05-01T00:17:30Z"),
        &options(),
    );
    let run = run_of(&plan);
    assert_eq!(run.scheduled.to_rfc3339(), "2024-05-01T00:15:00+00:00");
    assert_eq!(run.missed, 3);
    assert!(run.delete_active.is_empty());
    assert_eq!(plan.requeue_after, Some(Duration::from_secs(150)));
    let NewChild::Job(job) = &run.child else {
        panic!("{:?}", run.child)
    };
    let metadata = &job.metadata;
    assert_eq!(metadata.name.as_deref(), Some("acj-1714522500"));
    assert_eq!(metadata.namespace.as_deref(), Some("ns"));
    assert_eq!(metadata.labels, Some([("app".into(), "acj".into())].into()));
    assert_eq!(
        metadata.annotations,
        Some(
            [
                ("note".into(), "kept".into()),
                (
                    SCHEDULED_AT_ANNOTATION.into(),
                    "2024-05-01T00:15:00Z".into()
                )
            ]
            .into()
        )
    );
    let owner = &metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (
            owner.api_version.as_str(),
            owner.kind.as_str(),
            owner.name.as_str(),
            owner.uid.as_str()
        ),
        (
            "apps.kruise.io/v1beta1",
            "AdvancedCronJob",
            "acj",
            "acj-uid"
        )
    );
    assert_eq!(
        (owner.controller, owner.block_owner_deletion),
        (Some(true), Some(true))
    );
    assert_eq!(job.spec.as_ref().unwrap().backoff_limit, Some(2));

    // From the last scheduled child instead of the creation time.
    let children = [child_job(
        "acj-1714522500",
        Some("2024-05-01T00:15:00Z"),
        "complete",
        None,
    )];
    let plan = cronjob::plan(
        &acj(JOB_ACJ, |_| {}),
        &children,
        at("2024-05-01T00:21:00Z"),
        &options(),
    );
    assert_eq!(
        run_of(&plan).scheduled.to_rfc3339(),
        "2024-05-01T00:20:00+00:00"
    );
    assert_eq!(run_of(&plan).missed, 1);
}

#[test]
fn no_limit_of_100_missed_runs() {
    // A year of five-minute runs: upstream gives up (more than 100); here the latest runs, with a warning.
    let plan = cronjob::plan(
        &acj(JOB_ACJ, |_| {}),
        &[],
        at("2025-05-01T00:02:00Z"),
        &options(),
    );
    let run = run_of(&plan);
    assert_eq!(run.scheduled.to_rfc3339(), "2025-05-01T00:00:00+00:00");
    assert_eq!(run.missed, 365 * 24 * 12);
    assert_eq!(
        plan.warnings,
        [Warning::TooManyMissedRuns {
            missed: 365 * 24 * 12
        }]
    );
    assert_eq!(plan.warnings[0].reason(), "TooManyMissedTimes");
}

#[test]
fn starting_deadline() {
    let with_deadline = |seconds| {
        acj(JOB_ACJ, |acj| {
            acj.spec.starting_deadline_seconds = Some(seconds);
        })
    };
    // The deadline moves the earliest time forward: only 00:15 is inside the last 200 seconds.
    let plan = cronjob::plan(
        &with_deadline(200),
        &[],
        at("2024-05-01T00:17:30Z"),
        &options(),
    );
    assert_eq!(
        run_of(&plan).scheduled.to_rfc3339(),
        "2024-05-01T00:15:00+00:00"
    );
    assert_eq!(run_of(&plan).missed, 1);
    // A shorter deadline that excludes 00:15: nothing to run, wait for 00:20.
    let plan = cronjob::plan(
        &with_deadline(100),
        &[],
        at("2024-05-01T00:17:30Z"),
        &options(),
    );
    assert!(matches!(plan.action, Action::NoRunDue), "{:?}", plan.action);
    assert_eq!(plan.requeue_after, Some(Duration::from_secs(150)));
    // The run found is never older than the deadline, because the deadline also bounds the search; only
    // Go's wrapping duration arithmetic reaches upstream's "too late" branch: 2^54 seconds is 2^63 ns,
    // which wraps to the most negative duration in both places.
    let plan = cronjob::plan(
        &with_deadline(1 << 54),
        &[],
        at("2024-05-01T00:17:30Z"),
        &options(),
    );
    let Action::TooLate(missed) = plan.action else {
        panic!("{:?}", plan.action)
    };
    assert_eq!(missed.scheduled.to_rfc3339(), "2024-05-01T00:15:00+00:00");
    assert_eq!(missed.missed, 3);
    assert_eq!(plan.requeue_after, Some(Duration::from_secs(150)));
    // A negative deadline puts the earliest time in the future.
    let plan = cronjob::plan(
        &with_deadline(-1),
        &[],
        at("2024-05-01T00:17:30Z"),
        &options(),
    );
    assert_eq!(plan.action, Action::NoRunDue);
    // Creation in the future (clock skew): nothing missed.
    let future = acj(JOB_ACJ, |acj| {
        acj.metadata.creation_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(at("2024-06-01T00:00:00Z")),
        );
    });
    let plan = cronjob::plan(&future, &[], at("2024-05-01T00:17:30Z"), &options());
    assert_eq!(plan.action, Action::NoRunDue);
    assert_eq!(plan.requeue_after, Some(Duration::from_secs(150)));
}

#[test]
fn concurrency_policies() {
    let children = [
        child_job("old", Some("2024-05-01T00:10:00Z"), "active", None),
        child_job("older", Some("2024-05-01T00:05:00Z"), "active", None),
    ];
    let now = at("2024-05-01T00:16:00Z");
    let with = |policy: &str| {
        acj(JOB_ACJ, |acj| {
            acj.spec.concurrency_policy =
                Some(serde_json::from_value(serde_json::json!(policy)).unwrap());
        })
    };
    let allow = cronjob::plan(&with("Allow"), &children, now, &options());
    assert!(run_of(&allow).delete_active.is_empty());
    let unset = cronjob::plan(&acj(JOB_ACJ, |_| {}), &children, now, &options());
    assert!(run_of(&unset).delete_active.is_empty());
    let forbid = cronjob::plan(&with("Forbid"), &children, now, &options());
    assert!(
        matches!(forbid.action, Action::Forbidden(_)),
        "{:?}",
        forbid.action
    );
    assert_eq!(forbid.requeue_after, Some(Duration::from_secs(240)));
    let forbid_idle = cronjob::plan(
        &with("Forbid"),
        &[child_job(
            "done",
            Some("2024-05-01T00:10:00Z"),
            "complete",
            None,
        )],
        now,
        &options(),
    );
    assert!(matches!(forbid_idle.action, Action::Run(_)));
    let replace = cronjob::plan(&with("Replace"), &children, now, &options());
    assert_eq!(names(&run_of(&replace).delete_active), ["old", "older"]);
    assert_eq!(run_of(&replace).child.name(), "acj-1714522500");
}

#[test]
fn time_zones() {
    let in_zone = |zone: &str| {
        acj(JOB_ACJ, |acj| {
            acj.spec.schedule = "0 10 * * *".into();
            acj.spec.time_zone = Some(zone.into());
        })
    };
    let now = at("2024-05-02T03:00:00Z");
    // 10:00 in Shanghai is 02:00Z; the scheduled-at is written in the controller's zone (UTC).
    let plan = cronjob::plan(&in_zone("Asia/Shanghai"), &[], now, &options());
    assert_eq!(
        run_of(&plan).scheduled.to_rfc3339(),
        "2024-05-02T02:00:00+00:00"
    );
    let annotations = run_of(&plan).child.metadata().annotations.clone().unwrap();
    assert_eq!(annotations[SCHEDULED_AT_ANNOTATION], "2024-05-02T02:00:00Z");
    // A controller running in Shanghai writes local time.
    let shanghai = PlanOptions {
        local_zone: chrono_tz::Asia::Shanghai.into(),
    };
    let plan = cronjob::plan(&in_zone("Asia/Shanghai"), &[], now, &shanghai);
    let annotations = run_of(&plan).child.metadata().annotations.clone().unwrap();
    assert_eq!(
        annotations[SCHEDULED_AT_ANNOTATION],
        "2024-05-02T10:00:00+08:00"
    );
    // An unknown zone: the controller's zone, and a warning.
    let plan = cronjob::plan(&in_zone("Asia/Atlantis"), &[], now, &options());
    assert_eq!(
        run_of(&plan).scheduled.to_rfc3339(),
        "2024-05-01T10:00:00+00:00"
    );
    assert_eq!(
        plan.next_run.unwrap().to_rfc3339(),
        "2024-05-02T10:00:00+00:00"
    );
    assert_eq!(plan.warnings.len(), 1);
    assert_eq!(plan.warnings[0].reason(), "UnknownTimeZone");
}

/// Without a zone, upstream reads the schedule in the zone of the time it starts from: the controller's
/// zone from the creation time, but the zone written in the last child's scheduled-at after that.
#[test]
fn zone_of_the_last_scheduled_at() {
    let daily = acj(JOB_ACJ, |acj| acj.spec.schedule = "0 10 * * *".into());
    let shanghai = PlanOptions {
        local_zone: chrono_tz::Asia::Shanghai.into(),
    };
    // Written by a controller in UTC (`Z`): the next run is 10:00 UTC even for a controller in Shanghai.
    let children = [child_job(
        "a",
        Some("2024-05-01T10:00:00Z"),
        "complete",
        None,
    )];
    let plan = cronjob::plan(&daily, &children, at("2024-05-02T10:30:00Z"), &shanghai);
    assert_eq!(
        run_of(&plan).scheduled.to_rfc3339(),
        "2024-05-02T10:00:00+00:00"
    );
    assert_eq!(
        run_of(&plan).child.metadata().annotations.as_ref().unwrap()[SCHEDULED_AT_ANNOTATION],
        "2024-05-02T10:00:00Z"
    );
    // Written in Shanghai time: runs at 10:00 Shanghai.
    let children = [child_job(
        "a",
        Some("2024-05-01T10:00:00+08:00"),
        "complete",
        None,
    )];
    let plan = cronjob::plan(&daily, &children, at("2024-05-02T10:30:00Z"), &shanghai);
    assert_eq!(
        run_of(&plan).scheduled.to_rfc3339(),
        "2024-05-02T02:00:00+00:00"
    );
    assert_eq!(
        run_of(&plan).child.metadata().annotations.as_ref().unwrap()[SCHEDULED_AT_ANNOTATION],
        "2024-05-02T10:00:00+08:00"
    );
    // The next run after now is always computed in the controller's zone.
    assert_eq!(
        plan.next_run.unwrap().to_rfc3339(),
        "2024-05-03T02:00:00+00:00"
    );
    let _ = Zone::UTC;
}

#[test]
fn broadcast_and_image_list_pull_jobs() {
    let broadcast: v1alpha1::AdvancedCronJob = serde_saphyr::from_str(
        r#"
apiVersion: apps.kruise.io/v1alpha1
kind: AdvancedCronJob
metadata: {name: bcj, namespace: ns, uid: u, creationTimestamp: "2024-05-01T00:00:00Z"}
spec:
  schedule: "@hourly"
  template:
    broadcastJobTemplate:
      metadata: {labels: {k: v}}
      spec: {parallelism: 2, template: {spec: {containers: [{name: c, image: busybox}]}}}
"#,
    )
    .unwrap();
    let plan = cronjob::plan(&broadcast, &[], at("2024-05-01T01:00:00Z"), &options());
    assert_eq!(plan.status.type_, Some(v1beta1::TemplateKind::BroadcastJob));
    let NewChild::BroadcastJob(job) = &run_of(&plan).child else {
        panic!()
    };
    assert_eq!(job.metadata.name.as_deref(), Some("bcj-1714525200"));
    assert_eq!(job.metadata.labels, Some([("k".into(), "v".into())].into()));
    assert_eq!(
        job.metadata.owner_references.as_ref().unwrap()[0].api_version,
        "apps.kruise.io/v1alpha1"
    );
    // A finished BroadcastJob child of the v1alpha1 kind counts.
    let mut done = v1alpha1::BroadcastJob::default();
    done.metadata.name = Some("bcj-1714525200".into());
    done.metadata.annotations = Some(
        [(
            SCHEDULED_AT_ANNOTATION.into(),
            "2024-05-01T01:00:00Z".into(),
        )]
        .into(),
    );
    done.status = Some(
        serde_json::from_value(
            serde_json::json!({"conditions": [{"type": "Complete", "status": "True"}]}),
        )
        .unwrap(),
    );
    let plan = cronjob::plan(
        &broadcast,
        &[Child::from(&done)],
        at("2024-05-01T01:30:00Z"),
        &options(),
    );
    assert_eq!(plan.action, Action::NoRunDue);
    assert!(plan.status.active.is_empty());

    // Upstream's ImageListPullJob scenario: runs every 5 minutes, Replace, limits 1, deadline 360 s.
    let image_list = acj(
        r#"
metadata: {name: job1, namespace: default, uid: "12345", creationTimestamp: "2025-10-10T09:00:00Z"}
spec:
  schedule: "*/5 * * * *"
  concurrencyPolicy: Replace
  startingDeadlineSeconds: 360
  successfulJobsHistoryLimit: 1
  failedJobsHistoryLimit: 1
  template:
    imageListPullJobTemplate:
      metadata: {labels: {key1: value1}, annotations: {key1: value1}}
      spec: {images: ["busybox:latest", "alpine:latest"], completionPolicy: {}}
"#,
        |_| {},
    );
    let child = |minutes: i64, desired: i32, succeeded: i32, completed: i32| {
        let time =
            at("2025-10-10T09:05:00Z") + k8s_openapi::jiff::SignedDuration::from_mins(minutes);
        let mut job = v1beta1::ImageListPullJob::default();
        job.metadata.name = Some(format!("job1-t{minutes}"));
        job.metadata.annotations =
            Some([(SCHEDULED_AT_ANNOTATION.into(), time.to_string())].into());
        let status = job.status.get_or_insert_with(Default::default);
        status.start_time = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(time));
        (status.desired, status.succeeded, status.completed) = (desired, succeeded, completed);
        if desired == completed {
            status.completion_time = status.start_time.clone();
        }
        Child::from(&job)
    };
    let children = [
        child(-20, 2, 1, 2),
        child(-15, 2, 1, 2),
        child(-10, 2, 2, 2),
        child(-5, 2, 2, 2),
        child(0, 2, 0, 1),
    ];
    let plan = cronjob::plan(
        &image_list,
        &children,
        at("2025-10-10T09:10:00Z"),
        &options(),
    );
    assert_eq!(
        plan.status.type_,
        Some(v1beta1::TemplateKind::ImageListPullJob)
    );
    assert_eq!(names(&plan.status.active), ["job1-t0"]);
    assert_eq!(names(&plan.delete_finished), ["job1-t-20", "job1-t-10"]);
    let run = run_of(&plan);
    assert_eq!(run.scheduled.to_rfc3339(), "2025-10-10T09:10:00+00:00");
    assert_eq!(names(&run.delete_active), ["job1-t0"]);
    let NewChild::ImageListPullJob(job) = &run.child else {
        panic!()
    };
    assert_eq!(job.metadata.name.as_deref(), Some("job1-1760087400"));
    assert_eq!(job.spec.images, ["busybox:latest", "alpine:latest"]);
    assert_eq!(job.metadata.annotations.as_ref().unwrap()["key1"], "value1");
    assert_eq!(plan.requeue_after, Some(Duration::from_secs(300)));
}

#[test]
fn missing_template_and_missing_creation_time() {
    let empty = acj(
        "metadata: {name: x, creationTimestamp: '2024-05-01T00:00:00Z'}\nspec: {schedule: '@hourly', template: {}}",
        |_| {},
    );
    let plan = cronjob::plan(&empty, &[], at("2024-05-01T01:00:00Z"), &options());
    assert!(
        matches!(plan.action, Action::MissingTemplate(_)),
        "{:?}",
        plan.action
    );
    assert_eq!(plan.requeue_after, Some(Duration::from_secs(3600)));
    // No creation time: Go's zero time (year 1), so every run since then was missed.
    let no_creation = acj(JOB_ACJ, |acj| acj.metadata.creation_timestamp = None);
    let plan = cronjob::plan(&no_creation, &[], at("2024-05-01T00:17:30Z"), &options());
    assert_eq!(
        run_of(&plan).scheduled.to_rfc3339(),
        "2024-05-01T00:15:00+00:00"
    );
    assert!(run_of(&plan).missed > 200_000_000);
}
