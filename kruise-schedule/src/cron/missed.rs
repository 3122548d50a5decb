//! The runs missed since a point in time: how many, and the most recent, without visiting each one.
//!
//! The runs are the chain the controller would walk: `t1 = next(earliest)`, `t2 = next(t1)`, ... up to
//! `now`. Within a stretch where the zone's offset does not change, that chain is exactly the set of wall
//! times that match the fields, so it is counted by calendar arithmetic ([`super::fixed`]). Only the few
//! links whose search could see an offset change (at most a day around each daylight-saving switch) are
//! followed one at a time, with the same search as [`Schedule::next_after`]. The answer is exact: the same
//! count and the same most recent time as walking the whole chain.

use chrono::{DateTime, Utc};

use super::civil::{Civil, DAY};
use super::fields::Fields;
use super::fixed;
use super::schedule::{Kind, Schedule, next_spec};
use super::zone::{PROBE_STEP, Zone};

/// The firing times in `(earliest, now]` of the chain `next(earliest)`, `next(next(earliest))`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MissedRuns {
    /// The last firing time at or before `now`, if any.
    pub most_recent: Option<DateTime<Utc>>,
    /// How many firing times the chain has in `(earliest, now]`.
    pub count: u64,
}

impl Schedule {
    /// The runs missed after `earliest` up to and including `now`: their number and the most recent one,
    /// exactly as walking `next_after` from `earliest` would find them, but without the walk (a year of a
    /// per-minute schedule takes microseconds). `local` is the zone of a schedule without a zone prefix.
    ///
    /// ```
    /// use chrono::{DateTime, Utc};
    /// use kruise_schedule::cron::{Schedule, Zone};
    ///
    /// let schedule = Schedule::parse("*/5 * * * *")?;
    /// let earliest: DateTime<Utc> = "2024-01-01T00:00:00Z".parse()?;
    /// let now: DateTime<Utc> = "2024-01-01T01:02:03Z".parse()?;
    /// let missed = schedule.missed_runs(earliest, now, Zone::UTC);
    /// assert_eq!(missed.count, 12);
    /// assert_eq!(missed.most_recent, Some("2024-01-01T01:00:00Z".parse()?));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn missed_runs(
        &self,
        earliest: DateTime<Utc>,
        now: DateTime<Utc>,
        local: Zone,
    ) -> MissedRuns {
        let (most_recent, count) =
            missed_seconds(self, earliest.timestamp(), now.timestamp(), local);
        MissedRuns {
            most_recent: most_recent.and_then(|second| DateTime::from_timestamp(second, 0)),
            count,
        }
    }
}

/// [`Schedule::missed_runs`] on whole seconds: `earliest` and `now` are the seconds at or before them.
pub(crate) fn missed_seconds(
    schedule: &Schedule,
    earliest: i64,
    now: i64,
    local: Zone,
) -> (Option<i64>, u64) {
    if now <= earliest {
        return (None, 0);
    }
    match schedule.kind() {
        Kind::Every { delay } => {
            let first = earliest.saturating_add(delay);
            if first > now {
                return (None, 0);
            }
            // `delay` is at least 1.
            let count = (now - first) / delay + 1;
            (Some(first + (count - 1) * delay), count.unsigned_abs())
        }
        Kind::Spec { fields, .. } => Chain::new(fields, schedule.zone(local), earliest, now).walk(),
    }
}

/// The offset changes of a zone within a span, found by sampling.
struct Transitions {
    from: i64,
    to: i64,
    /// The first second of each new offset, ascending.
    at: Vec<i64>,
}

impl Transitions {
    fn find(zone: Zone, from: i64, to: i64) -> Self {
        let mut at = Vec::new();
        if matches!(zone, Zone::Named(tz) if tz != chrono_tz::Tz::UTC) {
            let mut previous = (from, zone.offset_at(from));
            while previous.0 < to {
                let probe = (previous.0 + PROBE_STEP).min(to);
                let offset = zone.offset_at(probe);
                if offset != previous.1 {
                    // The change lies in (previous, probe]: bisect for its first second.
                    let (mut same, mut changed) = (previous.0, probe);
                    while changed - same > 1 {
                        let middle = same + (changed - same) / 2;
                        if zone.offset_at(middle) == previous.1 {
                            same = middle;
                        } else {
                            changed = middle;
                        }
                    }
                    at.push(changed);
                }
                previous = (probe, offset);
            }
        }
        Transitions { from, to, at }
    }

    /// The span `[lo, hi)` around `t` in which the offset is constant (clipped to the sampled span).
    fn segment(&self, t: i64) -> (i64, i64) {
        let index = self.at.partition_point(|&change| change <= t);
        let lo = index
            .checked_sub(1)
            .and_then(|previous| self.at.get(previous))
            .map_or(self.from, |&change| change.max(self.from));
        let hi = self
            .at
            .get(index)
            .map_or(self.to + 1, |&change| change.min(self.to + 1));
        (lo, hi)
    }
}

/// One step of the chain.
enum Step {
    /// `count` more runs; the last is `last`.
    Many { count: u64, last: i64 },
    /// The chain ends here: the next run is after `now`.
    Done,
}

struct Chain {
    fields: Fields,
    zone: Zone,
    earliest: i64,
    now: i64,
    transitions: Transitions,
    /// How far from an offset change a link must stay to be counted by arithmetic: 0 when every day fires
    /// (a link then never resets to a day or month), else a day.
    margin: i64,
    /// Leap-day-only schedules can have links longer than the five-year search limit: follow them one by one.
    one_by_one: bool,
}

