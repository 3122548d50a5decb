//! AdvancedCronJob decisions (upstream `pkg/controller/advancedcronjob`): from the AdvancedCronJob, its children
//! and `now`, the status to write, the finished children to delete, whether and what to run, and when to look
//! again.
//!
//! One reconcile is [`plan`]. It follows upstream's order: status (type, active children, last schedule
//! time from the children's `apps.kruise.io/scheduled-at`), history cleanup, `paused`, the schedule (with
//! `spec.timeZone`), the most recent missed run (bounded by `startingDeadlineSeconds`), the concurrency
//! policy, and the child to create. Unlike upstream it does not give up after 100 missed runs: it finds
//! the most recent one directly and reports how many there were (see README, Deviations).
//!
//! Go's `time.Local` (the controller process's zone) is [`PlanOptions::local_zone`]. It matters for
//! schedules without a zone: upstream computes their runs in the zone of the time it starts from, which is
//! the controller's zone for the creation time, or the zone written in the last child's `scheduled-at`.
//!
//! ```
//! use k8s_openapi::jiff::Timestamp;
//! use kruise_api::apps::v1beta1::AdvancedCronJob;
//! use kruise_schedule::advanced_cron_job::{plan, Action, PlanOptions};
//!
//! let acj: AdvancedCronJob = serde_saphyr::from_str(r#"
//! apiVersion: apps.kruise.io/v1beta1
//! kind: AdvancedCronJob
//! metadata: {name: nightly, namespace: default, uid: u-1, creationTimestamp: "2024-05-01T00:00:00Z"}
//! spec:
//!   schedule: "0 2 * * *"
//!   timeZone: Asia/Shanghai
//!   template:
//!     jobTemplate: {spec: {template: {spec: {containers: [{name: main, image: busybox}]}}}}
//! "#).unwrap();
//! let now: Timestamp = "2024-05-03T18:30:00Z".parse().unwrap();
//! let plan = plan(&acj, &[], now, &PlanOptions::default());
//! let Action::Run(run) = &plan.action else { panic!("{:?}", plan.action) };
//! // 02:00 in Shanghai on May 3rd was 18:00 UTC on May 2nd; the run of May 4th (18:00Z May 3rd) is also missed.
//! assert_eq!(run.scheduled.to_rfc3339(), "2024-05-03T18:00:00+00:00");
//! assert_eq!(run.missed, 3);
//! assert_eq!(run.child.name(), "nightly-1714759200");
//! assert_eq!(plan.requeue_after, Some(std::time::Duration::from_secs(23 * 3600 + 30 * 60)));
//! ```

mod child;
mod history;
mod new_child;
mod scheduled_at;

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kruise_api::apps::{v1alpha1, v1beta1};

pub use child::{Child, ChildState};
pub use new_child::NewChild;

use crate::cron::{ParseError, Schedule, UnknownTimeZone, Zone};
use v1beta1::{AdvancedCronJob, AdvancedCronJobStatus, ConcurrencyPolicy, TemplateKind};

/// An AdvancedCronJob in either API version (v1alpha1 is converted to the v1beta1 hub).
#[derive(Clone, Copy, Debug)]
pub enum CronJobRef<'a> {
    /// A v1alpha1 object (Kruise up to v1.8).
    V1alpha1(&'a v1alpha1::AdvancedCronJob),
    /// A v1beta1 object (Kruise v1.9).
    V1beta1(&'a v1beta1::AdvancedCronJob),
}

impl<'a> From<&'a v1alpha1::AdvancedCronJob> for CronJobRef<'a> {
    fn from(acj: &'a v1alpha1::AdvancedCronJob) -> Self {
        CronJobRef::V1alpha1(acj)
    }
}

impl<'a> From<&'a v1beta1::AdvancedCronJob> for CronJobRef<'a> {
    fn from(acj: &'a v1beta1::AdvancedCronJob) -> Self {
        CronJobRef::V1beta1(acj)
    }
}

/// Settings of the controller, not of the object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlanOptions {
    /// The controller's time zone (Go's `time.Local`); UTC by default.
    pub local_zone: Zone,
}

