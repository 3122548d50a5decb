//! `spec.timeZone` of an AdvancedCronJob, applied as the Kruise controller's `formatSchedule` does.

use super::error::ParseError;
use super::schedule::Schedule;
use super::zone::{UnknownTimeZone, Zone};

/// A schedule read together with an AdvancedCronJob's `spec.timeZone`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedSchedule {
    /// The schedule.
    pub schedule: Schedule,
    /// `spec.timeZone` named a zone that does not load. Upstream only logs this and reads the schedule in
    /// the controller's zone; surface it as a warning event.
    pub ignored_time_zone: Option<UnknownTimeZone>,
}

impl Schedule {
    /// Parses an AdvancedCronJob's `spec.schedule` with its `spec.timeZone`, as upstream's `formatSchedule`
    /// does before `ParseStandard`:
    ///
    /// * a schedule that contains `TZ` anywhere is used as it is (`spec.timeZone` is ignored);
    /// * else a `spec.timeZone` that loads (see [`Zone::load`]; `""` is UTC, `Local` the controller's zone)
    ///   is prefixed as `TZ=<timeZone> `;
    /// * else the schedule is used as it is, and [`ResolvedSchedule::ignored_time_zone`] says why.
    ///
    /// ```
    /// use kruise_schedule::cron::{Location, Schedule, Zone};
    ///
    /// let resolved = Schedule::parse_with_time_zone("0 10 * * *", Some("Asia/Shanghai"))?;
    /// assert_eq!(resolved.schedule.location(), Some(Location::Zone(chrono_tz::Asia::Shanghai.into())));
    /// let resolved = Schedule::parse_with_time_zone("0 10 * * *", Some("Mars/Olympus"))?;
    /// assert_eq!(resolved.schedule.location(), Some(Location::Local));
    /// assert!(resolved.ignored_time_zone.is_some());
    /// # Ok::<(), kruise_schedule::cron::ParseError>(())
    /// ```
    ///
    /// # Errors
    /// [`ParseError`] when the resulting schedule does not parse.
    pub fn parse_with_time_zone(
        schedule: &str,
        time_zone: Option<&str>,
    ) -> Result<ResolvedSchedule, ParseError> {
        let (text, ignored_time_zone) = match time_zone {
            Some(zone) if !schedule.contains("TZ") => match Zone::load(zone, Zone::UTC) {
                Ok(_) => (format!("TZ={zone} {schedule}"), None),
                Err(unknown) => (schedule.to_owned(), Some(unknown)),
            },
            _ => (schedule.to_owned(), None),
        };
        Ok(ResolvedSchedule {
            schedule: Schedule::parse(&text)?,
            ignored_time_zone,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cron::Location;

    #[test]
    fn format_schedule_rules() {
        let shanghai = Location::Zone(chrono_tz::Asia::Shanghai.into());
        let cases: &[(&str, Option<&str>, Option<Location>, bool)] = &[
            ("0 10 * * ?", Some("Asia/Shanghai"), Some(shanghai), false),
            ("0 10 * * ?", None, Some(Location::Local), false),
            // `TZ` anywhere bypasses spec.timeZone.
            (
                "TZ=Asia/Shanghai 0 10 * * ?",
                Some("Europe/Berlin"),
                Some(shanghai),
                false,
            ),
            (
                "CRON_TZ=Asia/Shanghai 0 10 * * ?",
                Some("Bad/Zone"),
                Some(shanghai),
                false,
            ),
            ("0 10 * * ?", Some("Bad/Zone"), Some(Location::Local), true),
            (
                "0 10 * * ?",
                Some(""),
                Some(Location::Zone(Zone::UTC)),
                false,
            ),
            ("0 10 * * ?", Some("Local"), Some(Location::Local), false),
            ("@every 1h", Some("Asia/Shanghai"), None, false),
            ("@daily", Some("Asia/Shanghai"), Some(shanghai), false),
        ];
        for &(schedule, time_zone, location, warned) in cases {
            let resolved = Schedule::parse_with_time_zone(schedule, time_zone).unwrap();
            assert_eq!(
                resolved.schedule.location(),
                location,
                "{schedule} {time_zone:?}"
            );
            assert_eq!(
                resolved.ignored_time_zone.is_some(),
                warned,
                "{schedule} {time_zone:?}"
            );
        }
        // A schedule that mentions TZ but is not a prefix is used as it is, and fails like upstream.
        assert!(Schedule::parse_with_time_zone("0 10 * * * TZ", Some("UTC")).is_err());
    }
}
