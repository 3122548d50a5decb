//! AdvancedCronJob v1alpha1: v1beta1 without `imageListPullJobTemplate`.

use k8s_openapi::api::batch::v1::JobTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::BroadcastJobSpec;
pub use crate::apps::v1beta1::{AdvancedCronJobStatus, ConcurrencyPolicy, TemplateKind};

/// Creates a Job or BroadcastJob on a cron schedule.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "AdvancedCronJob",
    namespaced,
    status = "AdvancedCronJobStatus",
    shortname = "acj",
    derive = "PartialEq",
    derive = "Default",
    doc = "AdvancedCronJob creates a Job or BroadcastJob on a cron schedule.",
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
    /// What to do when a run is due while an earlier one is still active: `Allow` (the default), `Forbid`
    /// or `Replace`.
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

/// The job an AdvancedCronJob creates (v1alpha1): `jobTemplate` wins over `broadcastJobTemplate`.
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
}

/// The BroadcastJob an AdvancedCronJob creates (v1alpha1).
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
