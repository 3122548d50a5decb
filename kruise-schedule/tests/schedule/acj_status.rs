//! AdvancedCronJob decisions (upstream `pkg/controller/advancedcronjob`), first half: the status from the children,
//! the template kind, history cleanup, `paused`, and an unparsable schedule.

// Test code: a panic is a failed test.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::time::Duration;

use crate::support::acj::*;
use kruise_api::apps::v1beta1;
use kruise_schedule::advanced_cron_job::{self as cronjob, Action, Child, Warning};

#[test]
fn status_from_children() {
    let children = [
        child_job(
            "a",
            Some("2024-05-01T00:05:00Z"),
            "complete",
            Some("2024-05-01T00:05:01Z"),
        ),
        child_job(
            "b",
            Some("2024-05-01T00:10:00Z"),
            "active",
            Some("2024-05-01T00:10:01Z"),
        ),
        child_job("c", Some("not a time"), "failed", None),
        child_job("d", None, "active", None),
    ];
    let plan = cronjob::plan(
        &acj(JOB_ACJ, |_| {}),
        &children,
        at("2024-05-01T00:12:00Z"),
        &options(),
    );
    assert_eq!(plan.status.type_, Some(v1beta1::TemplateKind::Job));
    assert_eq!(names(&plan.status.active), ["b", "d"]);
    let active = &plan.status.active[0];
    assert_eq!(active.kind.as_deref(), Some("Job"));
    assert_eq!(active.api_version.as_deref(), Some("batch/v1"));
    assert_eq!(active.uid.as_deref(), Some("b-uid"));
    assert_eq!(active.resource_version.as_deref(), Some("1"));
    assert_eq!(
        plan.status.last_schedule_time.as_ref().map(|time| time.0),
        Some(at("2024-05-01T00:10:00Z"))
    );
    assert_eq!(
        plan.warnings,
        [Warning::UnparsableScheduledAt {
            child: "c".into(),
            value: "not a time".into()
        }]
    );
    // Nothing missed since 00:10; the next run is 00:15.
    assert_eq!(plan.action, Action::NoRunDue);
    assert_eq!(plan.requeue_after, Some(Duration::from_secs(180)));

    // Children of another kind are not this template's: ignored, like upstream's typed list.
    let broadcast = Child::from(&v1beta1::BroadcastJob::default());
    let plan = cronjob::plan(
        &acj(JOB_ACJ, |_| {}),
        &[broadcast],
        at("2024-05-01T00:12:00Z"),
        &options(),
    );
    assert!(plan.status.active.is_empty());
    assert_eq!(plan.status.last_schedule_time, None);
}

#[test]
fn template_kind_precedence() {
    let kinds = |template: &str| {
        let acj = acj(
            &format!("metadata: {{name: x}}\nspec: {{schedule: '@daily', template: {template}}}"),
            |_| {},
        );
        cronjob::plan(&acj, &[], at("2024-05-01T00:00:00Z"), &options())
            .status
            .type_
    };
    use v1beta1::TemplateKind;
    assert_eq!(
        kinds(
            "{jobTemplate: {}, imageListPullJobTemplate: {spec: {images: [a], completionPolicy: {}}}, broadcastJobTemplate: {}}"
        ),
        Some(TemplateKind::Job)
    );
    assert_eq!(
        kinds(
            "{imageListPullJobTemplate: {spec: {images: [a], completionPolicy: {}}}, broadcastJobTemplate: {}}"
        ),
        Some(TemplateKind::ImageListPullJob)
    );
    assert_eq!(
        kinds("{broadcastJobTemplate: {}}"),
        Some(TemplateKind::BroadcastJob)
    );
    assert_eq!(kinds("{}"), Some(TemplateKind::BroadcastJob));
}

#[test]
fn history_cleanup_even_when_paused() {
    let children = [
        child_job(
            "s1",
            Some("2024-05-01T00:05:00Z"),
            "complete",
            Some("2024-05-01T00:05:01Z"),
        ),
        child_job(
            "s2",
            Some("2024-05-01T00:10:00Z"),
            "complete",
            Some("2024-05-01T00:10:01Z"),
        ),
        child_job("s0", Some("2024-05-01T00:00:00Z"), "complete", None),
        child_job(
            "s3",
            Some("2024-05-01T00:15:00Z"),
            "complete",
            Some("2024-05-01T00:15:01Z"),
        ),
        child_job(
            "f1",
            Some("2024-05-01T00:20:00Z"),
            "failed",
            Some("2024-05-01T00:20:01Z"),
        ),
        child_job(
            "f2",
            Some("2024-05-01T00:25:00Z"),
            "failed",
            Some("2024-05-01T00:25:01Z"),
        ),
    ];
    let paused = acj(JOB_ACJ, |acj| acj.spec.paused = Some(true));
    let plan = cronjob::plan(&paused, &children, at("2024-05-01T01:00:00Z"), &options());
    // Failed first (limit 1), then successful (limit 2), oldest first, no start time oldest of all.
    assert_eq!(names(&plan.delete_finished), ["f1", "s0", "s1"]);
    assert_eq!(plan.action, Action::Paused);
    assert_eq!(plan.requeue_after, None);
    assert_eq!(plan.next_run, None);

    // Without limits nothing is cleaned up (the defaulting webhook normally sets 3 and 1).
    let unlimited = acj(JOB_ACJ, |acj| {
        acj.spec.successful_jobs_history_limit = None;
        acj.spec.failed_jobs_history_limit = None;
    });
    let plan = cronjob::plan(
        &unlimited,
        &children,
        at("2024-05-01T01:00:00Z"),
        &options(),
    );
    assert!(plan.delete_finished.is_empty());
}

#[test]
fn invalid_schedule_stops_without_requeue() {
    let bad = acj(JOB_ACJ, |acj| acj.spec.schedule = "61 * * * *".into());
    let plan = cronjob::plan(&bad, &[], at("2024-05-01T01:00:00Z"), &options());
    assert!(
        matches!(plan.action, Action::InvalidSchedule(_)),
        "{:?}",
        plan.action
    );
    assert_eq!(plan.requeue_after, None);
    assert_eq!(plan.status.type_, Some(v1beta1::TemplateKind::Job));
}
