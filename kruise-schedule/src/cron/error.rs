//! Why a schedule does not parse.

use std::fmt;

use super::duration::DurationError;
use super::zone::UnknownTimeZone;

/// A schedule that robfig/cron v3's `ParseStandard` rejects, and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The schedule is the empty string.
    #[error("empty schedule")]
    Empty,
    /// A `TZ=` or `CRON_TZ=` prefix with no space after it (robfig/cron panics on this).
    #[error("time zone prefix {schedule:?} must be followed by a space and the schedule")]
    TimeZoneWithoutSchedule {
        /// The whole schedule.
        schedule: String,
    },
    /// The zone named in a `TZ=` / `CRON_TZ=` prefix does not load.
    #[error("time zone prefix: {0}")]
    TimeZone(#[from] UnknownTimeZone),
    /// Not exactly five fields.
    #[error(
        "expected exactly 5 fields (minute hour day-of-month month day-of-week), found {found}: {fields:?}"
    )]
    FieldCount {
        /// How many whitespace-separated fields there are.
        found: usize,
        /// The fields.
        fields: Vec<String>,
    },
    /// `@` followed by something other than a known descriptor.
    #[error(
        "unrecognized descriptor {0:?} (expected @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>)"
    )]
    UnknownDescriptor(String),
    /// `@every` with a duration Go's `time.ParseDuration` rejects.
    #[error("@every: {0}")]
    Every(#[source] DurationError),
    /// A field has an invalid range expression.
    #[error("{field} field (field {position}) {expression:?}: {problem}")]
    Field {
        /// Which field.
        field: Field,
        /// 1-based position of the field in the schedule.
        position: usize,
        /// The comma-separated part that is wrong.
        expression: String,
        /// What is wrong with it.
        problem: FieldProblem,
    },
}

/// The five fields of a standard schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// Minute (0–59).
    Minute,
    /// Hour (0–23).
    Hour,
    /// Day of month (1–31).
    DayOfMonth,
    /// Month (1–12 or `jan`–`dec`).
    Month,
    /// Day of week (0–6 or `sun`–`sat`).
    DayOfWeek,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Field::Minute => "minute",
            Field::Hour => "hour",
            Field::DayOfMonth => "day-of-month",
            Field::Month => "month",
            Field::DayOfWeek => "day-of-week",
        })
    }
}

/// What is wrong with one range expression of a field.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FieldProblem {
    /// More than one `-`.
    #[error("too many hyphens")]
    TooManyHyphens,
    /// More than one `/`.
    #[error("too many slashes")]
    TooManySlashes,
    /// Neither a number nor a name of this field.
    #[error("{0:?} is not a number")]
    NotANumber(String),
    /// A number beyond the 64-bit range.
    #[error("{0:?} is out of range")]
    NumberTooLarge(String),
    /// A negative step.
    #[error("negative number {0} not allowed")]
    Negative(i64),
    /// The range starts below the field's minimum.
    #[error("beginning of range ({start}) below minimum ({min})")]
    BelowMinimum {
        /// The start of the range.
        start: u64,
        /// The field's minimum.
        min: u64,
    },
    /// The range ends above the field's maximum.
    #[error("end of range ({end}) above maximum ({max})")]
    AboveMaximum {
        /// The end of the range.
        end: u64,
        /// The field's maximum.
        max: u64,
    },
    /// The range starts after it ends.
    #[error("beginning of range ({start}) beyond end of range ({end})")]
    Reversed {
        /// The start of the range.
        start: u64,
        /// The end of the range.
        end: u64,
    },
    /// A step of 0.
    #[error("step of range should be a positive number")]
    ZeroStep,
}
