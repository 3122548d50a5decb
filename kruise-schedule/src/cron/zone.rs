//! Time zones as Go's `time` package sees them: names resolved like `time.LoadLocation`, offsets looked up
//! per instant, and wall times turned into instants the way `time.Date` does it.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, FixedOffset, Offset, TimeZone};
use chrono_tz::Tz;

use super::civil::{Civil, DAY};

/// A time zone: an IANA zone from the tz database bundled with `chrono-tz`, or a fixed offset.
///
/// Go's `time.Local` (the zone of the process running the controller) has no global equivalent here: it is
/// always passed in as a `Zone`, [`Zone::UTC`] unless you say otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Zone {
    /// An IANA time zone such as `Europe/Berlin`.
    Named(Tz),
    /// A fixed offset from UTC (Go's `time.FixedZone`).
    Fixed(FixedOffset),
}

/// A time zone name that Go's `time.LoadLocation` would not load.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown time zone {name:?}")]
pub struct UnknownTimeZone {
    /// The name as given.
    pub name: String,
}

impl Zone {
    /// Coordinated Universal Time.
    pub const UTC: Zone = Zone::Named(Tz::UTC);

    /// Resolves a name like Go's `time.LoadLocation`: `""` and `"UTC"` are UTC, `"Local"` is `local` (the
    /// controller's zone), anything else must be an IANA name known to `chrono-tz` (case-sensitive, links such
    /// as `US/Eastern` included).
    ///
    /// ```
    /// use kruise_schedule::cron::Zone;
    ///
    /// assert_eq!(Zone::load("", Zone::UTC).unwrap(), Zone::UTC);
    /// assert_eq!(Zone::load("Local", chrono_tz::Asia::Tokyo.into()).unwrap(), chrono_tz::Asia::Tokyo.into());
    /// assert!(Zone::load("europe/berlin", Zone::UTC).is_err());
    /// ```
    ///
    /// # Errors
    /// [`UnknownTimeZone`] for any other name (including the `posix/...` and `right/...` trees that some
    /// systems ship, which Go would read from disk there).
    pub fn load(name: &str, local: Zone) -> Result<Zone, UnknownTimeZone> {
        match name {
            "" | "UTC" => Ok(Zone::UTC),
            "Local" => Ok(local),
            _ => Tz::from_str(name)
                .map(Zone::Named)
                .map_err(|_| UnknownTimeZone { name: name.into() }),
        }
    }

    /// The offset from UTC, in seconds east, in effect at an instant (Unix seconds).
    pub(crate) fn offset_at(self, unix: i64) -> i32 {
        match self {
            Zone::Fixed(offset) => offset.local_minus_utc(),
            Zone::Named(tz) => {
                // Outside chrono's range the zone's first or last offset applies anyway.
                let clamped = unix.clamp(MIN_LOOKUP, MAX_LOOKUP);
                DateTime::from_timestamp(clamped, 0).map_or(0, |instant| {
                    tz.offset_from_utc_datetime(&instant.naive_utc())
                        .fix()
                        .local_minus_utc()
                })
            }
        }
    }

    /// The calendar fields of an instant on this zone's clock.
    pub(crate) fn civil(self, unix: i64) -> Civil {
        Civil::from_wall(unix + i64::from(self.offset_at(unix)))
    }

    /// The instant of a wall time, resolved exactly like Go's `time.Date`: look up the offset in effect at
    /// the wall time read as if it were UTC, subtract it, and if that lands in a period with another offset,
    /// use the offset in effect there instead. A wall time that does not exist (spring forward) or exists
    /// twice (fall back) therefore resolves to whichever side this rule picks, which depends on the sign of
    /// the zone's offset.
    pub(crate) fn resolve(self, wall: i64) -> i64 {
        let first = self.offset_at(wall);
        if first == 0 {
            return wall;
        }
        wall - i64::from(self.offset_at(wall - i64::from(first)))
    }

    /// Whether the offset is `offset` everywhere in `[from, to]`.
    ///
    /// It samples the offset every [`PROBE_STEP`] seconds and at both ends; this sees every change because
    /// no two offset changes of one zone lie closer together than that (see [`PROBE_STEP`]).
    pub(crate) fn constant_over(self, from: i64, to: i64, offset: i32) -> bool {
        match self {
            Zone::Fixed(fixed) => return fixed.local_minus_utc() == offset,
            Zone::Named(Tz::UTC) => return offset == 0,
            Zone::Named(_) => {}
        }
        let mut at = from;
        loop {
            if self.offset_at(at) != offset {
                return false;
            }
            if at >= to {
                return true;
            }
            at = (at + PROBE_STEP).min(to);
        }
    }
}

/// The largest distance between two samples when looking for offset changes: two days.
///
/// Correctness rests on one property of the tz data: two changes of a zone's UTC offset are always more than
/// this far apart (in the database bundled with `chrono-tz` 0.10, IANA 2025b, the closest pair is 6.9 days
/// apart: America/Cambridge_Bay in 2000). The test `offset_changes_are_far_apart` checks it for the zones
/// most used with schedules.
pub(crate) const PROBE_STEP: i64 = 2 * DAY;

/// The instants chrono can represent (±262,000 years), with room to spare.
const MIN_LOOKUP: i64 = -8_000_000_000_000;
const MAX_LOOKUP: i64 = 8_000_000_000_000;

impl From<Tz> for Zone {
    fn from(tz: Tz) -> Self {
        Zone::Named(tz)
    }
}