/// What one reconcile of an AdvancedCronJob should do.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The status to write (upstream writes it on every reconcile, first).
    pub status: AdvancedCronJobStatus,
    /// Finished children beyond the history limits, to delete with background propagation (failed first,
    /// then successful, oldest first). Upstream ignores failures to delete them.
    pub delete_finished: Vec<ObjectReference>,
    /// The scheduling decision.
    pub action: Action,
    /// The next firing time after `now`, if the schedule parsed and has one.
    pub next_run: Option<DateTime<Utc>>,
    /// Look again after this long (`None`: only on a change of the object or its children).
    pub requeue_after: Option<Duration>,
    /// Things worth an event that upstream only logs or ignores.
    pub warnings: Vec<Warning>,
}

/// The scheduling decision of a reconcile.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Action {
    /// `spec.paused`: nothing is scheduled and there is no requeue.
    Paused,
    /// The schedule does not parse: nothing is scheduled and there is no requeue.
    InvalidSchedule(ParseError),
    /// No run was missed since the last one (or since creation): wait for the next.
    NoRunDue,
    /// The most recent missed run is older than `startingDeadlineSeconds`.
    TooLate(MissedRun),
    /// `concurrencyPolicy: Forbid` and a child is still active.
    Forbidden(MissedRun),
    /// The run is due but the template it needs is not set (upstream crashes on this).
    MissingTemplate(MissedRun),
    /// Run: delete `delete_active` (`Replace`), then create `child`.
    Run(Box<Run>),
}

/// The most recent missed run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MissedRun {
    /// When it was due.
    pub scheduled: DateTime<Utc>,
    /// How many runs were missed since the last one, this one included.
    pub missed: u64,
}

/// A run to start.
#[derive(Clone, Debug, PartialEq)]
pub struct Run {
    /// When it was due (the most recent missed run).
    pub scheduled: DateTime<Utc>,
    /// How many runs were missed since the last one, this one included (only this one is started).
    pub missed: u64,
    /// Active children to delete first, with background propagation (`concurrencyPolicy: Replace`); a
    /// failure to delete one (other than not found) aborts the reconcile.
    pub delete_active: Vec<ObjectReference>,
    /// The child to create.
    pub child: NewChild,
}

/// A condition that deserves an event.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Warning {
    /// `spec.timeZone` does not load; the schedule is read in the controller's zone (upstream logs this).
    #[error("spec.timeZone: {0}; using the controller's time zone")]
    UnknownTimeZone(UnknownTimeZone),
    /// A child's `apps.kruise.io/scheduled-at` is not RFC 3339; it does not count for the last schedule
    /// time (upstream logs this).
    #[error("child {child}: apps.kruise.io/scheduled-at {value:?} is not an RFC 3339 time")]
    UnparsableScheduledAt {
        /// The child's name.
        child: String,
        /// The annotation's value.
        value: String,
    },
    /// More than 100 runs were missed, where upstream gives up and schedules nothing; here the most recent
    /// one runs.
    #[error(
        "{missed} start times were missed; set or decrease .spec.startingDeadlineSeconds or check clock skew"
    )]
    TooManyMissedRuns {
        /// How many.
        missed: u64,
    },
}

impl Warning {
    /// A CamelCase reason for an event.
    #[must_use]
    pub fn reason(&self) -> &'static str {
        match self {
            Warning::UnknownTimeZone(_) => "UnknownTimeZone",
            Warning::UnparsableScheduledAt { .. } => "UnparsableScheduledAt",
            Warning::TooManyMissedRuns { .. } => "TooManyMissedTimes",
        }
    }
}

/// Upstream's limit on missed runs, kept only for the warning.
const UPSTREAM_MISSED_LIMIT: u64 = 100;

