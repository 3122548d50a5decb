//! AdvancedCronJob v1beta1 (upstream `apis/apps/v1beta1/advancedcronjob_types.go`).

use k8s_openapi::api::batch::v1::JobTemplateSpec;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{BroadcastJobSpec, ImageListPullJobSpec};
use crate::omitempty::is_zero;

/// Creates a Job, BroadcastJob or ImageListPullJob on a cron schedule.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1beta1",
    kind = "AdvancedCronJob",
    namespaced,
    status = "AdvancedCronJobStatus",
    shortname = "acj",
    derive = "PartialEq",
    derive = "Default",
    doc = "AdvancedCronJob creates a Job, BroadcastJob or ImageListPullJob on a cron schedule.",
    printcolumn(
        name = "Schedule",
        type_ = "string",
        json_path = ".spec.schedule",
        description = "The cron schedule."
    ),
    printcolumn(
        name = "Type",
        type_ = "string",
        json_path = ".status.type",
        description = "The kind of job created."
    ),
    printcolumn(
        name = "LastScheduleTime",
        type_ = "date",
        json_path = ".status.lastScheduleTime",
        description = "When a job was last scheduled."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "Time since creation."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct AdvancedCronJobSpec {
    /// Five-field cron expression or descriptor (`@daily`, `@every 1h`, ...), optionally prefixed with
    /// `TZ=<zone> ` or `CRON_TZ=<zone> `.
    pub schedule: String,
    /// IANA time zone the schedule is read in (unless the schedule names one); unset, or an unknown zone,
    /// means the controller's local zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// Seconds after a missed start time within which the job may still be started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_deadline_seconds: Option<i64>,
    /// What to do when a run is due while an earlier one is still active: `Allow` (the default; `Replace`
    /// for an ImageListPullJob template), `Forbid` or `Replace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    // The closed enum's own schema: the `Option` form would add `null` to the values.
    #[schemars(with = "ConcurrencyPolicy")]
    pub concurrency_policy: Option<ConcurrencyPolicy>,
    /// Stop scheduling new runs (defaults to `false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<bool>,
    /// Finished successful jobs to keep (defaults to 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub successful_jobs_history_limit: Option<i32>,
    /// Finished failed jobs to keep (defaults to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_jobs_history_limit: Option<i32>,
    /// The job to create; exactly one template should be set.
    pub template: CronJobTemplate,
}

/// The job an AdvancedCronJob creates (v1beta1): the first set of `jobTemplate`,
/// `imageListPullJobTemplate`, `broadcastJobTemplate` is used.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CronJobTemplate {
    /// A batch/v1 Job template (stored schemaless; Kruise's webhook defaults its pod template).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub job_template: Option<JobTemplateSpec>,
    /// A BroadcastJob template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broadcast_job_template: Option<BroadcastJobTemplateSpec>,
    /// An ImageListPullJob template (v1beta1 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_list_pull_job_template: Option<ImageListPullJobTemplateSpec>,
}

/// The BroadcastJob an AdvancedCronJob creates (v1beta1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BroadcastJobTemplateSpec {
    /// Labels and annotations copied to each BroadcastJob (kept as an opaque object in the schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub metadata: Option<ObjectMeta>,
    /// The BroadcastJob's spec.
    #[serde(default)]
    pub spec: BroadcastJobSpec,
}

/// The ImageListPullJob an AdvancedCronJob creates (v1beta1 only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageListPullJobTemplateSpec {
    /// Labels and annotations copied to each ImageListPullJob (kept as an opaque object in the schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::preserve_unknown_object")]
    pub metadata: Option<ObjectMeta>,
    /// The ImageListPullJob's spec.
    #[serde(default)]
    pub spec: ImageListPullJobSpec,
}

crate::open_enum! {
    #[schema_enum]
    /// How an AdvancedCronJob treats a run that is due while an earlier one is still active.
    pub enum ConcurrencyPolicy {
        /// Run both.
        Allow = "Allow",
        /// Skip the new run.
        Forbid = "Forbid",
        /// Delete the active jobs and start the new one.
        Replace = "Replace",
    }
}

/// What the AdvancedCronJob controller observed (identical in both versions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdvancedCronJobStatus {
    /// The kind of job the template creates.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<TemplateKind>,
    /// The jobs still running.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub active: Vec<ObjectReference>,
    /// The latest `apps.kruise.io/scheduled-at` of the jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_schedule_time: Option<Time>,
}

crate::open_enum! {
    /// The kind of job an AdvancedCronJob creates.
    pub enum TemplateKind {
        /// A batch/v1 Job (`jobTemplate`).
        Job = "Job",
        /// A BroadcastJob (`broadcastJobTemplate`).
        BroadcastJob = "BroadcastJob",
        /// An ImageListPullJob (`imageListPullJobTemplate`, v1beta1).
        ImageListPullJob = "ImageListPullJob",
    }
}
