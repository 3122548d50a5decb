//! AdvancedCronJob (spec 2.4, 3e).

/// Annotation on a child Job, BroadcastJob or ImageListPullJob: the scheduled time, RFC 3339 in the
/// schedule's time zone.
pub const SCHEDULED_AT_ANNOTATION: &str = "apps.kruise.io/scheduled-at";
