//! A parsed schedule and its next firing time.

use chrono::{DateTime, Utc};

use super::civil::DAY;
use super::error::ParseError;
use super::fields::Fields;
use super::zone::Zone;
use super::{fixed, parse, walk};

/// A schedule as robfig/cron v3's `ParseStandard` reads it: five fields or a descriptor, optionally with a
/// `TZ=` / `CRON_TZ=` zone.
///
/// ```
/// use chrono::{DateTime, Utc};
/// use kruise_schedule::cron::{Schedule, Zone};
///
/// let schedule = Schedule::parse("CRON_TZ=Asia/Shanghai 0 10 * * ?")?;
/// let after: DateTime<Utc> = "2022-09-05T09:01:00Z".parse()?;
/// let next = schedule.next_after(after, Zone::UTC).unwrap();
/// assert_eq!(next.to_rfc3339(), "2022-09-06T02:00:00+00:00");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Schedule {
    kind: Kind,
}

/// Where a schedule's wall times are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Location {
    /// No zone prefix (or `TZ=Local`): the zone of the time the next firing time is asked for, which in the
    /// controller is Go's `time.Local`. It is the `local` argument of [`Schedule::next_after`].
    Local,
    /// The zone of a `TZ=` / `CRON_TZ=` prefix.
    Zone(Zone),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    /// Five fields (or a descriptor other than `@every`).
    Spec { fields: Fields, location: Location },
    /// `@every`: a constant delay in whole seconds (at least 1).
    Every { delay: i64 },
}

impl Schedule {
    /// Parses a schedule exactly as `cron.ParseStandard` (robfig/cron v3.0.1) does; see the module
    /// documentation for the grammar.
    ///
    /// # Errors
    /// [`ParseError`] naming the field, position and value that `ParseStandard` would reject, and a
    /// `TZ=`/`CRON_TZ=` prefix without a following space (on which robfig/cron panics).
    pub fn parse(schedule: &str) -> Result<Self, ParseError> {
        parse::parse_standard(schedule).map(|kind| Schedule { kind })
    }

    pub(crate) fn kind(&self) -> Kind {
        self.kind
    }

    /// Where the schedule's wall times are read, or `None` for `@every` (which counts absolute time).
    #[must_use]
    pub fn location(&self) -> Option<Location> {
        match self.kind {
            Kind::Spec { location, .. } => Some(location),
            Kind::Every { .. } => None,
        }
    }

    /// The delay of an `@every` schedule as robfig/cron uses it (whole seconds, at least one).
    #[must_use]
    pub fn every(&self) -> Option<std::time::Duration> {
        match self.kind {
            Kind::Every { delay } => Some(std::time::Duration::from_secs(delay.unsigned_abs())),
            Kind::Spec { .. } => None,
        }
    }

    /// The zone the schedule's wall times are read in, given the controller's zone.
    #[must_use]
    pub fn zone(&self, local: Zone) -> Zone {
        match self.kind {
            Kind::Spec {
                location: Location::Zone(zone),
                ..
            } => zone,
            _ => local,
        }
    }

    /// The first firing time strictly after `after`, as robfig/cron's `Next` computes it; `local` is the
    /// zone for a schedule without a zone prefix (Go's `time.Local` in the controller).
    ///
    /// `None` is robfig's zero time: no firing time before the end of the year five years after `after` (in
    /// the schedule's zone), for example for `0 0 30 2 *`.
    #[must_use]
    pub fn next_after(&self, after: DateTime<Utc>, local: Zone) -> Option<DateTime<Utc>> {
        self.next_after_second(after.timestamp(), local)
            .and_then(|next| DateTime::from_timestamp(next, 0))
    }

    /// The firing times after `after`, in order, until there is no next one.
    pub fn iter_after(
        &self,
        after: DateTime<Utc>,
        local: Zone,
    ) -> impl Iterator<Item = DateTime<Utc>> + use<> {
        let schedule = *self;
        std::iter::successors(schedule.next_after(after, local), move |&previous| {
            schedule.next_after(previous, local)
        })
    }

    /// [`Self::next_after`] on Unix seconds: `after` is the whole second at or before the time asked about
    /// (the search only looks at whole seconds).
    pub(crate) fn next_after_second(&self, after: i64, local: Zone) -> Option<i64> {
        match self.kind {
            Kind::Every { delay } => after.checked_add(delay),
            Kind::Spec { fields, .. } => next_spec(&fields, self.zone(local), after),
        }
    }
}

/// The next firing time of five fields in a zone: by arithmetic when the zone's offset cannot change anything
/// the search looks at, else by robfig's walk.
pub(crate) fn next_spec(fields: &Fields, zone: Zone, after: i64) -> Option<i64> {
    if fields.never() {
        return None;
    }
    let start = after.checked_add(1)?;
    let zone_offset = zone.offset_at(start);
    if zone_offset % 60 == 0 {
        let offset = i64::from(zone_offset);
        let start_wall = start + offset;
        let last_year = super::civil::Civil::from_wall(start_wall).year + 5;
        let found = fixed::next_at_or_after(fields, start_wall, last_year);
        // Everything the walk would look at lies between the start of the unit it resets to (at most a month
        // back) and the answer (or the search limit), each widened by a day for the wall-times-read-as-UTC
        // that Go's `time.Date` looks up.
        let reset = reset_wall(fields, start_wall) - offset;
        let end = match found {
            Some(wall) => wall - offset,
            None => super::civil::wall_from_fields(last_year + 1, 1, 1, 0, 0, 0) - offset,
        };
        if zone.constant_over(reset - DAY, end + DAY, zone_offset) {
            return found.map(|wall| wall - offset);
        }
    }
    walk::next_after(fields, zone, after)
}

/// The wall time the walk resets to first: the start of the coarsest field that does not match at `start`.
fn reset_wall(fields: &Fields, start: i64) -> i64 {
    let now = super::civil::Civil::from_wall(start);
    let wall = |day: u32, hour: u32, minute: u32| {
        super::civil::wall_from_fields(
            now.year,
            i64::from(now.month),
            i64::from(day),
            i64::from(hour),
            i64::from(minute),
            0,
        )
    };
    if !fields.month_matches(now.month) {
        wall(1, 0, 0)
    } else if !fields.day_matches(now.day, now.weekday) {
        wall(now.day, 0, 0)
    } else if fields.hour >> now.hour & 1 == 0 {
        wall(now.day, now.hour, 0)
    } else {
        wall(now.day, now.hour, now.minute)
    }
}
