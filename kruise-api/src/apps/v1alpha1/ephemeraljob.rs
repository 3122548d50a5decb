//! EphemeralJob (v1alpha1 only): adds ephemeral containers (for debugging or one-off tasks) to
//! matching running pods and tracks them like a job.

use k8s_openapi::api::core::v1::EphemeralContainer;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::omitempty::is_zero;

/// Injects ephemeral containers into matching pods and reports how they ran.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "apps.kruise.io",
    version = "v1alpha1",
    kind = "EphemeralJob",
    namespaced,
    status = "EphemeralJobStatus",
    shortname = "ejob",
    derive = "PartialEq",
    derive = "Default",
    doc = "EphemeralJob adds ephemeral containers to matching pods and tracks them like a job.",
    printcolumn(
        name = "STATUS",
        type_ = "string",
        json_path = ".status.phase",
        description = "The job's phase."
    ),
    printcolumn(
        name = "MATCH",
        type_ = "integer",
        json_path = ".status.match",
        description = "Pods the job matched."
    ),
    printcolumn(
        name = "SUCCEED",
        type_ = "integer",
        json_path = ".status.succeeded",
        description = "Ephemeral containers that succeeded."
    ),
    printcolumn(
        name = "FAILED",
        type_ = "integer",
        json_path = ".status.failed",
        description = "Ephemeral containers that failed."
    ),
    printcolumn(
        name = "RUNNING",
        type_ = "integer",
        json_path = ".status.running",
        description = "Ephemeral containers running."
    ),
    printcolumn(
        name = "WAITING",
        type_ = "integer",
        json_path = ".status.waiting",
        description = "Ephemeral containers waiting to start."
    ),
    printcolumn(
        name = "AGE",
        type_ = "date",
        json_path = ".metadata.creationTimestamp",
        description = "Time since creation."
    )
)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralJobSpec {
    /// Which pods receive the ephemeral containers.
    pub selector: LabelSelector,
    /// How many of the matching pods receive them (all when unset or larger than the match).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// How many pods may run the ephemeral containers at the same time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<i32>,
    /// The ephemeral containers to add.
    pub template: EphemeralContainerTemplateSpec,
    /// Stop adding ephemeral containers to more pods.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub paused: bool,
    /// Seconds after the start time after which the job is stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<i64>,
    /// Seconds after finishing after which the job is deleted (the controller uses 1800 when unset; 0
    /// deletes it right away).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_seconds_after_finished: Option<i32>,
}

/// The ephemeral containers an EphemeralJob adds to each pod.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralContainerTemplateSpec {
    /// The containers (stored schemaless, like upstream).
    #[schemars(schema_with = "crate::schema::preserve_unknown_object_list")]
    pub ephemeral_containers: Vec<EphemeralContainer>,
}

/// What the EphemeralJob controller observed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralJobStatus {
    /// The latest observations.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub conditions: Vec<EphemeralJobCondition>,
    /// When the controller started the job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
    /// When the job finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_time: Option<Time>,
    /// The job's phase (always written, empty until the controller sets it).
    #[serde(default)]
    pub phase: EphemeralJobPhase,
    /// Pods the job matched.
    #[serde(default, rename = "match")]
    pub matches: i32,
    /// Pods whose ephemeral containers are running.
    #[serde(default)]
    pub running: i32,
    /// Pods whose ephemeral containers succeeded.
    #[serde(default)]
    pub succeeded: i32,
    /// Pods whose ephemeral containers wait to start.
    #[serde(default)]
    pub waiting: i32,
    /// Pods whose ephemeral containers failed.
    #[serde(default)]
    pub failed: i32,
}

/// One observation about an EphemeralJob.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EphemeralJobCondition {
    /// What the condition is about.
    #[serde(rename = "type")]
    pub type_: EphemeralJobConditionType,
    /// `True`, `False` or `Unknown`.
    pub status: String,
    /// When the condition was last checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_probe_time: Option<Time>,
    /// When the status last changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
    /// Machine-readable reason of the last change.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reason: String,
    /// Human-readable details.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub message: String,
}

crate::open_enum! {
    /// The type of an EphemeralJob condition.
    pub enum EphemeralJobConditionType {
        /// The ephemeral containers finished successfully in every target pod.
        JobSucceeded = "JobSucceeded",
        /// Some ephemeral containers failed.
        JobFailed = "JobFailed",
        /// Some ephemeral containers could not run.
        JobError = "JobError",
        /// The controller initialised the job.
        Initialized = "Initialized",
        /// The selector matches no pod.
        MatchedEmpty = "MatchedEmpty",
    }
}

impl Default for EphemeralJobConditionType {
    /// Go's zero value: the empty string.
    fn default() -> Self {
        Self::Unknown(String::new())
    }
}

crate::open_enum! {
    /// The phase of an EphemeralJob.
    pub enum EphemeralJobPhase {
        /// Every ephemeral container succeeded.
        Succeeded = "Succeeded",
        /// Some ephemeral container failed.
        Failed = "Failed",
        /// Ephemeral containers are created but not running yet.
        Waiting = "Waiting",
        /// Ephemeral containers are running.
        Running = "Running",
        /// The job is paused.
        Paused = "Paused",
        /// Some ephemeral container could not be created or run.
        Error = "Error",
        /// The controller cannot tell.
        PhaseUnknown = "Unknown",
    }
}

impl Default for EphemeralJobPhase {
    /// Go's zero value: the empty string (no phase yet).
    fn default() -> Self {
        Self::Unknown(String::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::CustomResourceExt;

    #[test]
    fn crd_columns_and_schemaless_containers() {
        let crd = EphemeralJob::crd();
        let version = &crd.spec.versions[0];
        let columns: Vec<_> = version
            .additional_printer_columns
            .as_ref()
            .unwrap()
            .iter()
            .map(|c| (c.name.as_str(), c.json_path.as_str()))
            .collect();
        assert_eq!(
            columns,
            [
                ("STATUS", ".status.phase"),
                ("MATCH", ".status.match"),
                ("SUCCEED", ".status.succeeded"),
                ("FAILED", ".status.failed"),
                ("RUNNING", ".status.running"),
                ("WAITING", ".status.waiting"),
                ("AGE", ".metadata.creationTimestamp")
            ]
        );
        let schema =
            serde_json::to_value(&version.schema.as_ref().unwrap().open_api_v3_schema).unwrap();
        let template = &schema["properties"]["spec"]["properties"]["template"];
        assert_eq!(
            template["properties"]["ephemeralContainers"]["items"]["x-kubernetes-preserve-unknown-fields"],
            true
        );
        assert_eq!(
            template["required"],
            serde_json::json!(["ephemeralContainers"])
        );
    }

    #[test]
    fn status_counters_and_phase_are_always_written() {
        let json = serde_json::to_value(EphemeralJobStatus::default()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "phase": "", "match": 0, "running": 0, "succeeded": 0, "waiting": 0, "failed": 0
            })
        );
        assert_eq!(
            EphemeralJobPhase::from("Unknown"),
            EphemeralJobPhase::PhaseUnknown
        );
    }
}