impl Chain {
    fn new(fields: Fields, zone: Zone, earliest: i64, now: i64) -> Self {
        Chain {
            fields,
            zone,
            earliest,
            now,
            transitions: Transitions::find(zone, earliest - 2 * DAY, now.saturating_add(2 * DAY)),
            margin: if fields.every_day() { 0 } else { DAY },
            one_by_one: fields.leap_day_only(),
        }
    }

    fn walk(&self) -> (Option<i64>, u64) {
        let (mut at, mut last, mut count) = (self.earliest, None, 0u64);
        if self.fields.never() {
            return (None, 0);
        }
        loop {
            if last.is_some() && !self.one_by_one {
                match self.arithmetic_step(at) {
                    Some(Step::Many {
                        count: more,
                        last: run,
                    }) => {
                        count += more;
                        (at, last) = (run, Some(run));
                        continue;
                    }
                    Some(Step::Done) => break,
                    None => {}
                }
            }
            match next_spec(&self.fields, self.zone, at) {
                Some(run) if run <= self.now => {
                    count += 1;
                    (at, last) = (run, Some(run));
                }
                _ => break,
            }
        }
        (last, count)
    }

    /// Counts runs after the run `run` by arithmetic, when no offset change can affect them; `None` when
    /// the next link must be followed with the real search.
    fn arithmetic_step(&self, run: i64) -> Option<Step> {
        let zone_offset = self.zone.offset_at(run + 1);
        if zone_offset % 60 != 0 {
            return None;
        }
        let offset = i64::from(zone_offset);
        let (lo, hi) = self.transitions.segment(run + 1);
        if run < lo || !self.fields.matches(&Civil::from_wall(run + offset)) {
            return None;
        }
        // Every link from a run `q` looks at times within `margin` of `[q, next(q)]`.
        if run - self.margin >= lo {
            let limit = self.now.min(hi - 1 - self.margin);
            if limit > run {
                let count = fixed::count_between(&self.fields, run + offset, limit + offset);
                if count > 0 {
                    let last =
                        fixed::last_at_or_before(&self.fields, limit + offset, run + offset)?;
                    return Some(Step::Many {
                        count,
                        last: last - offset,
                    });
                }
            }
        }
        // A single link: without a day or month to skip it only looks at `[run, next]`.
        let last_year = Civil::from_wall(run + 1 + offset).year + 5;
        let next = fixed::next_at_or_after(&self.fields, run + 1 + offset, last_year)? - offset;
        let days_apart = (next + offset).div_euclid(DAY) - (run + offset).div_euclid(DAY);
        let (from, to) = if days_apart <= 1 {
            (run, next)
        } else {
            (run - DAY, next + DAY)
        };
        if from < lo || to >= hi {
            return None;
        }
        Some(if next > self.now {
            Step::Done
        } else {
            Step::Many {
                count: 1,
                last: next,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Walks the chain one `next_after` at a time.
    fn stepped(schedule: &Schedule, earliest: i64, now: i64, local: Zone) -> (Option<i64>, u64) {
        let (mut at, mut last, mut count) = (earliest, None, 0);
        while let Some(run) = schedule.next_after_second(at, local) {
            if run > now {
                break;
            }
            (at, last, count) = (run, Some(run), count + 1);
        }
        (last, count)
    }

    fn instant(text: &str) -> i64 {
        text.parse::<DateTime<Utc>>().unwrap().timestamp()
    }

    #[test]
    fn agrees_with_stepping_across_daylight_saving() {
        let zones = [
            Zone::UTC,
            Zone::Named(chrono_tz::America::New_York),
            Zone::Named(chrono_tz::Europe::Berlin),
            Zone::Named(chrono_tz::Australia::Lord_Howe),
            Zone::Named(chrono_tz::America::Sao_Paulo),
        ];
        let schedules = [
            "*/7 * * * *",
            "30 1-3 * * *",
            "0 2 * * *",
            "*/20 * * * 0,6",
            "59 23 * * *",
            "0 0 1 * *",
            "15 */5 * * 1-5",
            "@hourly",
            "@every 97m",
            "*/10 1 * * *",
        ];
        let spans = [
            ("2023-03-01T00:00:00Z", "2023-04-10T00:00:00Z"),
            ("2023-10-20T05:03:07Z", "2023-11-10T00:00:00Z"),
            ("2018-10-30T00:00:00Z", "2018-11-06T00:00:00Z"),
            ("2024-03-29T00:00:00Z", "2024-04-09T12:00:00Z"),
        ];
        for zone in zones {
            for text in schedules {
                let schedule = Schedule::parse(text).unwrap();
                for (from, to) in spans {
                    let (earliest, now) = (instant(from), instant(to));
                    assert_eq!(
                        missed_seconds(&schedule, earliest, now, zone),
                        stepped(&schedule, earliest, now, zone),
                        "{text} in {zone} from {from} to {to}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_year_of_minutes() {
        let schedule = Schedule::parse("* * * * *").unwrap();
        let earliest = instant("2023-01-01T00:00:00Z");
        let now = instant("2024-01-01T00:00:00Z");
        assert_eq!(
            missed_seconds(&schedule, earliest, now, Zone::UTC),
            (Some(now), 365 * 24 * 60)
        );
        // New York loses an hour in March and gets it back in November.
        let new_york = Zone::Named(chrono_tz::America::New_York);
        assert_eq!(
            missed_seconds(&schedule, earliest, now, new_york),
            (Some(now), 365 * 24 * 60)
        );
        // Wall-clock hours fire once per wall time: the repeated hour of November fires twice.
        let hourly = Schedule::parse("0 * * * *").unwrap();
        assert_eq!(
            missed_seconds(&hourly, earliest, now, new_york).1,
            365 * 24 - 1 + 1
        );
    }
}
