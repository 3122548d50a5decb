//! BroadcastJob (spec 2.4, 3f).

/// Label on BroadcastJob pods: the job name.
pub const JOB_NAME_LABEL: &str = "broadcastjob-name";

/// Label on BroadcastJob pods: the job UID.
pub const CONTROLLER_UID_LABEL: &str = "broadcastjob-controller-uid";
