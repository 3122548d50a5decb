//! Cron schedules with the semantics of robfig/cron v3.0.1 `ParseStandard`, the library the AdvancedCronJob
//! controller uses: the same schedules accepted and rejected, the same firing instants, daylight saving
//! included.
//!
//! # Grammar
//!
//! * Five fields separated by white space: minute (0–59), hour (0–23), day of month (1–31), month (1–12 or
//!   `jan`–`dec`), day of week (0–6 or `sun`–`sat`; 7 is rejected). Names are case-insensitive.
//! * In a field: `*` or `?` (every value), a number or name, a range `lo-hi`, any of these with a step
//!   `/s` (`N/s` means `N-max/s`), and comma-separated lists of all of them.
//! * Day of month and day of week: if either field has `*`/`?` (without a step above 1), a day must match
//!   both; otherwise (both restricted) it must match either.
//! * Or a descriptor: `@yearly`/`@annually`, `@monthly`, `@weekly`, `@daily`/`@midnight`, `@hourly`, or
//!   `@every <Go duration>` (`1h30m`, `1.5h`, `300ms`, ...; rounded down to whole seconds, at least one; a
//!   negative duration means one second, as upstream).
//! * Optionally prefixed by `TZ=<zone> ` or `CRON_TZ=<zone> `; without it the schedule is read in the
//!   controller's zone (Go's `time.Local`), which here is an argument.
//!
//! # Firing times
//!
//! [`Schedule::next_after`] is robfig's `Next`: the first firing time strictly after the given instant, or
//! `None` when there is none before the end of the fifth year after it. Wall times that do not exist
//! (spring forward) never fire; wall times that happen twice (fall back) fire twice. [`Schedule::missed_runs`]
//! counts the firing times between two instants and finds the most recent one without visiting them all.
//!
//! ```
//! use chrono::{DateTime, Utc};
//! use kruise_schedule::cron::{Schedule, Zone};
//!
//! // 02:30 does not exist in New York on 2023-03-12, and 01:30 happens twice on 2023-11-05.
//! let schedule = Schedule::parse("TZ=America/New_York 30 1,2 * * *")?;
//! let after: DateTime<Utc> = "2023-03-11T12:00:00Z".parse()?;
//! let times: Vec<String> = schedule
//!     .iter_after(after, Zone::UTC)
//!     .take(3)
//!     .map(|time| time.to_rfc3339())
//!     .collect();
//! // 01:30 EST, then 01:30 EDT the next day (02:30 was skipped), then 02:30 EDT.
//! assert_eq!(times, [
//!     "2023-03-12T06:30:00+00:00",
//!     "2023-03-13T05:30:00+00:00",
//!     "2023-03-13T06:30:00+00:00",
//! ]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Time zones
//!
//! Zone names are resolved like Go's `time.LoadLocation` ([`Zone::load`]): `""` and `UTC` are UTC, `Local`
//! is the controller's zone, anything else must be an IANA name in the tz database bundled with `chrono-tz`
//! (case-sensitive; backward-compatible links such as `US/Eastern` included).

mod civil;
mod duration;
mod error;
mod fields;
mod fixed;
mod missed;
mod parse;
mod schedule;
mod time_zone;
mod walk;
mod zone;

pub use duration::{DurationError, parse_go_duration};
pub use error::{Field, FieldProblem, ParseError};
pub use missed::MissedRuns;
pub use schedule::{Location, Schedule};
pub use time_zone::ResolvedSchedule;
pub use zone::{UnknownTimeZone, Zone};
#[cfg(test)]
mod equivalence;