/// Plans one reconcile of an AdvancedCronJob: see the module documentation.
///
/// `children` are the objects the AdvancedCronJob controls; only those of its template's kind count, as
/// upstream lists only that kind.
#[must_use]
pub fn plan<'a>(
    acj: impl Into<CronJobRef<'a>>,
    children: &[Child],
    now: Timestamp,
    options: &PlanOptions,
) -> Plan {
    let acj = acj.into();
    let (api_version, hub) = match acj {
        CronJobRef::V1alpha1(alpha) => (
            "apps.kruise.io/v1alpha1",
            std::borrow::Cow::Owned(AdvancedCronJob::from(alpha)),
        ),
        CronJobRef::V1beta1(beta) => ("apps.kruise.io/v1beta1", std::borrow::Cow::Borrowed(beta)),
    };
    let hub: &AdvancedCronJob = &hub;
    let spec = &hub.spec;
    let local = options.local_zone;
    let now = chrono_from(now);
    let mut warnings = Vec::new();

    // 1. Status from the children of the template's kind.
    let kind = template_kind(&spec.template);
    let children: Vec<&Child> = children
        .iter()
        .filter(|child| child.kind() == kind.as_str())
        .collect();
    let mut last_schedule: Option<(DateTime<Utc>, Zone)> = None;
    for child in &children {
        let Some(value) = child
            .scheduled_at
            .as_deref()
            .filter(|value| !value.is_empty())
        else {
            continue;
        };
        match scheduled_at::parse(value, local) {
            Some(parsed) if last_schedule.is_none_or(|(latest, _)| latest < parsed.0) => {
                last_schedule = Some(parsed);
            }
            Some(_) => {}
            None => warnings.push(Warning::UnparsableScheduledAt {
                child: child.name().into(),
                value: value.into(),
            }),
        }
    }
    let active: Vec<&Child> = children
        .iter()
        .copied()
        .filter(|child| child.state == ChildState::Active)
        .collect();
    let status = AdvancedCronJobStatus {
        type_: Some(kind),
        active: active.iter().map(|child| child.reference.clone()).collect(),
        last_schedule_time: last_schedule
            .and_then(|(time, _)| timestamp_from(time))
            .map(Time),
    };

    // 2. History cleanup.
    let of_state = |state| -> Vec<&Child> {
        children
            .iter()
            .copied()
            .filter(|child| child.state == state)
            .collect()
    };
    let delete_finished =
        history::beyond_limit(of_state(ChildState::Failed), spec.failed_jobs_history_limit)
            .into_iter()
            .chain(history::beyond_limit(
                of_state(ChildState::Succeeded),
                spec.successful_jobs_history_limit,
            ))
            .map(|child| child.reference.clone())
            .collect();
    let mut plan = Plan {
        status,
        delete_finished,
        action: Action::Paused,
        next_run: None,
        requeue_after: None,
        warnings,
    };

    // 3. Paused.
    if spec.paused == Some(true) {
        return plan;
    }

    // 4. The schedule, the most recent missed run and the next one.
    let schedule = match Schedule::parse_with_time_zone(&spec.schedule, spec.time_zone.as_deref()) {
        Ok(resolved) => {
            plan.warnings
                .extend(resolved.ignored_time_zone.map(Warning::UnknownTimeZone));
            resolved.schedule
        }
        Err(error) => {
            plan.action = Action::InvalidSchedule(error);
            return plan;
        }
    };
    // Go's zero time stands in for a missing creation timestamp.
    let created = hub
        .metadata
        .creation_timestamp
        .as_ref()
        .map_or_else(go_zero_time, |time| chrono_from(time.0));
    let (mut earliest, mut chain_zone) = last_schedule.unwrap_or((created, local));
    let deadline_seconds = spec.starting_deadline_seconds;
    if let Some(seconds) = deadline_seconds
        && let Some(scheduling_deadline) = now.checked_add_signed(go_seconds(-1, seconds))
        && scheduling_deadline > earliest
    {
        (earliest, chain_zone) = (scheduling_deadline, local);
    }
    let missed = if earliest > now {
        None
    } else {
        let runs = schedule.missed_runs(earliest, now, chain_zone);
        runs.most_recent.map(|scheduled| MissedRun {
            scheduled,
            missed: runs.count,
        })
    };
    plan.next_run = schedule.next_after(now, local);
    plan.requeue_after = plan
        .next_run
        .and_then(|next| (next - now).to_std().ok())
        .filter(|after| !after.is_zero());

    // 5. Due, and not too late?
    let Some(missed) = missed else {
        plan.action = Action::NoRunDue;
        return plan;
    };
    if missed.missed > UPSTREAM_MISSED_LIMIT {
        plan.warnings.push(Warning::TooManyMissedRuns {
            missed: missed.missed,
        });
    }
    if let Some(seconds) = deadline_seconds
        && missed
            .scheduled
            .checked_add_signed(go_seconds(1, seconds))
            .is_some_and(|last_start| last_start < now)
    {
        plan.action = Action::TooLate(missed);
        return plan;
    }

    // 6. Concurrency.
    let policy = spec.concurrency_policy.as_ref();
    if policy == Some(&ConcurrencyPolicy::Forbid) && !active.is_empty() {
        plan.action = Action::Forbidden(missed);
        return plan;
    }
    let delete_active = if policy == Some(&ConcurrencyPolicy::Replace) {
        plan.status.active.clone()
    } else {
        Vec::new()
    };

    // 7. The child.
    let parent = new_child::Parent {
        name: hub.metadata.name.as_deref().unwrap_or_default(),
        namespace: hub.metadata.namespace.as_deref(),
        uid: hub.metadata.uid.as_deref().unwrap_or_default(),
        api_version,
    };
    plan.action = match new_child::build(&spec.template, &parent, missed.scheduled, chain_zone) {
        Some(child) => Action::Run(Box::new(Run {
            scheduled: missed.scheduled,
            missed: missed.missed,
            delete_active,
            child,
        })),
        None => Action::MissingTemplate(missed),
    };
    plan
}