impl From<FixedOffset> for Zone {
    fn from(offset: FixedOffset) -> Self {
        Zone::Fixed(offset)
    }
}

impl Default for Zone {
    /// UTC.
    fn default() -> Self {
        Zone::UTC
    }
}

impl fmt::Display for Zone {
    /// The IANA name, or the offset as `+hh:mm`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Zone::Named(tz) => f.write_str(tz.name()),
            Zone::Fixed(offset) => write!(f, "{offset}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cron::civil::wall_from_fields;

    fn utc(year: i64, month: i64, day: i64, hour: i64, minute: i64) -> i64 {
        wall_from_fields(year, month, day, hour, minute, 0)
    }

    #[test]
    fn names_resolve_like_load_location() {
        let tokyo = Zone::Named(chrono_tz::Asia::Tokyo);
        assert_eq!(Zone::load("UTC", tokyo), Ok(Zone::UTC));
        assert_eq!(Zone::load("", tokyo), Ok(Zone::UTC));
        assert_eq!(Zone::load("Local", tokyo), Ok(tokyo));
        assert_eq!(
            Zone::load("US/Eastern", tokyo),
            Ok(Zone::Named(chrono_tz::US::Eastern))
        );
        for bad in [
            "utc",
            "local",
            "Asia/tokyo",
            "../etc/passwd",
            "/UTC",
            " UTC",
            "Mars/Base",
        ] {
            assert_eq!(
                Zone::load(bad, tokyo),
                Err(UnknownTimeZone { name: bad.into() }),
                "{bad}"
            );
        }
    }

    /// Go's `time.Date` answers for wall times that do not exist or exist twice.
    #[test]
    fn resolve_matches_go_time_date() {
        let new_york = Zone::Named(chrono_tz::America::New_York);
        let london = Zone::Named(chrono_tz::Europe::London);
        let berlin = Zone::Named(chrono_tz::Europe::Berlin);
        // 2023-03-12 02:30 does not exist in New York: Go gives 01:30 EST (06:30Z), before the gap.
        assert_eq!(
            new_york.resolve(utc(2023, 3, 12, 2, 30)),
            utc(2023, 3, 12, 6, 30)
        );
        // 2023-03-26 01:30 does not exist in London: Go gives 02:30 BST (01:30Z), after the gap.
        assert_eq!(
            london.resolve(utc(2023, 3, 26, 1, 30)),
            utc(2023, 3, 26, 1, 30)
        );
        // 2023-11-05 01:30 happens twice in New York: Go picks the first (EDT, 05:30Z).
        assert_eq!(
            new_york.resolve(utc(2023, 11, 5, 1, 30)),
            utc(2023, 11, 5, 5, 30)
        );
        // 2023-10-29 02:30 happens twice in Berlin: Go picks the second (CET, 01:30Z).
        assert_eq!(
            berlin.resolve(utc(2023, 10, 29, 2, 30)),
            utc(2023, 10, 29, 1, 30)
        );
        // 2021-10-31 01:30 happens twice in London: offset 0 at the wall time read as UTC, so the wall time
        // is taken as is (GMT, the second).
        assert_eq!(
            london.resolve(utc(2021, 10, 31, 1, 30)),
            utc(2021, 10, 31, 1, 30)
        );
    }

    #[test]
    fn offsets_and_constancy() {
        let berlin = Zone::Named(chrono_tz::Europe::Berlin);
        assert_eq!(berlin.offset_at(utc(2023, 7, 1, 0, 0)), 7200);
        assert_eq!(berlin.offset_at(utc(2023, 1, 1, 0, 0)), 3600);
        assert!(berlin.constant_over(utc(2023, 4, 1, 0, 0), utc(2023, 10, 1, 0, 0), 7200));
        assert!(!berlin.constant_over(utc(2023, 3, 1, 0, 0), utc(2023, 10, 1, 0, 0), 3600));
        // Far outside chrono's range the lookup still answers.
        assert_eq!(Zone::UTC.offset_at(i64::MAX), 0);
        assert_eq!(berlin.offset_at(i64::MIN), berlin.offset_at(MIN_LOOKUP));
    }

    /// The property [`PROBE_STEP`] relies on, for the zones schedules use most, sampled every three hours
    /// from 1900 to 2100.
    #[test]
    fn offset_changes_are_far_apart() {
        let zones = [
            chrono_tz::America::New_York,
            chrono_tz::America::Sao_Paulo,
            chrono_tz::America::Santiago,
            chrono_tz::Europe::Berlin,
            chrono_tz::Europe::London,
            chrono_tz::Europe::Moscow,
            chrono_tz::Australia::Lord_Howe,
            chrono_tz::Asia::Gaza,
            chrono_tz::Asia::Shanghai,
            chrono_tz::Pacific::Apia,
        ];
        let (from, to) = (utc(1900, 1, 1, 0, 0), utc(2100, 1, 1, 0, 0));
        for tz in zones {
            let zone = Zone::Named(tz);
            let mut last_change = i64::MIN / 2;
            let mut previous = zone.offset_at(from);
            let mut at = from;
            while at < to {
                at += 3 * 3600;
                let offset = zone.offset_at(at);
                if offset != previous {
                    assert!(
                        at - last_change > PROBE_STEP,
                        "{tz}: offset changes {} s apart near {at}",
                        at - last_change
                    );
                    last_change = at;
                    previous = offset;
                }
            }
        }
    }
}
