//! BroadcastJob (upstream `pkg/controller/broadcastjob`).

/// Label on BroadcastJob pods: the job name.
pub const JOB_NAME_LABEL: &str = "broadcastjob-name";

/// Label on BroadcastJob pods: the job UID.
pub const CONTROLLER_UID_LABEL: &str = "broadcastjob-controller-uid";
