//! robfig/cron v3's search for the next firing time, step for step, in a real time zone.
//!
//! The search moves a time `t` forward one field at a time, coarsest first: month, day, hour, minute,
//! second. A field that does not match first resets `t` to the start of its unit (once per search: later
//! fields keep the position reached), then steps it one unit at a time; stepping past the end of the next
//! larger unit (into January, to the 1st, to hour 0, minute 0, second 0) starts the checks again from the
//! month. Months and days are stepped on the calendar (Go's `AddDate`, which resolves the new wall time with
//! `time.Date`); hours, minutes and seconds are stepped in absolute time (`Add`). A day step that does not
//! land on midnight (because midnight did not exist that day) is pulled to the nearest midnight by adding
//! `24 - hour` hours after noon or subtracting `hour` hours before. The minute reset truncates absolute time.
//!
//! This is what makes daylight saving behave as it does: a wall time that does not exist is never reached
//! (the hour after 01:59 is 03:00), a wall time that happens twice is reached twice (01:59 EDT plus a minute
//! is 01:00 EST, which starts the checks again), and a zone whose clocks jump by half an hour can fire at
//! an hour the schedule does not name (01:59 plus a minute is 02:30 in Lord Howe, with no wrap).
//!
//! The search gives up when a restart finds `t` past the end of the year five years after it started.

use super::fields::Fields;
use super::zone::Zone;

/// The next firing time strictly after the whole second `after` (Unix seconds), or `None`.
pub(crate) fn next_after(fields: &Fields, zone: Zone, after: i64) -> Option<i64> {
    let mut t = after + 1;
    let mut moved = false;
    let last_year = zone.civil(t).year + 5;
    'restart: loop {
        let mut now = zone.civil(t);
        if now.year > last_year {
            return None;
        }
        while !fields.month_matches(now.month) {
            if !moved {
                moved = true;
                t = zone.resolve(wall(now.year, now.month, 1, 0, 0, 0));
            }
            t = add_months(zone, t, 1);
            now = zone.civil(t);
            if now.month == 1 {
                continue 'restart;
            }
        }
        while !fields.day_matches(now.day, now.weekday) {
            if !moved {
                moved = true;
                t = zone.resolve(wall(now.year, now.month, now.day, 0, 0, 0));
            }
            t = add_days(zone, t, 1);
            now = zone.civil(t);
            if now.hour != 0 {
                let hour = i64::from(now.hour);
                t += if hour > 12 { 24 - hour } else { -hour } * 3600;
                now = zone.civil(t);
            }
            if now.day == 1 {
                continue 'restart;
            }
        }
        while fields.hour >> now.hour & 1 == 0 {
            if !moved {
                moved = true;
                t = zone.resolve(wall(now.year, now.month, now.day, now.hour, 0, 0));
            }
            t += 3600;
            now = zone.civil(t);
            if now.hour == 0 {
                continue 'restart;
            }
        }
        while fields.minute >> now.minute & 1 == 0 {
            if !moved {
                moved = true;
                t -= t.rem_euclid(60);
            }
            t += 60;
            now = zone.civil(t);
            if now.minute == 0 {
                continue 'restart;
            }
        }
        // The standard parser allows only second 0.
        while now.second != 0 {
            moved = true;
            t += 1;
            now = zone.civil(t);
            if now.second == 0 {
                continue 'restart;
            }
        }
        return Some(t);
    }
}

fn wall(year: i64, month: u32, day: u32, hour: u32, minute: u32, second: u32) -> i64 {
    super::civil::wall_from_fields(
        year,
        i64::from(month),
        i64::from(day),
        i64::from(hour),
        i64::from(minute),
        i64::from(second),
    )
}

/// Go's `t.AddDate(0, months, 0)`: the same wall clock `months` later, resolved by `time.Date`.
fn add_months(zone: Zone, t: i64, months: i64) -> i64 {
    let now = zone.civil(t);
    zone.resolve(super::civil::wall_from_fields(
        now.year,
        i64::from(now.month) + months,
        i64::from(now.day),
        i64::from(now.hour),
        i64::from(now.minute),
        i64::from(now.second),
    ))
}

/// Go's `t.AddDate(0, 0, days)`.
fn add_days(zone: Zone, t: i64, days: i64) -> i64 {
    let now = zone.civil(t);
    zone.resolve(super::civil::wall_from_fields(
        now.year,
        i64::from(now.month),
        i64::from(now.day) + days,
        i64::from(now.hour),
        i64::from(now.minute),
        i64::from(now.second),
    ))
}
