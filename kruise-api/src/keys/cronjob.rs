//! AdvancedCronJob (upstream `pkg/controller/advancedcronjob`).

/// Annotation on a child Job, BroadcastJob or ImageListPullJob: the scheduled time, RFC 3339 in the
/// schedule's time zone.
pub const SCHEDULED_AT_ANNOTATION: &str = "apps.kruise.io/scheduled-at";