/// Upstream's choice of template: `jobTemplate`, else `imageListPullJobTemplate`, else BroadcastJob (even
/// when `broadcastJobTemplate` is not set either).
fn template_kind(template: &v1beta1::CronJobTemplate) -> TemplateKind {
    if template.job_template.is_some() {
        TemplateKind::Job
    } else if template.image_list_pull_job_template.is_some() {
        TemplateKind::ImageListPullJob
    } else {
        TemplateKind::BroadcastJob
    }
}

/// Go's `sign * time.Second * time.Duration(seconds)`, which wraps on overflow.
fn go_seconds(sign: i64, seconds: i64) -> TimeDelta {
    TimeDelta::nanoseconds((sign * 1_000_000_000).wrapping_mul(seconds))
}

/// Go's zero `time.Time`: 0001-01-01T00:00:00Z.
fn go_zero_time() -> DateTime<Utc> {
    DateTime::from_timestamp(-62_135_596_800, 0).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

fn chrono_from(timestamp: Timestamp) -> DateTime<Utc> {
    // jiff gives the fraction of a time before 1970 the sign of the seconds; go through nanoseconds.
    let nanos = timestamp.as_nanosecond();
    let seconds = i64::try_from(nanos.div_euclid(1_000_000_000)).unwrap_or_default();
    let fraction = u32::try_from(nanos.rem_euclid(1_000_000_000)).unwrap_or_default();
    DateTime::from_timestamp(seconds, fraction).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

fn timestamp_from(time: DateTime<Utc>) -> Option<Timestamp> {
    let nanos =
        i128::from(time.timestamp()) * 1_000_000_000 + i128::from(time.timestamp_subsec_nanos());
    Timestamp::from_nanosecond(nanos).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_convert_both_ways() {
        for text in [
            "2024-05-01T00:00:00.25Z",
            "1969-12-31T23:59:58.5Z",
            "0001-01-01T00:00:00Z",
            "9999-12-30T21:59:59.999999999Z",
        ] {
            let timestamp: Timestamp = text.parse().unwrap();
            let chrono = chrono_from(timestamp);
            assert_eq!(chrono, text.parse::<DateTime<Utc>>().unwrap(), "{text}");
            assert_eq!(timestamp_from(chrono), Some(timestamp), "{text}");
        }
        assert_eq!(go_zero_time().to_rfc3339(), "0001-01-01T00:00:00+00:00");
    }
}
