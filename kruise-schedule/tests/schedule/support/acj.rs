//! Helpers for the AdvancedCronJob tests: a Job-template AdvancedCronJob, children, and plan accessors.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::v1beta1;
use kruise_api::keys::cronjob::SCHEDULED_AT_ANNOTATION;
use kruise_schedule::advanced_cron_job::{Action, Child, Plan, PlanOptions, Run};

pub const JOB_ACJ: &str = r#"
apiVersion: apps.kruise.io/v1beta1
kind: AdvancedCronJob
metadata: {name: acj, namespace: ns, uid: acj-uid, creationTimestamp: "2024-05-01T00:00:00Z"}
spec:
  schedule: "*/5 * * * *"
  successfulJobsHistoryLimit: 2
  failedJobsHistoryLimit: 1
  template:
    jobTemplate:
      metadata:
        labels: {app: acj}
        annotations: {note: kept}
      spec:
        backoffLimit: 2
        template: {spec: {restartPolicy: Never, containers: [{name: main, image: busybox}]}}
"#;

pub fn acj(
    yaml: &str,
    edit: impl FnOnce(&mut v1beta1::AdvancedCronJob),
) -> v1beta1::AdvancedCronJob {
    let mut acj: v1beta1::AdvancedCronJob = serde_saphyr::from_str(yaml).unwrap();
    edit(&mut acj);
    acj
}

pub fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

pub fn child_job(
    name: &str,
    scheduled_at: Option<&str>,
    state: &str,
    start: Option<&str>,
) -> Child {
    let conditions = match state {
        "active" => "[]",
        "complete" => "[{type: Complete, status: 'True'}]",
        "failed" => "[{type: Failed, status: 'True'}]",
        _ => unreachable!(),
    };
    let annotations = scheduled_at.map_or(String::new(), |value| {
        format!("annotations: {{{SCHEDULED_AT_ANNOTATION}: '{value}'}}")
    });
    let start = start.map_or(String::new(), |start| format!("startTime: '{start}'"));
    let job: Job = serde_saphyr::from_str(&format!(
        "metadata: {{name: {name}, namespace: ns, uid: {name}-uid, resourceVersion: '1', {annotations}}}\n\
         status: {{conditions: {conditions}, {start}}}"
    ))
    .unwrap();
    Child::from(&job)
}

pub fn options() -> PlanOptions {
    PlanOptions::default()
}

pub fn run_of(plan: &Plan) -> &Run {
    match &plan.action {
        Action::Run(run) => run,
        other => panic!("expected a run, got {other:?}"),
    }
}

pub fn names(references: &[k8s_openapi::api::core::v1::ObjectReference]) -> Vec<&str> {
    references
        .iter()
        .map(|reference| reference.name.as_deref().unwrap())
        .collect()
}
